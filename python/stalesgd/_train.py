"""stalesgd.train: one run with the C++ engine, written as `stalesgd train --out DIR` writes it
and returned as a Result of DataFrames (docs/python.md)."""

import hashlib
import os
import shutil
import sys
import tempfile

from . import _options
from ._errors import Error, core
from ._load import read_run
from ._progress import Progress


def _progress_wanted(progress):
    if progress is not None:
        return bool(progress)
    # A terminal or a notebook shows it; a script's redirected stderr would fill with lines.
    return "ipykernel" in sys.modules or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


def _run_toml(folder):
    """The identity of folder/run.toml, which a run writes anew when it starts or resumes."""
    try:
        st = os.stat(os.path.join(folder, "run.toml"))
        return st.st_ino, st.st_mtime_ns, st.st_size
    except OSError:
        return None


class _RunFiles:
    """Files a run reads that the call makes (a scripted module, a trace), written into the
    run's folder under content-addressed names, model-<digest>.pt, so that the path summary.json
    and the checkpoint record lasts with the run and a second call with the same content finds
    the same file. undo() removes what this call created, if the run did not start."""

    def __init__(self, folder, key, may_create):
        self.folder = os.path.realpath(folder)
        self.key = key  # out or resume, for messages
        self.may_create = may_create  # resume into a missing folder: C++ refuses it, nothing made
        self.started = _run_toml(self.folder)
        self.created = []  # folders and files, in the order made

    def put(self, stem, suffix, content, digest):
        """The absolute path of folder/stem-<digest's first 12>.suffix holding `content`."""
        path = os.path.join(self.folder, f"{stem}-{digest[:12]}{suffix}")
        if os.path.exists(path) or not self.may_create:
            return path  # the same name holds the same content
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            self._make(self.folder)
            # Written whole, synced, then renamed: a crash leaves the file or none.
            with open(tmp, "wb") as f:
                f.write(content)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise Error(f"{self.key}: cannot write {path}: {e.strerror or e}; give a writable "
                        "folder") from None
        self.created.append(path)
        return path

    def _make(self, folder):
        if os.path.isdir(folder):
            return
        self._make(os.path.dirname(folder))
        os.mkdir(folder)
        self.created.append(folder)

    def undo(self):
        """Removes the files and folders this call made, unless the run started (a run.toml
        written since): then they are the run's."""
        if _run_toml(self.folder) != self.started:
            return
        for path in reversed(self.created):
            try:
                (os.rmdir if os.path.isdir(path) else os.remove)(path)
            except OSError:
                pass  # a folder the refused run left a file in (its lock) stays


def train(config=None, /, *, data=None, progress=None, **options):
    """Trains one run and returns its Result (updates, gradients, evals, workers, summary).

    Options are the option table's keys (stalesgd train --set key=value, race files): e.g.
    rule="k-async", k=2, workers=4, delay="exp:mean=10ms", clock="virtual", time="5s".
    config: a dict of them, besides or instead of keyword arguments. out="DIR": the run's folder
    (kept), as `train --out`; without it the run goes to a temporary folder, removed once read.
    resume="DIR": continues the run a checkpoint there holds (checkpoint_every), with its own
    options, as `train --resume DIR`; options given beside it must agree with the run's.
    model: a model spec as --model takes it, or a torch.nn.Module (scripted into TorchScript,
    saved in the run's folder as model-<digest>.pt).
    delay: a delay spec, or per-worker arrays of durations in seconds (a trace, replayed; saved
    in the run's folder as delays-<digest>.csv).
    data: (x_train, y_train, x_test, y_test) NumPy arrays or a dict of them, instead of dataset.
    progress: a bar while it runs (default: on a terminal or in a notebook).
    Raises stalesgd.Error with the CLI's one-line message for a bad option; KeyboardInterrupt
    after Ctrl-C has stopped the run and its outputs are written.
    """
    opts = _options.merged(config, options, "train")
    for key, what in (("out", "a folder"), ("resume", "a folder"), ("save_model", "a file")):
        if key in opts and not isinstance(opts[key], (str, os.PathLike)):
            raise Error(f"train({key}={opts[key]!r}): a {type(opts[key]).__name__} is no path; "
                        f"give {what}'s path")
    _core = core()
    cleanup = []
    resume = opts.get("resume")
    kept = "out" in opts or resume is not None
    if not kept:
        tmp = tempfile.mkdtemp(prefix="stalesgd-run-")
        cleanup.append(tmp)
        opts["out"] = os.path.join(tmp, "run")
    # Kept: the run's folder; else beside the temporary run folder, removed with it.
    if resume is not None:
        folder = _options.text("resume", resume)
        files = _RunFiles(folder, "resume", may_create=os.path.isdir(folder))
    elif kept:
        files = _RunFiles(_options.text("out", opts["out"]), "out", may_create=True)
    else:
        files = _RunFiles(cleanup[0], "out", may_create=True)
    try:
        if "model" in opts and not isinstance(opts["model"], (str, os.PathLike)):
            from ._torch import script_module
            content, digest = script_module(opts["model"])
            opts["model"] = "torchscript:" + files.put("model", ".pt", content, digest)
        if "delay" in opts and not isinstance(opts["delay"], (str, os.PathLike)):
            from ._trace import trace_text
            content = trace_text(opts["delay"]).encode()
            opts["delay"] = "trace:" + files.put("delays", ".csv", content,
                                                 hashlib.sha256(content).hexdigest())
        arrays = None
        if data is not None:
            if "dataset" in opts:
                raise Error("train: data= and dataset= exclude each other; give one")
            from ._data import arrays_of
            arrays = arrays_of(data)
            # A resumed run's data set is the one its checkpoint recorded.
            if resume is None:
                opts["dataset"] = "npz:(numpy arrays)"
        settings = _options.settings(opts)
        command_line = ["stalesgd.train"] + [f"{k}={v}" for k, v in settings]
        bar = Progress() if _progress_wanted(progress) else None
        ended = None
        try:
            ended = _core.train(settings, command_line, arrays, bar)
        finally:
            if bar is not None:
                bar.close(complete=ended is not None and
                          ended["stop_reason"] in ("iterations", "time", "target-error"))
        result = read_run(opts["out"] if "out" in opts else resume, dir_kept=kept)
        result.stop_reason = ended["stop_reason"]
        result.error = ended["error"]
        return result
    except Error:
        # A refusal changes nothing: what this call wrote for the run goes.
        files.undo()
        raise
    finally:
        for path in cleanup:
            shutil.rmtree(path, ignore_errors=True)

"""stalesgd.train: one run with the C++ engine, written as `stalesgd train --out DIR` writes it
and returned as a Result of DataFrames (docs/python.md)."""

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


def train(config=None, /, *, data=None, progress=None, **options):
    """Trains one run and returns its Result (updates, gradients, evals, workers, summary).

    Options are the option table's keys (stalesgd train --set key=value, race files): e.g.
    rule="k-async", k=2, workers=4, delay="exp:mean=10ms", clock="virtual", time="5s".
    config: a dict of them, besides or instead of keyword arguments. out="DIR": the run's folder
    (kept), as `train --out`; without it the run goes to a temporary folder, removed once read.
    resume="DIR": continues the run a checkpoint there holds (checkpoint_every), with its own
    options, as `train --resume DIR`; options given beside it must agree with the run's.
    model: a model spec as --model takes it, or a torch.nn.Module (scripted into TorchScript).
    delay: a delay spec, or per-worker arrays of durations in seconds (a trace, replayed).
    data: (x_train, y_train, x_test, y_test) NumPy arrays or a dict of them, instead of dataset.
    progress: a bar while it runs (default: on a terminal or in a notebook).
    Raises stalesgd.Error with the CLI's one-line message for a bad option; KeyboardInterrupt
    after Ctrl-C has stopped the run and its outputs are written.
    """
    opts = _options.merged(config, options, "train")
    _core = core()
    cleanup = []
    try:
        if "model" in opts and not isinstance(opts["model"], (str, os.PathLike)):
            from ._torch import script_module
            path, tmp = script_module(opts["model"], data)
            cleanup.append(tmp)
            opts["model"] = f"torchscript:{path}"
        if "delay" in opts and not isinstance(opts["delay"], (str, os.PathLike)):
            from ._trace import trace_file
            opts["delay"], tmp = trace_file(opts["delay"])
            cleanup.append(tmp)
        arrays = None
        if data is not None:
            if "dataset" in opts:
                raise Error("train: data= and dataset= exclude each other; give one")
            from ._data import arrays_of
            arrays = arrays_of(data)
            # A resumed run's data set is the one its checkpoint recorded.
            if "resume" not in opts:
                opts["dataset"] = "npz:(numpy arrays)"
        resume = opts.get("resume")
        kept = "out" in opts or resume is not None
        if not kept:
            tmp = tempfile.mkdtemp(prefix="stalesgd-run-")
            cleanup.append(tmp)
            opts["out"] = os.path.join(tmp, "run")
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
    finally:
        for path in cleanup:
            shutil.rmtree(path, ignore_errors=True)

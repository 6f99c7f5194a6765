"""stalesgd.race: an experiment's runs with the C++ engine, as `stalesgd race FILE --out DIR`
(docs/experiments.md); a dict is written as the TOML file it stands for first
(docs/python.md, "Races")."""

import json
import math
import numbers
import os
import shutil
import tempfile

from ._errors import Error, core
from ._load import load


def _value(where, v):
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        return ("nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")) if not math.isfinite(f) \
            else repr(f)
    if isinstance(v, (str, os.PathLike)):
        return json.dumps(os.fspath(v))  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(v, (list, tuple)) or type(v).__name__ == "ndarray":
        return "[" + ", ".join(_value(where, x) for x in list(v)) + "]"
    raise Error(f"race: {where} is a {type(v).__name__}; give a number, a string, a bool or "
                "a list")


def _key(k):
    if not isinstance(k, str):
        raise Error(f"race: key {k!r} is not a string")
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def toml_text(experiment, places=None):
    """The experiment file a dict stands for: its keys, then each list of dicts as [[key]]
    tables (`run`, as race files write them) and each dict as a [key] table. places: a list
    that gets, for each line of the text, where in the dict it comes from ("run[1].label")."""
    if not isinstance(experiment, dict):
        raise Error(f"race: the experiment is a {type(experiment).__name__}; give a dict or the "
                    "path of a TOML file")
    lines, where, tables = [], [], []
    for k, v in experiment.items():
        if isinstance(v, dict):
            tables.append((k, [v], False))
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, dict) for x in v):
            tables.append((k, v, True))
        else:
            lines.append(f"{_key(k)} = {_value(k, v)}")
            where.append(str(k))
    for k, items, array in tables:
        for i, item in enumerate(items):
            at = f"{k}[{i}]" if array else str(k)
            lines += ["", f"[[{_key(k)}]]" if array else f"[{_key(k)}]"]
            where += [at, at]
            for kk, vv in item.items():
                lines.append(f"{_key(kk)} = {_value(f'{at}.{kk}', vv)}")
                where.append(f"{at}.{kk}")
    if places is not None:
        places[:] = where
    return "\n".join(lines) + "\n"


def _in_dict_terms(message, file, places):
    """The engine's message about the file a dict was written to, naming the dict's key instead
    of the file's line: "FILE:4: [[run]] needs a label" -> "race: run[0]: [[run]] needs ..."."""
    if message.startswith(file + ":"):
        line, sep, rest = message[len(file) + 1:].partition(":")
        if sep and line.isdigit() and 1 <= int(line) <= len(places):
            return f"race: {places[int(line) - 1]}:{rest}"
    return message.replace(file, "the race's dict")


def race(experiment, /, *, jobs=1, out=None, force=False, resume=False, set=None,
         progress=False, gradients=False):
    """Runs the race and returns it loaded (stalesgd.load): .results (results.csv), .runs,
    .snapshots and .updates as DataFrames, .interrupted.

    experiment: a TOML file's path, or a dict of its keys (runs under "run": a list of dicts;
    trace files in delay specs resolve against the current directory). out="DIR" keeps the
    race's folder, as `race --out`; without it a temporary folder is removed once read.
    set: `race --set` texts or a dict of them, each replacing its key in every run.
    """
    _core = core()
    if isinstance(set, dict):
        from ._options import text
        set = [f"{k}={text(k, v)}" for k, v in set.items()]
    set = list(set or [])
    cleanup = []
    try:
        if isinstance(experiment, (str, os.PathLike)):
            file = os.fspath(experiment)
        else:
            places = []
            source = toml_text(experiment, places)
            # Beside the current directory's files, so that relative trace paths resolve as in
            # Python; the temporary folder when the directory is not writable.
            try:
                fd, file = tempfile.mkstemp(prefix=".stalesgd-race-", suffix=".toml", dir=".")
            except OSError:
                fd, file = tempfile.mkstemp(prefix="stalesgd-race-", suffix=".toml")
            cleanup.append(file)
            with os.fdopen(fd, "w") as f:
                f.write(source)
        kept = out is not None
        if not kept:
            tmp = tempfile.mkdtemp(prefix="stalesgd-race-")
            cleanup.append(tmp)
            out = os.path.join(tmp, "race")
        command_line = ["stalesgd.race", file, "--out", os.fspath(out)]
        try:
            interrupted = _core.race(file, set, os.fspath(out), int(jobs), bool(force),
                                     bool(resume), bool(progress), command_line)
        except Error as e:
            if isinstance(experiment, (str, os.PathLike)):
                raise
            raise Error(_in_dict_terms(str(e), file, places)) from None
        loaded = load(out, updates=True, gradients=gradients)
        loaded.interrupted = interrupted
        if not kept:
            loaded.dir = None
        return loaded
    finally:
        for path in cleanup:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.remove(path)
                except OSError:
                    pass

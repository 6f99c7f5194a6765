"""stalesgd from Python: train, race, predict and load runs with the C++ engine (docs/python.md).

    import stalesgd
    r = stalesgd.train(rule="k-async", k=2, workers=4, delay="exp:mean=10ms",
                       clock="virtual", time="2s", model="softmax")
    r.evals            # a pandas DataFrame, as evals.csv
    stalesgd.race({"model": "softmax", "clock": "virtual", "time": "1s",
                   "run": [{"rule": "sync"}, {"rule": "async"}]}).runs

Options are the option table's keys, as `stalesgd train --set key=value` and race files take
them; a bad one raises stalesgd.Error (a ValueError) with the CLI's one-line message. `load` and
the tables need pandas alone; the rest needs the extension module stalesgd._core.
"""

import os as _os

# The TorchScript plugin beside the extension module (a build tree's or an install's): the
# library looks for it beside the running program, which is python3 here (docs/models.md).
_plugin = _os.path.join(_os.path.dirname(__file__), "libstalesgd_torchscript.so")
if _os.path.isfile(_plugin) and not _os.environ.get("STALESGD_TORCHSCRIPT_PLUGIN"):
    _os.environ["STALESGD_TORCHSCRIPT_PLUGIN"] = _plugin

from ._errors import Error  # noqa: E402
from ._load import LoadError, Race, Result, load, load_race
from ._theory import fit, theory
from ._train import train
from ._race import race

__all__ = ["Error", "LoadError", "Race", "Result", "fit", "load", "load_race", "race", "theory",
           "train"]


def __getattr__(name):
    # The engine's version, without importing the extension module for `load` alone.
    if name == "__version__":
        from . import _core
        return _core.__version__
    raise AttributeError(f"module 'stalesgd' has no attribute '{name}'")

"""stalesgd.Error and the extension module, imported where it is used (docs/python.md)."""


def core():
    """stalesgd._core; a clear ImportError when the package is the source tree's alone."""
    try:
        from . import _core
    except ImportError as e:
        raise ImportError(
            f"stalesgd's extension module stalesgd._core is not importable ({e}); build it "
            "(tools/build.sh, then PYTHONPATH=build/python) or `pip install .` "
            "(docs/python.md)") from e
    return _core


def _error_class():
    # The extension module's own Error when it is there (the C++ side raises it), else a
    # ValueError of the same name, so that `load` works without the engine.
    try:
        from . import _core
        return _core.Error
    except ImportError:
        class Error(ValueError):
            """A bad option, value, array or folder: the CLI's one-line message."""
        return Error


Error = _error_class()
Error.__module__ = "stalesgd"

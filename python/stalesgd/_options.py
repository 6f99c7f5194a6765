"""Python values as the option texts `stalesgd train --set key=value` takes (docs/python.md).

The C++ side reads each text with the option table, so values and messages are the CLI's; only
what has no text at all (a dict, an object) is refused here.
"""

import numbers
import os

from ._errors import Error


def text(key, value):
    """The --set text of one value: 4 -> "4", 0.1 -> "0.1", True -> "true", [256, 128] ->
    "[256,128]" (a list key's value; any other key's list is a sweep, which train refuses)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return "[" + ",".join(text(key, v) for v in list(value)) + "]"
    raise Error(f"--set {key}=...: a {type(value).__name__} is no option value; give a number, "
                "a string, a bool or a list")


def settings(options):
    """[(key, text)] of a dict of options, in its order."""
    out = []
    for key, value in options.items():
        if not isinstance(key, str):
            raise Error(f"option key {key!r} is not a string; give keys as the option table "
                        "names them, e.g. lr_rule")
        out.append((key, text(key, value)))
    return out


def merged(config, options, what):
    """config (a dict, or None) and keyword options, a key in both refused."""
    if config is None:
        return dict(options)
    if not isinstance(config, dict):
        raise Error(f"{what}: the config is a {type(config).__name__}; give a dict of options "
                    "or keyword arguments")
    both = sorted(set(config) & set(options))
    if both:
        raise Error(f"--set {both[0]}=...: {both[0]} is given twice; give it once")
    return {**config, **options}

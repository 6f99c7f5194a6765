"""A delay profile given as per-worker arrays of durations (seconds): written as the trace file
`trace:PATH` replays, one column per worker, one row per minibatch (docs/stragglers.md, "Trace
files"; docs/python.md)."""

import math

from ._errors import Error


def trace_text(delays):
    """The trace file's text: a header naming the workers, then one row per minibatch."""
    try:
        import numpy as np
        columns = [np.asarray(c, dtype=np.float64).ravel() for c in
                   (delays.T if isinstance(delays, np.ndarray) and delays.ndim == 2 else delays)]
    except (TypeError, ValueError) as e:
        raise Error(f"delay: per-worker durations in seconds, as a list of arrays or a 2-D array "
                    f"(minibatches x workers), not {type(delays).__name__} ({e})") from None
    if not columns or any(len(c) == 0 for c in columns):
        raise Error("delay: give at least one duration for each worker")
    if len({len(c) for c in columns}) != 1:
        raise Error(f"delay: the workers' arrays have {sorted({len(c) for c in columns})} "
                    "durations; give each worker as many (a trace's rows)")
    for w, c in enumerate(columns):
        bad = [v for v in c if not math.isfinite(v) or v < 0]
        if bad:
            raise Error(f"delay: worker {w}'s durations hold {bad[0]!r}; give seconds >= 0")
    rows = [",".join(f"w{w}[s]" for w in range(len(columns)))]
    rows += [",".join(repr(float(v)) for v in row) for row in zip(*columns)]
    return "\n".join(rows) + "\n"

"""stalesgd.theory: the runtime theory's expected seconds per iteration for a run's options,
the prediction a run's summary.json records and `stalesgd theory` prints; with error=True the
error bounds at wallclock budgets, as `stalesgd theory --error --json` prints them
(docs/theory.md)."""

import numbers

from . import _options
from ._errors import Error, core

# theory(error=True)'s own keywords, with their defaults (`theory --error`'s flags).
_ERROR_ONLY = {"budgets": None, "constants_samples": 0, "optimum_epochs": 30, "p0": None,
               "gamma": None, "data": None}


def theory(config=None, /, *, samples=20000, error=False, **options):
    """{"seconds_per_iteration", "method", "formula", "upper_bound", "monte_carlo"} for these run options
    (rule, k, workers, delay, ...), or None where the theory has no value (sequential runs,
    delays without a positive mean). samples: the Monte Carlo's iterations where no closed
    form is exact.

    error=True: the predicted excess loss E[F(w)] - F* at wallclock budgets, as `stalesgd
    theory --error --json` prints it: {"constants": {...}, "rules": [one per K], "budgets":
    [{"seconds", "errors", "best_k"}]} (docs/theory.md, "Error"). The rule is k-sync and K
    is swept over 1, 2, 4, ..., P unless rule= or k= is given; model="softmax" with l2 > 0.
    Its own keywords: budgets (seconds, or durations such as "10s"), constants_samples,
    optimum_epochs, p0, gamma, and data= (NumPy arrays, as train takes them).
    """
    own = {k: options.pop(k) for k in list(options) if k in _ERROR_ONLY}
    samples = _count("samples", samples)
    for key in ("constants_samples", "optimum_epochs"):
        if key in own:
            own[key] = _count(key, own[key], 2**31 - 1 if key == "optimum_epochs" else 2**63 - 1)
    for key in ("p0", "gamma"):
        if own.get(key) is not None and not _is_number(own[key]):
            raise Error(f"theory({key}={own[key]!r}): give a number")
    if error:
        return _error(config, samples, {**_ERROR_ONLY, **own}, options)
    if own:
        first = next(iter(own))
        raise Error(f"theory: {first}= belongs to the error bounds; give error=True with it")
    opts = _options.merged(config, options, "theory")
    # A run needs a budget to be valid; the prediction does not depend on it.
    if not {"iterations", "time", "target_error"} & set(opts):
        opts["iterations"] = 1
    return core().predict_runtime(_options.settings(opts), samples)


def fit(source):
    """The delay families fitted to measured minibatch durations, as `stalesgd theory --fit`
    fits them (docs/theory.md, "Fitted delays"): {"n", "mean_s", ..., "families": [...],
    "chosen", "spec"}; theory(delay=fit(...)["spec"], ...) predicts from the fit.

    source: a run folder (its gradients.csv's duration_s), a Result, or durations in seconds.
    """
    import os

    if isinstance(source, (str, os.PathLike)):
        durations = _durations_of(os.path.join(os.fspath(source), "gradients.csv"))
    elif hasattr(source, "gradients"):
        durations = source.gradients["duration_s"].tolist()
    else:
        try:
            durations = [float(v) for v in source]
        except (TypeError, ValueError) as e:
            from ._errors import Error
            raise Error(f"fit: give a run folder, a Result or durations in seconds ({e})") \
                from None
    return core().fit_delays(durations)


def _durations_of(path):
    # Python's float() reads the text exactly as the CLI's strtod does.
    import csv

    from ._errors import Error
    try:
        with open(path, newline="") as f:
            rows = csv.reader(f)
            header = next(rows, [])
            if "duration_s" not in header:
                raise Error(f"{path} has no duration_s column; give a run folder written by "
                            "stalesgd train")
            column = header.index("duration_s")
            return [float(row[column]) for row in rows]
    except OSError as e:
        raise Error(f"cannot read {path} ({e.strerror}); give a run folder written by "
                    "stalesgd train") from None
    except (ValueError, IndexError):
        raise Error(f"{path} is damaged; give a run folder written by stalesgd train") from None


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _count(key, v, most=2**63 - 1):
    """A whole number from 0 to `most` for `key` (the engine's integer), else one line."""
    if not isinstance(v, numbers.Integral) or isinstance(v, bool) or not 0 <= v <= most:
        raise Error(f"theory({key}={v!r}): give a whole number from 0 to {most}")
    return int(v)


def _error(config, samples, own, options):
    opts = _options.merged(config, options, "theory")
    arrays = None
    if own["data"] is not None:
        if "dataset" in opts:
            raise Error("theory: data= and dataset= exclude each other; give one")
        from ._data import arrays_of
        arrays = arrays_of(own["data"])
    budgets = own["budgets"]
    if budgets is None:
        budgets = []
    elif isinstance(budgets, (str, numbers.Real)):
        budgets = [budgets]
    elif not isinstance(budgets, (list, tuple)) and type(budgets).__name__ != "ndarray":
        raise Error(f"budgets: a {type(budgets).__name__} is no list of budgets; give seconds or "
                    "durations like '10s', or a list of them")
    texts = []
    for b in budgets:
        if isinstance(b, numbers.Real) and not isinstance(b, bool):
            texts.append(f"{float(b)!r}s")
        elif isinstance(b, str):
            texts.append(b)
        else:
            raise Error(f"budgets: a {type(b).__name__} is no budget; give seconds or durations "
                        "like '10s'")
    p0, gamma = (None if own[k] is None else float(own[k]) for k in ("p0", "gamma"))
    return core().predict_errors(_options.settings(opts), arrays, texts, samples,
                                 own["constants_samples"], own["optimum_epochs"], p0, gamma)

"""stalesgd.theory: the runtime theory's expected seconds per iteration for a run's options,
the prediction a run's summary.json records and `stalesgd theory` prints (docs/theory.md)."""

from . import _options
from ._errors import core


def theory(config=None, /, *, samples=20000, **options):
    """{"seconds_per_iteration", "method", "formula", "upper_bound", "monte_carlo"} for these run options
    (rule, k, workers, delay, ...), or None where the theory has no value (sequential runs,
    delays without a positive mean). samples: the Monte Carlo's iterations where no closed
    form is exact."""
    opts = _options.merged(config, options, "theory")
    # A run needs a budget to be valid; the prediction does not depend on it.
    if not {"iterations", "time", "target_error"} & set(opts):
        opts["iterations"] = 1
    return core().predict_runtime(_options.settings(opts), int(samples))


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

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

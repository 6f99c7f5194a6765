#!/usr/bin/python3
"""How fast a run's test error gets to a target, four ways, from its snapshots alone (times t,
errors e, in order; numpy only). tools/paper_runs.py applies them to a race's runs and
tools/race_metrics_test.py pins them on hand-made curves.

  first_crossing    the first snapshot at or under the target (the race's time_to_target_s):
                    one lucky snapshot counts, so a curve that dips once and rises wins it
  smoothed_crossing the first `window` consecutive snapshots whose mean is at or under the
                    target, timed at the last of them (a trailing moving average: it uses no
                    snapshot from after the time it reports)
  stays_under       the first snapshot from which every later one is at or under the target;
                    none if the last is above it (so it depends on how long the run lasted)
  error_auc         the area under the error-vs-time curve over [0, budget], trapezoids
                    between snapshots; none unless the snapshots cover 0 and the budget

Each returns a float, or None where the run has no such time or area (a NaN error, as a
diverged run logs, is above every target and makes the area missing).
"""

import numpy as np


def first_crossing(t, e, target):
    hit = np.nonzero(np.asarray(e, dtype=float) <= target)[0]
    return float(np.asarray(t, dtype=float)[hit[0]]) if hit.size else None


def smoothed_crossing(t, e, target, window=3):
    e = np.asarray(e, dtype=float)
    if e.size < window:
        return None
    means = np.convolve(e, np.ones(window) / window, mode="valid")
    hit = np.nonzero(means <= target)[0]
    return float(np.asarray(t, dtype=float)[hit[0] + window - 1]) if hit.size else None


def stays_under(t, e, target):
    e = np.asarray(e, dtype=float)
    above = np.nonzero(~(e <= target))[0]  # NaN counts as above
    if e.size == 0 or (above.size and above[-1] == e.size - 1):
        return None
    return float(np.asarray(t, dtype=float)[above[-1] + 1 if above.size else 0])


def error_auc(t, e, budget):
    t, e = np.asarray(t, dtype=float), np.asarray(e, dtype=float)
    if t.size == 0 or t[0] > 0 or t[-1] < budget or not np.all(np.isfinite(e[t <= budget])):
        return None
    inside = t < budget
    x = np.append(t[inside], budget)
    y = np.append(e[inside], np.interp(budget, t, e))
    area = float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2))
    return area if np.isfinite(area) else None


#!/usr/bin/python3
"""tools/race_metrics.py on hand-made curves: a curve that dips under the target once and rises
is reached by the first crossing but never stays under; a noisy curve's smoothed crossing comes
after its first; the area under the error is the trapezoids' sum over [0, budget].
usage: /usr/bin/python3 tests/tools/race_metrics_test.py   (from anywhere; needs numpy)"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from race_metrics import error_auc, first_crossing, smoothed_crossing, stays_under  # noqa: E402

FAILURES = []


def check(what, got, want):
    same = (got is None and want is None) or (
        got is not None and want is not None and math.isclose(got, want, abs_tol=1e-12))
    if not same:
        FAILURES.append(f"{what}: got {got!r}, want {want!r}")


T = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2]
TARGET = 0.12

# Dips once to 0.11 at 0.4 s, then rises and ends above the target.
dip = [0.9, 0.3, 0.11, 0.2, 0.15, 0.14, 0.13]
check("dip: first crossing", first_crossing(T, dip, TARGET), 0.4)
check("dip: stays under", stays_under(T, dip, TARGET), None)
check("dip: smoothed crossing", smoothed_crossing(T, dip, TARGET), None)

# Noisy around the target: under at 0.4 s, above at 0.6 s, under from 0.8 s on.
noisy = [0.9, 0.2, 0.115, 0.14, 0.11, 0.10, 0.11]
check("noisy: first crossing", first_crossing(T, noisy, TARGET), 0.4)
# Three snapshots' means: (0.115 + 0.14 + 0.11) / 3 = 0.1217 > 0.12 at 0.8 s,
# (0.14 + 0.11 + 0.10) / 3 = 0.1167 at 1.0 s: later than the first crossing.
check("noisy: smoothed crossing", smoothed_crossing(T, noisy, TARGET), 1.0)
check("noisy: stays under", stays_under(T, noisy, TARGET), 0.8)

# Exactly at the target counts as under; a curve under from its first snapshot stays from 0.
check("at the target: stays", stays_under([0.0, 1.0], [0.12, 0.12], TARGET), 0.0)
check("at the target: first", first_crossing([0.0, 1.0], [0.5, 0.12], TARGET), 1.0)
# A NaN (a diverged run) is above every target.
nan = float("nan")
check("NaN last: stays", stays_under([0.0, 1.0, 2.0], [0.1, 0.1, nan], TARGET), None)
check("NaN then under: stays", stays_under([0.0, 1.0, 2.0], [nan, 0.1, 0.1], TARGET), 1.0)
check("no snapshots: stays", stays_under([], [], TARGET), None)
check("too few for the window", smoothed_crossing([0.0, 1.0], [0.1, 0.1], TARGET), None)

# The area: trapezoids; 1 -> 0 over [0, 1] then 0 over [1, 2] is 0.5.
check("area: trapezoids", error_auc([0.0, 1.0, 2.0], [1.0, 0.0, 0.0], 2.0), 0.5)
# A budget between snapshots ends at the interpolated error: 1 -> 0.5 over [0, 1] is 0.75.
check("area: budget between snapshots", error_auc([0.0, 2.0], [1.0, 0.0], 1.0), 0.75)
# Snapshots past the budget do not count.
check("area: past the budget", error_auc([0.0, 1.0, 2.0], [0.5, 0.5, 9.0], 1.0), 0.5)
# Not covered: a first snapshot after 0, a last before the budget, a NaN inside.
check("area: starts late", error_auc([0.2, 2.0], [0.5, 0.5], 2.0), None)
check("area: ends early", error_auc([0.0, 1.0], [0.5, 0.5], 2.0), None)
check("area: NaN inside", error_auc([0.0, 1.0, 2.0], [0.5, nan, 0.5], 2.0), None)
# The dip's area: constant pieces between snapshots, summed by hand.
want = 0.2 * sum((a + b) / 2 for a, b in zip(dip, dip[1:]))
check("area: the dip", error_auc(T, dip, 1.2), want)

for line in FAILURES:
    print(f"race_metrics_test: FAIL: {line}", file=sys.stderr)
if FAILURES:
    sys.exit(1)
print("race_metrics_test: ok")

#!/usr/bin/python3
"""Picks each rule's learning rate from a grid race run on a held-out split.

usage: tools/tune_lr.py RACE_DIR... [--metric val_error] [--window 0.25] [--csv FILE]

RACE_DIR is the --out folder of a race whose runs set `holdout` (experiments/tune-*.toml: a
`lr = [...]` sweep over a few rules, several seeds each). For every run the score is the mean of
METRIC (evals.csv; val_error, the held-out samples' error, by default) over the snapshots of the
last WINDOW of its time; a rule's rates are ranked by the seed mean of that score with its 95%
t-interval, and the lowest mean is chosen. A rate where any seed has no score (it diverged or
stopped short of its budget, or a snapshot's error is NaN) cannot be chosen. The test split plays no part.

Prints one line per (rule, rate) and writes them with --csv: run (the rule's label without its
rate and seed), lr, quantity, seeds, reached, mean, ci95_half_width, values, chosen (1 for the
rate chosen), apart_from_next (1 when the chosen rate's interval lies below the next best's, 0
when they overlap: the choice is then by the mean alone) and at_edge (1 when the chosen rate is
the grid's smallest or largest: the grid should be widened past it).
docs/paper/tuned-learning-rates.md. Needs Debian's python3-numpy and python3-matplotlib.
"""

import argparse
import re
import sys
from pathlib import Path

import numpy as np

from paper_runs import UsageError, load_runs, shown, summary_row, write_csv

FULL_RUN = ("time", "iterations", "target-error")
LR_PART = re.compile(r"\s*\(lr=[^)]*\)|(?<=\()lr=[^,)]*,\s*|,\s*lr=[^,)]*(?=\))")


def window_mean(run, metric, window):
    """The mean of `metric` over the snapshots in the last `window` of the run's time, or None
    when it has none, any of them is not finite, or the run did not run its budget (diverged,
    lost its workers, was interrupted: its last snapshots would be from before the end)."""
    if run.summary.get("stop_reason") not in FULL_RUN:
        return None
    wall, values = run.series("time", metric)
    if wall.size == 0:
        return None
    last = wall >= (1.0 - window) * wall.max()
    picked = values[last]
    return float(picked.mean()) if picked.size and np.all(np.isfinite(picked)) else None


def tune(race_dirs, metric, window):
    runs = load_runs(race_dirs)
    cells = {}
    for run in runs:
        lr = run.config.get("lr")
        if lr is None:
            raise UsageError(f"{run.dir} has no lr in its summary.json's config")
        if not run.config.get("holdout"):
            raise UsageError(f"{run.label!r} ran without a holdout; tune on held-out samples "
                             "(holdout = N in the race file, or --set holdout=N)")
        cell = LR_PART.sub("", run.group).strip()
        cells.setdefault(cell, {}).setdefault(float(lr), []).append(run)
    rows = []
    for cell, by_lr in cells.items():
        scored = []
        for lr in sorted(by_lr):
            seeds = by_lr[lr]
            mean, half = summary_row(rows, cell, f"{metric}, last {window:g} of the time",
                                     f"lr={lr:g}", [window_mean(r, metric, window) for r in seeds],
                                     lr=lr)
            scored.append((mean, half, lr, rows[-1]))
        candidates = sorted((s for s in scored if s[0] is not None), key=lambda s: s[0])
        for _, _, _, row in scored:
            row["chosen"], row["apart_from_next"], row["at_edge"] = 0, "", ""
        if candidates:
            best = candidates[0]
            best[3]["chosen"] = 1
            best[3]["at_edge"] = int(best[2] in (scored[0][2], scored[-1][2]))
            if len(candidates) > 1:
                nxt = candidates[1]
                apart = (best[1] is not None and nxt[1] is not None
                         and best[0] + best[1] < nxt[0] - nxt[1])
                best[3]["apart_from_next"] = int(apart)
    return rows


def run_tuning(name, doc, argv, tune, line):
    """A tuning tool's main (this one, tools/tune_knobs.py): RACE_DIR..., --metric, --window and
    --csv parsed; tune(race_dirs, metric, window)'s rows printed one line(row) each (None: not
    printed) and written with --csv; a UsageError one line and status 1."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("race_dirs", type=Path, nargs="+", metavar="RACE_DIR")
    parser.add_argument("--metric", default="val_error")
    parser.add_argument("--window", type=float, default=0.25,
                        help="the last fraction of each run's time that is scored")
    parser.add_argument("--csv", type=Path)
    args = parser.parse_args(argv)
    if not 0.0 < args.window <= 1.0:
        parser.error("--window takes a fraction in (0, 1]")
    try:
        rows = tune(args.race_dirs, args.metric, args.window)
        for r in rows:
            if (text := line(r)) is not None:
                print(text)
        if args.csv:
            write_csv(args.csv, rows)
    except UsageError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 1
    return 0


def line(r):
    """One (rule, rate) row as printed."""
    mark = "  <- chosen" if r["chosen"] else ""
    if r["chosen"] and r["apart_from_next"] == 0:
        mark += " (its interval overlaps the next best's)"
    if r["chosen"] and r["at_edge"]:
        mark += " (at the grid's edge: widen it)"
    return (f"{r['run']:<24} lr {r['lr']:<6g} {r['quantity']}: {shown(r['mean'])} "
            f"± {shown(r['ci95_half_width'])} ({r['reached']}/{r['seeds']} seeds){mark}")


def main(argv):
    return run_tuning("tune_lr.py", __doc__, argv, tune, line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

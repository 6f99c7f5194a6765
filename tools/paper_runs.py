#!/usr/bin/python3
"""Race folders as tools/paper_figures.py reads them: runs grouped by seed, their curves, the
provenance line under every figure, and the --csv rows that keep a figure's numbers in docs/data/.

A seed mean is a number only when every seed has a value: a seed that never reached a time,
an iteration or a target makes the mean missing (an empty cell in --csv, "—" when printed),
so no table can quote a mean over the seeds that happened to get there.
"""

import csv
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# Shared with the per-race plots (same directory: python puts the script's folder on sys.path).
from load_race import group_names  # noqa: E402
from plot import mean_ci, to_float  # noqa: E402
from race_metrics import error_auc, first_crossing, smoothed_crossing, stays_under  # noqa: E402


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- reading


def read_rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise UsageError(f"cannot read {path} ({e.strerror}); pass a `stalesgd race --out` DIR")


class Run:
    """One run of a race: its results.csv row, summary.json and (lazily) its CSV files."""

    def __init__(self, race_dir, row):
        self.dir = race_dir / row["slug"]
        self.row = row
        self.label = row["label"]
        self.group = self.label  # load_runs names the group of runs that differ by seed
        self.seed = to_float(row.get("seed"))
        try:
            self.summary = json.loads((self.dir / "summary.json").read_text())
        except (OSError, ValueError):
            self.summary = {}
        self.config = self.summary.get("config", {})
        self._cache = {}

    def value(self, column):
        return to_float(self.row.get(column))

    @property
    def clock(self):
        return self.row.get("clock") or self.config.get("clock", "")

    @property
    def real_host(self):
        """summary.json's provenance.host (cores, the 1-minute load at start and end) of a
        real-clock run; None on the virtual clock, where load does not enter."""
        if self.clock != "real":
            return None
        return self.summary.get("provenance", {}).get("host", {})

    def columns(self, filename, names):
        """Columns of a per-run CSV as float arrays (NaN where empty)."""
        key = (filename, tuple(names))
        if key not in self._cache:
            rows = read_rows(self.dir / filename)
            data = np.array([[to_float(r.get(n)) for n in names] for r in rows], dtype=float)
            self._cache[key] = data.reshape(-1, len(names)).T
        return self._cache[key]

    def time_to(self, target):
        """First snapshot time with test error <= target (as the race's time_to_target_s),
        or None."""
        return first_crossing(*self.series("time", "test_error"), target)

    def time_to_smoothed(self, target, window=3):
        """The smoothed crossing: the time of the last of the first `window` consecutive
        snapshots whose mean test error is <= target, or None. One noisy snapshot under the
        target does not count, as it does for time_to (the first snapshot at or under it)."""
        return smoothed_crossing(*self.series("time", "test_error"), target, window)

    def time_to_stays(self, target):
        """The first snapshot from which the test error stays <= target to the run's end, or
        None (the last snapshot is above it)."""
        return stays_under(*self.series("time", "test_error"), target)

    def error_auc(self, budget):
        """The area under test error against time over [0, budget] (error x seconds), or None
        if the snapshots do not cover it."""
        return error_auc(*self.series("time", "test_error"), budget)

    def series(self, x, metric):
        """(x values, metric values) for x in time|iteration."""
        if metric == "k":
            wall, it, k = self.columns("updates.csv", ["wall_s", "iteration", "n_grads"])
            return (wall if x == "time" else it), k
        if metric == "lr":  # one value per update is too dense to draw: 100 bins of updates
            wall, it, lr = self.columns("updates.csv", ["wall_s", "iteration", "lr"])
            xs = wall if x == "time" else it
            bins = np.array_split(np.arange(xs.size), min(100, max(xs.size, 1)))
            bins = [b for b in bins if b.size]
            return (np.array([xs[b].mean() for b in bins]),
                    np.array([np.nanmean(lr[b]) for b in bins]))
        wall, it, y = self.columns("evals.csv", ["wall_s", "iteration", metric])
        return (wall if x == "time" else it), y


def load_runs(dirs):
    runs = []
    for d in dirs:
        if not (d / "results.csv").is_file():
            raise UsageError(f"{d} has no results.csv; pass the --out DIR of `stalesgd race`")
        runs += [Run(d, row) for row in read_rows(d / "results.csv")]
    if not runs:
        raise UsageError("no runs in " + ", ".join(map(str, dirs)))
    for run, group in zip(runs, group_names([r.label for r in runs], [r.config for r in runs])):
        run.group = group
    return runs


def grouped(runs, only=None):
    """[(group label, [runs])] in first-seen order, or in the order of `only`."""
    groups = {}
    for r in runs:
        groups.setdefault(r.group, []).append(r)
    if only:
        missing = [g for g in only if g not in groups]
        if missing:
            raise UsageError(f"no run labelled {missing[0]!r}; labels: " + ", ".join(groups))
        return [(g, groups[g]) for g in only]
    return list(groups.items())


def colors(n):
    tab10 = [c for i, c in enumerate(plt.get_cmap("tab10").colors) if i != 7]
    return [tab10[i % len(tab10)] for i in range(n)]


def clock_word(runs):
    clocks = {r.clock for r in runs}
    return "virtual seconds" if clocks == {"virtual"} else (
        "wallclock seconds" if clocks == {"real"} else "seconds")


def provenance(runs):
    """What every figure names under its title: the clock, the seeds and, for the real clock,
    the machine's load (summary.json's 1-minute load average at each run's start and end)."""
    groups = grouped(runs)
    counts = sorted({len(members) for _, members in groups})
    seeds = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    text = [{"virtual": "virtual clock (load does not enter)", "real": "real clock"}.get(
        c, f"{c} clock") for c in sorted({r.clock for r in runs})]
    if len(groups) > 1:
        cells = [tuple(sorted(r.seed or 0 for r in members)) for _, members in groups]
        shared = len(set(cells)) < len(cells)
        text.append(f"{seeds} seeds per run, " + ("runs share seeds" if shared else
                                                   "independent seeds per run"))
    else:
        text.append(f"{seeds} seed{'s' if seeds != '1' else ''}")
    hosts = [r.real_host for r in runs if r.real_host is not None]
    loads = [h.get(k) for h in hosts for k in ("load_1min_start", "load_1min_end")]
    loads = [v for v in loads if isinstance(v, (int, float))]
    if loads:
        cores = {h.get("cores") for h in hosts} - {None}
        on = f" on {cores.pop()} cores" if len(cores) == 1 else ""
        text.append(f"load (1-min average) {min(loads):.1f}-{max(loads):.1f}{on}")
    elif hosts:
        text.append("load not recorded")
    return ", ".join(text)


def load_rows(groups, rows):
    """--csv rows of the 1-minute load at the start and end of each real-clock run."""
    for label, members in groups:
        hosts = [r.real_host for r in members if r.real_host is not None]
        for key in ("load_1min_start", "load_1min_end") if hosts else ():
            summary_row(rows, label, key, "", [to_float(h.get(key)) for h in hosts])


def heading(title, runs):
    """The figure's title over its provenance line, which is also printed."""
    line = provenance(runs)
    print(line)
    return f"{title}\n{line}" if title else line


def save(fig, out, dpi):
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    print(out)



def value_at(x, y, at):
    """y at x = at, linear between snapshots; NaN before the first or past the last snapshot
    (np.interp alone would repeat the run's last value at times it never reached)."""
    keep = np.isfinite(x) & np.isfinite(y)
    order = np.argsort(x[keep], kind="stable")
    x, y = x[keep][order], y[keep][order]
    if x.size == 0 or not x[0] <= at <= x[-1]:
        return float("nan")
    return float(np.interp(at, x, y))


def summary_row(rows, run, quantity, at, values, **extra):
    """Appends a --csv row: the mean of the seeds' values with its 95% half-width, both empty
    unless every seed has a value (None or NaN: not reached)."""
    values = [None if v is None or not np.isfinite(v) else v for v in values]
    reached = [v for v in values if v is not None]
    mean, half = mean_ci(reached) if len(reached) == len(values) else (None, None)
    rows.append({"run": run, "quantity": quantity, "at": at, "seeds": len(values),
                 "reached": len(reached), "mean": mean, "ci95_half_width": half,
                 "values": ";".join("" if v is None else f"{v:.10g}" for v in values), **extra})
    return mean, half


def shown(value, fmt=".4f"):
    """A printed number, or "—" where it is missing."""
    return "—" if value is None or not np.isfinite(value) else format(value, fmt)


def write_csv(path, rows):
    """The numbers behind a figure, as CSV (columns in the order of the first row)."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    try:
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                                 for k, v in row.items()})
    except OSError as e:
        raise UsageError(f"cannot write {path} ({e.strerror}); pass a writable --csv")
    print(path)


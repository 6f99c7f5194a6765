#!/usr/bin/python3
"""Plots of stalesgd runs: the figures of a race, or of one `stalesgd train --out` run.

usage: tools/plot.py DIR [--out FIG_DIR] [--format png|pdf|svg] [--dpi N] [--title TEXT]
                     [--target-error X] [--report JSON]

DIR is either a race directory (results.csv plus one subfolder per run, named by the
`slug` column), a single run directory (summary.json, evals.csv, ...), or a directory
whose immediate subfolders are run directories. Writes into FIG_DIR (default DIR), in
--format (default png; --dpi, default 150, applies to png):

  error_vs_time       test error against (wallclock or virtual) seconds, a line per run
  error_vs_iteration  test error against server iterations
  loss_vs_time        training loss against seconds
  staleness           histogram of gradient staleness per run, shared x range, mean marked
  time_per_iteration  measured vs predicted seconds per iteration per run, and their ratio

Runs that differ only by seed (the same label without " (seed N)" and the same summary.json
config but for `seed`) are drawn as one: the curves as the mean over the seeds with a shaded
95% confidence band (each seed interpolated linearly onto the union of the seeds' snapshot
times where all of them have data; at each point mean +- t(0.975, n-1) * sd / sqrt(n)), the
time per iteration as the mean with a 95% t-interval, the staleness histogram pooled.

Missing pieces (no gradients, one eval, no theory, missing files) are skipped, never fatal.
Prints the files written, one per line; --report JSON also writes what each figure drew
(per group: its runs and whether a band or an error bar was drawn). Bad DIR: one line on
stderr, exit status 1. Run with /usr/bin/python3 (Debian's python3-matplotlib); see
docs/outputs.md.
"""

import argparse
import csv
import json
import math
import os
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display on build machines or in ctest
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402

# Shares the seed grouping with the pandas loader (same directory: on sys.path as the script's).
from load_race import group_names  # noqa: E402

DPI = 150
FORMATS = ("png", "pdf", "svg")
FIGSIZE = (7.0, 4.5)
WALLCLOCKS = {"real", "sequential"}  # both measure real elapsed time
THEORY_MARKERS = {"closed form": "D", "monte carlo": "s"}
THEORY_SYMBOLS = {"closed form": "◇", "monte carlo": "□"}  # the markers, in a subtitle
FIGURES = ("error_vs_time", "error_vs_iteration", "loss_vs_time", "staleness", "time_per_iteration")

# t(0.975, df) for df = 1..30: the 95% interval of a mean over few seeds needs Student's t,
# not 1.96 (with 3 seeds the half-width is 2.2 times larger). Beyond 30, Cornish-Fisher below.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


class UsageError(Exception):
    """A problem the user can fix; printed as one line `plot.py: error: ...`, exit status 1."""


# ---------------------------------------------------------------- reading


def to_float(text):
    """A finite float from a CSV cell or JSON value, or None (empty, null, nan, garbage)."""
    if text is None or isinstance(text, bool):
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def read_csv(path):
    """Rows of a CSV file as dicts, or None if the file is missing or unreadable."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return None


def read_column(path, name):
    """One column of a CSV file as floats (None where unparsable); [] if missing.

    A plain reader rather than DictReader: gradients.csv of a long run has millions of rows.
    """
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, [])
            if name not in header:
                return []
            index = header.index(name)
            return [to_float(row[index]) if index < len(row) else None for row in reader]
    except (OSError, csv.Error, UnicodeDecodeError):
        return []


def read_json(path):
    """A JSON object, or None if missing or malformed (a crashed run may leave no summary)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def warn(message):
    print(f"plot.py: warning: {message}", file=sys.stderr)


class Run:
    """One training run: its label, colour, folder and whatever files it has.

    Values in the race's results.csv row win over summary.json, since the race wrote them.
    """

    def __init__(self, label, path, row=None):
        self.label = label
        self.path = path  # may be None or missing: a results.csv row without its folder
        self.row = row or {}
        self.color = None
        self.summary = read_json(path / "summary.json") if path else None
        self.summary = self.summary or {}
        self._evals = None
        self._staleness = None

    def config(self, key):
        config = self.summary.get("config")
        return config.get(key) if isinstance(config, dict) else None

    def value(self, column, *summary_keys):
        """A number from the results.csv row, else from summary.json along summary_keys."""
        found = to_float(self.row.get(column))
        if found is not None or not summary_keys:
            return found
        node = self.summary
        for key in summary_keys:
            node = node.get(key) if isinstance(node, dict) else None
        return to_float(node)

    @property
    def clock(self):
        return (self.row.get("clock") or self.config("clock") or "").strip()

    @property
    def target_error(self):
        target = to_float(self.config("target_error"))
        return target if target and target > 0 else None  # 0 means "not set"

    @property
    def predicted_method(self):
        method = (self.row.get("predicted_method") or "").strip()
        if not method:
            theory = self.summary.get("theory")
            method = theory.get("method") if isinstance(theory, dict) else None
        return method or "theory"

    @property
    def evals(self):
        """(wall_s, iteration, train_loss, test_error) as float arrays, NaN where unknown."""
        if self._evals is None:
            rows = read_csv(self.path / "evals.csv") if self.path else None
            columns = ("wall_s", "iteration", "train_loss", "test_error")
            table = [[to_float(r.get(c)) for c in columns] for r in rows or []]
            data = np.array(table, dtype=float).reshape(-1, len(columns))  # None -> nan
            self._evals = dict(zip(columns, data.T))
        return self._evals

    @property
    def staleness(self):
        """Staleness of every applied gradient (gradients.csv), or None if not recorded."""
        if self._staleness is None:
            values = read_column(self.path / "gradients.csv", "staleness") if self.path else []
            values = np.array([v for v in values if v is not None and v >= 0], dtype=float)
            self._staleness = values
        return self._staleness if self._staleness.size else None


class Group:
    """Runs that differ only by seed (one run when there are no seeds), drawn as one."""

    def __init__(self, label, runs):
        self.label = label
        self.runs = runs
        self.color = None

    def __len__(self):
        return len(self.runs)


def group_runs(runs):
    """Groups in the order of their first run (load_race.group_names decides who belongs)."""
    names = group_names([r.label for r in runs], [r.summary.get("config") for r in runs])
    groups = {}
    for name, run in zip(names, runs):
        groups.setdefault(name, Group(name, [])).runs.append(run)
    return list(groups.values())


# ---------------------------------------------------------------- statistics over seeds


def t975(df):
    """Student's t quantile 0.975 with df degrees of freedom (df >= 1)."""
    if df <= len(T975):
        return T975[df - 1]
    z = 1.959964  # Cornish-Fisher expansion around the normal quantile: within 1e-3 of t
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_ci(values):
    """(mean, half-width of its 95% t-interval) of the finite values; half-width None for one."""
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if values.size == 0:
        return None, None
    if values.size == 1:
        return float(values[0]), None
    half = t975(values.size - 1) * values.std(ddof=1) / math.sqrt(values.size)
    return float(values.mean()), float(half)


def seed_band(curves):
    """Mean and 95% half-width over seeds of curves [(x, y)], on a common x grid.

    The grid is the union of the seeds' x values where every seed has data (real-clock
    snapshot times drift between seeds); each seed is interpolated linearly onto it. Returns
    (grid, mean, half-width), or None when the curves do not overlap.
    """
    cleaned = []
    for x, y in curves:
        keep = np.isfinite(x) & np.isfinite(y)
        order = np.argsort(x[keep], kind="stable")
        if order.size:
            cleaned.append((x[keep][order], y[keep][order]))
    if len(cleaned) < 2:
        return None
    lo = max(x[0] for x, _ in cleaned)
    hi = min(x[-1] for x, _ in cleaned)
    if lo > hi:
        return None
    grid = np.unique(np.concatenate([x[(x >= lo) & (x <= hi)] for x, _ in cleaned]))
    ys = np.array([np.interp(grid, x, y) for x, y in cleaned])
    half = t975(len(cleaned) - 1) * ys.std(axis=0, ddof=1) / math.sqrt(len(cleaned))
    return grid, ys.mean(axis=0), half


def is_run_dir(path):
    return (path / "summary.json").is_file()


def discover_runs(directory):
    """The runs of DIR: results.csv rows, DIR itself, or its subfolders with a summary.json."""
    if not directory.exists():
        raise UsageError(f"{directory} does not exist; pass the --out DIR of "
                         "`stalesgd train` or `stalesgd race`")
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory; pass the --out DIR of "
                         "`stalesgd train` or `stalesgd race`")
    results = directory / "results.csv"
    if results.is_file():
        rows = read_csv(results)
        if rows is None:
            raise UsageError(f"cannot read {results}; check the file (re-run the race)")
        runs = [run_from_row(directory, i, row) for i, row in enumerate(rows)]
        if not runs:
            raise UsageError(f"{results} has no rows; re-run `stalesgd race` to fill it")
        return runs
    if is_run_dir(directory):
        return [Run(directory.resolve().name, directory)]
    try:
        subdirs = sorted((p for p in directory.iterdir() if p.is_dir() and is_run_dir(p)),
                         key=natural_key)
    except OSError as e:
        raise UsageError(f"cannot list {directory} ({e.strerror}); check its permissions")
    if not subdirs:
        raise UsageError(f"{directory} has no results.csv, no summary.json and no subfolder "
                         "with a summary.json; pass the --out DIR of `stalesgd train` or "
                         "`stalesgd race`")
    return [Run(p.name, p) for p in subdirs]


def natural_key(path):
    """Sort run-2 before run-10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def run_from_row(directory, index, row):
    slug = (row.get("slug") or "").strip()
    label = (row.get("label") or "").strip() or slug or f"run {index + 1}"
    path = directory / slug if slug else None
    if path is None or not path.is_dir():
        warn(f"no folder for run '{label}' (slug '{slug}'); plotting its results.csv row only")
        path = None
    return Run(label, path, row)


def assign_colors(groups):
    """One colour per group, the same in every figure; no grey (it reads as "missing")."""
    tab10 = plt.get_cmap("tab10").colors
    palette = [c for i, c in enumerate(tab10) if i != 7]
    if len(groups) > len(palette):  # tab20's strong shades first, then the pale ones, no greys
        tab20 = plt.get_cmap("tab20").colors
        palette = [c for i, c in enumerate(tab20) if i not in (14, 15)]
        palette = palette[0::2] + palette[1::2]
    for i, group in enumerate(groups):
        group.color = palette[i % len(palette)]
        for run in group.runs:
            run.color = group.color


# ---------------------------------------------------------------- shared figure helpers


def time_axis_label(runs):
    """'wallclock seconds' or 'virtual seconds' from config.clock; says so if runs mix them."""
    kinds = {"virtual" if r.clock == "virtual" else "wallclock" for r in runs if r.clock}
    if kinds == {"virtual"}:
        return "virtual seconds", False
    if kinds == {"wallclock"}:
        return "wallclock seconds", False
    if not kinds:
        return "seconds", False
    return "seconds (mixed clocks: virtual and wallclock, not comparable)", True


def group_label(group, mixed_clocks=False):
    label = group.label
    clock = group.runs[0].clock
    if mixed_clocks and clock:
        label += f" [{'virtual' if clock == 'virtual' else 'wallclock'}]"
    return label if not label.startswith("_") else " " + label  # matplotlib hides "_..." labels


def seeds_note(groups):
    """The subtitle's account of what a line is, when some group has several seeds."""
    counts = sorted({len(g) for g in groups if len(g) > 1})
    if not counts:
        return ""
    n = "/".join(str(c) for c in counts)
    return f"; lines: mean of {n} seeds, band: 95% confidence interval of the mean (t)"


def use_log_scale(values, min_ratio=5.0):
    """Log scale when values are positive and span a wide range (error tails read better)."""
    values = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if values.size < 2 or values.min() <= 0:
        return False
    return values.max() / values.min() >= min_ratio


def plain_log_axis(axis):
    """Log ticks written as plain numbers (0.05, 0.1, 0.2), denser when the range is short."""
    lo, hi = axis.get_view_interval()
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
    if decades < 1.2:
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    else:
        subs = (1.0, 2.0, 5.0) if decades < 3 else (1.0,)
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def place_legend(ax, n_entries):
    """Inside when few entries; outside on the right when crowded, so no curve is hidden."""
    handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return
    if n_entries <= 4:
        ax.legend(loc="upper right", fontsize=8, framealpha=0.85)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)


def no_data(ax, message):
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes,
            color="0.4", fontsize=10)


def save(fig, out_dir, name, fmt, dpi):
    path = out_dir / f"{name}.{fmt}"
    # Fixed metadata: the same runs give the same PDF and SVG bytes (no creation date).
    metadata = {"png": {}, "pdf": {"CreationDate": None}, "svg": {"Date": None}}[fmt]
    fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
    plt.close(fig)
    return path


def finish_axes(ax, title, subtitle):
    ax.set_title(f"{title}\n{subtitle}", fontsize=11)
    ax.grid(True, which="major", alpha=0.3)


def drawn(group, band):
    """One entry of --report: which runs a group drew and whether its spread was drawn."""
    return {"group": group.label, "runs": [r.label for r in group.runs], "band": bool(band)}


# ---------------------------------------------------------------- the figures


def plot_curves(groups, x_key, y_key, x_label, y_label, title, subtitle, targets, mixed):
    """Lines of evals.csv column y_key against x_key, one per group (the mean over its seeds,
    with a 95% band); returns the figure and what it drew."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    plotted, all_y, report = 0, [], []
    for group in groups:
        curves = []
        for run in group.runs:
            ev = run.evals
            keep = np.isfinite(ev[x_key]) & np.isfinite(ev[y_key])
            if keep.any():
                curves.append((ev[x_key][keep], ev[y_key][keep]))
        if not curves:
            report.append(drawn(group, False))
            continue
        band = seed_band(curves) if len(curves) > 1 else None
        label = group_label(group, mixed)
        if band is not None:
            x, y, half = band
            label += f" ({len(curves)} seeds)"
            # Error and loss are never negative: the band stops at 0 rather than imply it.
            ax.fill_between(x, np.maximum(y - half, 0), y + half, color=group.color, alpha=0.2,
                            linewidth=0)
        elif len(curves) > 1:  # seeds that never overlap in x: draw each, no mean
            for cx, cy in curves[1:]:
                ax.plot(cx, cy, color=group.color, linewidth=1.0, alpha=0.6)
            x, y = curves[0]
        else:
            x, y = curves[0]
        # Markers show where sparse evaluations were taken (and make a single eval visible).
        ax.plot(x, y, color=group.color, label=label, linewidth=1.6,
                marker="o" if x.size <= 25 else None, markersize=3.5)
        report.append(drawn(group, band is not None))
        plotted += 1
        all_y.extend(y)
    for target in targets:
        ax.axhline(target, color="0.25", linestyle="--", linewidth=1.0,
                   label=f"target error {target:g}")
        all_y.append(target)
    if plotted == 0:
        no_data(ax, "no evaluations recorded (evals.csv empty or missing)")
    else:
        # The lines set the range; a wide band (two seeds: t = 12.7) is cut at the edges.
        finite = np.asarray([v for v in all_y if np.isfinite(v)], dtype=float)
        log = use_log_scale(finite)
        lo, hi = finite.min(), finite.max()
        if log:
            ax.set_yscale("log")
            ax.set_ylim(lo / 1.15, hi * 1.15)
            plain_log_axis(ax.yaxis)
        elif hi > lo:
            pad = 0.06 * (hi - lo)
            ax.set_ylim(max(lo - pad, 0) if lo >= 0 else lo - pad, hi + pad)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    finish_axes(ax, title, subtitle + seeds_note(groups))
    place_legend(ax, plotted + len(targets))
    return fig, report


def error_vs_time(groups, runs, title, targets):
    x_label, mixed = time_axis_label(runs)
    return plot_curves(groups, "wall_s", "test_error", x_label, "test error", title,
                       "test error vs time", targets, mixed)


def error_vs_iteration(groups, _runs, title, targets):
    return plot_curves(groups, "iteration", "test_error", "iteration (server updates)",
                       "test error", title, "test error vs iteration", targets, False)


def loss_vs_time(groups, runs, title, _targets):
    x_label, mixed = time_axis_label(runs)
    return plot_curves(groups, "wall_s", "train_loss", x_label, "training loss", title,
                       "training loss vs time", [], mixed)


def grid_shape(n):
    cols = 1 if n == 1 else 2 if n in (2, 4) else 3
    return math.ceil(n / cols), cols


def pooled_staleness(group):
    """The staleness of every applied gradient of the group's runs, or None."""
    data = [r.staleness for r in group.runs if r.staleness is not None]
    return np.concatenate(data) if data else None


def staleness_range(groups):
    """Shared x limit: the largest staleness, cut at the 99.9th percentile of a long tail."""
    data = [d for d in (pooled_staleness(g) for g in groups) if d is not None]
    if not data:
        return 1
    top = max(int(d.max()) for d in data)
    if top > 40:  # rare extremes would squash every histogram against the y axis
        top = max(int(np.ceil(np.quantile(d, 0.999))) for d in data)
    return max(top, 1)


def staleness(groups, _runs, title, _targets):
    rows, cols = grid_shape(len(groups))
    height = max(FIGSIZE[1], 1.9 * rows + 1.0)
    # Constrained layout keeps the two-line suptitle clear of the panel titles at any size.
    fig, axes = plt.subplots(rows, cols, figsize=(FIGSIZE[0], height), sharex=True, squeeze=False,
                             layout="constrained")
    top = staleness_range(groups)
    # Integer staleness: one bin per value while that stays legible.
    bins = np.arange(-0.5, top + 1.5) if top <= 60 else np.linspace(-0.5, top + 0.5, 61)
    report = []
    for ax, group in zip(axes.flat, groups):
        staleness_panel(ax, group, bins, top)
        report.append(drawn(group, False))
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    # The lowest visible panel of each column carries the x axis (a partly filled last row
    # would otherwise leave the panels above its empty slots without tick labels).
    for col in range(cols):
        visible = [r for r in range(rows) if r * cols + col < len(groups)]
        if visible:
            ax = axes[visible[-1], col]
            ax.set_xlabel("staleness (versions)")
            ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("fraction of gradients")
    pooled = "; seeds pooled" if any(len(g) > 1 for g in groups) else ""
    fig.suptitle(f"{title}\nstaleness of applied gradients (dashed line: mean{pooled})",
                 fontsize=11)
    return fig, report


def staleness_panel(ax, group, bins, top):
    seeds = f" ({len(group)} seeds)" if len(group) > 1 else ""
    ax.set_title(group.label + seeds, fontsize=9, color=group.color)
    ax.set_xlim(bins[0] - 0.03 * (bins[-1] - bins[0]), bins[-1])  # a bar at 0 clear of the spine
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True, nbins=6))
    ax.tick_params(labelsize=8)
    values = pooled_staleness(group)
    if values is None:
        no_data(ax, "no gradients recorded")
        ax.set_yticks([])
        return
    clipped = int((values > top).sum())
    shown = np.minimum(values, top)  # the tail beyond the shared range joins the last bin
    ax.hist(shown, bins=bins, weights=np.full(shown.size, 1.0 / shown.size), color=group.color,
            alpha=0.85)
    mean = float(values.mean())
    ax.axvline(mean, color="black", linestyle="--", linewidth=1.0)
    note = f"mean {mean:.2f}\nmax {int(values.max())}"
    if clipped:
        note += f"\n{clipped} > {top} in last bin"
    ax.text(0.97, 0.93, note, ha="right", va="top", transform=ax.transAxes, fontsize=8,
            bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))
    ax.grid(True, axis="y", alpha=0.3)


def time_per_iteration(groups, _runs, title, _targets):
    """A dot plot, one row per group: measured and predicted time per iteration (left) and
    their ratio on a linear axis around 1 (right). Dots, not bars: when sync and async are
    P*H_P apart the time axis must be logarithmic, and a bar's length means nothing there."""
    rows = []
    for group in groups:
        measured = [r.value("seconds_per_iteration", "seconds_per_iteration")
                    for r in group.runs]
        predicted = [r.value("predicted_seconds_per_iteration", "theory",
                             "seconds_per_iteration") for r in group.runs]
        ratios = [m / p for m, p in zip(measured, predicted)
                  if m is not None and p is not None and p > 0]
        rows.append((group, mean_ci(measured), mean_ci(predicted), mean_ci(ratios),
                     group.runs[0].predicted_method))
    height = max(2.6, 0.34 * len(groups) + 1.6)
    fig, (ax, rel) = plt.subplots(1, 2, figsize=(FIGSIZE[0] + 1.0, height), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 2]}, layout="constrained")
    report = []
    known = [v for _, m, p, _, _ in rows for v in (m[0], p[0]) if v is not None and v > 0]
    # Milliseconds read better for the usual 1-100 ms iterations.
    scale, unit = (1e3, "ms") if known and max(known) < 1.0 else (1.0, "s")
    methods = []
    for y, (group, (m, m_half), (p, _), (ratio, r_half), method) in enumerate(rows):
        if m is not None:
            ax.errorbar(m * scale, y, xerr=None if m_half is None else m_half * scale, fmt="o",
                        color=group.color, markersize=6, capsize=3, zorder=3)
        if p is not None:
            ax.plot(p * scale, y, THEORY_MARKERS.get(method, "^"), markerfacecolor="none",
                    markeredgecolor="black", markersize=8, markeredgewidth=1.1, zorder=4)
            if method not in methods:
                methods.append(method)
        if m is None and p is None:
            ax.text(0.02, y, "no time per iteration recorded", transform=ax.get_yaxis_transform(),
                    va="center", fontsize=8, color="0.4")
        if ratio is not None:
            rel.errorbar(ratio, y, xerr=r_half, fmt="o", color=group.color, markersize=6,
                         capsize=3, zorder=3)
            # The value at the panel's right edge, on its row: labels cannot collide.
            rel.annotate(f"{ratio:.3f}", (1.0, y), xycoords=("axes fraction", "data"),
                         xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
        else:
            rel.text(0.5, y, "no prediction", transform=rel.get_yaxis_transform(), ha="center",
                     va="center", fontsize=8, color="0.4")
        report.append(drawn(group, m_half is not None))
    log = bool(known) and max(known) / min(known) > 30
    if log:
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)
    elif known:  # from 0, so that distances from the axis compare; whiskers included
        ends = [(m[0] + (m[1] or 0)) * scale for _, m, _, _, _ in rows if m[0] is not None]
        ax.set_xlim(0, max(ends + [v * scale for v in known]) * 1.08)
    ax.set_xlabel(f"{unit} per iteration" + (" (log scale)" if log else ""))
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels([group_label(g) + (f" ({len(g)} seeds)" if len(g) > 1 else "")
                        for g in groups], fontsize=8)
    ax.set_ylim(len(groups) - 0.5, -0.5)  # the race's order, top to bottom
    rel.axvline(1.0, color="0.3", linewidth=1.0)
    lo, hi = rel.get_xlim()
    spread = max(abs(lo - 1), abs(hi - 1), 0.1)  # +-10% at least: a 2% wobble is not a trend
    rel.set_xlim(1 - spread, 1 + spread)
    rel.set_xlabel("measured / predicted")
    for a in (ax, rel):
        a.grid(True, axis="x", which="major", alpha=0.3)
    # The key in the subtitle: a legend above a panel would push the panels apart.
    key = "dots: measured" + (" (mean, 95% CI over seeds)" if any(len(g) > 1 for g in groups)
                              else "")
    key += "".join(f", {THEORY_SYMBOLS.get(m, '△')} predicted ({m})" for m in methods)
    fig.suptitle(f"{title}\nseconds per iteration ({key})", fontsize=11)
    return fig, report


# ---------------------------------------------------------------- command line


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message}; see tools/plot.py --help")


def parse_args(argv):
    description = "\n\n".join(p for p in __doc__.split("\n\n") if not p.startswith("usage:"))
    parser = Parser(prog="plot.py", description=description,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", type=Path,
                        help="race dir (results.csv), run dir (summary.json) or dir of runs")
    parser.add_argument("--out", metavar="FIG_DIR", type=Path, help="where to write (default DIR)")
    parser.add_argument("--format", choices=FORMATS, default="png",
                        help="file format of every figure (default png)")
    parser.add_argument("--dpi", type=int, default=DPI,
                        help=f"resolution of png figures (default {DPI})")
    parser.add_argument("--title", help="figure title (default: DIR's name)")
    parser.add_argument("--target-error", metavar="X", type=float,
                        help="draw this target error (default: from the runs' configs)")
    parser.add_argument("--report", metavar="JSON", type=Path,
                        help="also write what each figure drew, per group, as JSON")
    args = parser.parse_args(argv)
    if args.target_error is not None and not (0 < args.target_error < math.inf):
        raise UsageError(f"--target-error {args.target_error} is not positive; pass e.g. 0.08")
    if not 10 <= args.dpi <= 1200:
        raise UsageError(f"--dpi {args.dpi} is out of range; pass 10 to 1200, e.g. 150")
    return args


def targets_of(runs, override):
    if override is not None:
        return [override]
    return sorted({r.target_error for r in runs if r.target_error is not None})


def main(argv):
    args = parse_args(argv)
    runs = discover_runs(args.dir)
    groups = group_runs(runs)
    assign_colors(groups)
    out_dir = args.out or args.dir
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create {out_dir} ({e.strerror}); pass a writable --out")
    if not os.access(out_dir, os.W_OK):
        raise UsageError(f"{out_dir} is not writable; pass a writable --out")
    title = args.title or args.dir.resolve().name
    targets = targets_of(runs, args.target_error)
    status, report = 0, {}
    for name in FIGURES:
        try:
            fig, report[name] = globals()[name](groups, runs, title, targets)
            print(save(fig, out_dir, name, args.format, args.dpi))
        except Exception as e:  # one broken figure must not cost the others
            warn(f"could not draw {name}.{args.format} ({type(e).__name__}: {e})")
            plt.close("all")
            report.pop(name, None)
            status = 1
    if args.report:
        try:
            args.report.write_text(json.dumps({"format": args.format, "figures": report},
                                              indent=1) + "\n")
        except OSError as e:
            raise UsageError(f"cannot write {args.report} ({e.strerror}); pass a writable path")
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)

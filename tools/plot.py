#!/usr/bin/python3
"""Plots of stalesgd runs: the figures of a race, or of one `stalesgd train --out` run.

usage: tools/plot.py DIR [--out PNG_DIR] [--title TEXT] [--target-error X]

DIR is either a race directory (results.csv plus one subfolder per run, named by the
`slug` column), a single run directory (summary.json, evals.csv, ...), or a directory
whose immediate subfolders are run directories. Writes into PNG_DIR (default DIR):

  error_vs_time.png       test error against (wallclock or virtual) seconds, one line per run
  error_vs_iteration.png  test error against server iterations
  loss_vs_time.png        training loss against seconds
  staleness.png           histogram of gradient staleness per run, shared x range, mean marked
  time_per_iteration.png  measured vs predicted seconds per iteration per run

Missing pieces (no gradients, one eval, no theory, missing files) are skipped, never fatal.
Prints the files written, one per line. Bad DIR: one line on stderr, exit status 1.
Run with /usr/bin/python3 (Debian's python3-matplotlib); see docs/outputs.md.
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
from matplotlib.patches import Patch  # noqa: E402

DPI = 110
FIGSIZE = (7.0, 4.5)
WALLCLOCKS = {"real", "sequential"}  # both measure real elapsed time
HATCHES = {"closed form": "///", "monte carlo": "..."}
FIGURES = ("error_vs_time", "error_vs_iteration", "loss_vs_time", "staleness", "time_per_iteration")


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


def assign_colors(runs):
    """One colour per run, the same in every figure; no grey (it reads as "missing")."""
    tab10 = plt.get_cmap("tab10").colors
    palette = [c for i, c in enumerate(tab10) if i != 7]
    if len(runs) > len(palette):  # tab20's strong shades first, then the pale ones
        tab20 = plt.get_cmap("tab20").colors
        palette = list(tab20[0::2]) + list(tab20[1::2])
    for i, run in enumerate(runs):
        run.color = palette[i % len(palette)]


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


def curve_label(run, mixed_clocks):
    label = run.label
    if mixed_clocks and run.clock:
        label += f" [{'virtual' if run.clock == 'virtual' else 'wallclock'}]"
    return label if not label.startswith("_") else " " + label  # matplotlib hides "_..." labels


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


def save(fig, out_dir, name):
    path = out_dir / f"{name}.png"
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def finish_axes(ax, title, subtitle):
    ax.set_title(f"{title}\n{subtitle}", fontsize=11)
    ax.grid(True, which="major", alpha=0.3)


# ---------------------------------------------------------------- the figures


def plot_curves(runs, x_key, y_key, x_label, y_label, title, subtitle, targets, mixed):
    """Lines of evals.csv column y_key against x_key, one per run; returns the figure."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    plotted, all_y = 0, []
    for run in runs:
        ev = run.evals
        keep = np.isfinite(ev[x_key]) & np.isfinite(ev[y_key])
        x, y = ev[x_key][keep], ev[y_key][keep]
        if x.size == 0:
            continue
        # Markers show where sparse evaluations were taken (and make a single eval visible).
        ax.plot(x, y, color=run.color, label=curve_label(run, mixed), linewidth=1.6,
                marker="o" if x.size <= 25 else None, markersize=3.5)
        plotted += 1
        all_y.extend(y)
    for target in targets:
        ax.axhline(target, color="0.25", linestyle="--", linewidth=1.0,
                   label=f"target error {target:g}")
        all_y.append(target)
    if plotted == 0:
        no_data(ax, "no evaluations recorded (evals.csv empty or missing)")
    elif use_log_scale(all_y):
        ax.set_yscale("log")
        plain_log_axis(ax.yaxis)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    finish_axes(ax, title, subtitle)
    place_legend(ax, plotted + len(targets))
    return fig


def error_vs_time(runs, title, targets):
    x_label, mixed = time_axis_label(runs)
    return plot_curves(runs, "wall_s", "test_error", x_label, "test error", title,
                       "test error vs time", targets, mixed)


def error_vs_iteration(runs, title, targets):
    return plot_curves(runs, "iteration", "test_error", "iteration (server updates)",
                       "test error", title, "test error vs iteration", targets, False)


def loss_vs_time(runs, title, _targets):
    x_label, mixed = time_axis_label(runs)
    return plot_curves(runs, "wall_s", "train_loss", x_label, "training loss", title,
                       "training loss vs time", [], mixed)


def grid_shape(n):
    cols = 1 if n == 1 else 2 if n in (2, 4) else 3
    return math.ceil(n / cols), cols


def staleness_range(runs):
    """Shared x limit: the largest staleness, cut at the 99.9th percentile of a long tail."""
    data = [r.staleness for r in runs if r.staleness is not None]
    if not data:
        return 1
    top = max(int(d.max()) for d in data)
    if top > 40:  # rare extremes would squash every histogram against the y axis
        top = max(int(np.ceil(np.quantile(d, 0.999))) for d in data)
    return max(top, 1)


def staleness(runs, title, _targets):
    rows, cols = grid_shape(len(runs))
    height = max(FIGSIZE[1], 1.9 * rows + 1.0)
    # Constrained layout keeps the two-line suptitle clear of the panel titles at any size.
    fig, axes = plt.subplots(rows, cols, figsize=(FIGSIZE[0], height), sharex=True, squeeze=False,
                             layout="constrained")
    top = staleness_range(runs)
    # Integer staleness: one bin per value while that stays legible.
    bins = np.arange(-0.5, top + 1.5) if top <= 60 else np.linspace(-0.5, top + 0.5, 61)
    for ax, run in zip(axes.flat, runs):
        staleness_panel(ax, run, bins, top)
    for ax in list(axes.flat)[len(runs):]:
        ax.set_visible(False)
    # The lowest visible panel of each column carries the x axis (a partly filled last row
    # would otherwise leave the panels above its empty slots without tick labels).
    for col in range(cols):
        visible = [r for r in range(rows) if r * cols + col < len(runs)]
        if visible:
            ax = axes[visible[-1], col]
            ax.set_xlabel("staleness (versions)")
            ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("fraction of gradients")
    fig.suptitle(f"{title}\nstaleness of applied gradients (dashed line: mean)", fontsize=11)
    return fig


def staleness_panel(ax, run, bins, top):
    ax.set_title(run.label, fontsize=9, color=run.color)
    ax.set_xlim(bins[0] - 0.03 * (bins[-1] - bins[0]), bins[-1])  # a bar at 0 clear of the spine
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True, nbins=6))
    ax.tick_params(labelsize=8)
    values = run.staleness
    if values is None:
        no_data(ax, "no gradients recorded")
        ax.set_yticks([])
        return
    clipped = int((values > top).sum())
    shown = np.minimum(values, top)  # the tail beyond the shared range joins the last bin
    ax.hist(shown, bins=bins, weights=np.full(shown.size, 1.0 / shown.size), color=run.color,
            alpha=0.85)
    mean = float(values.mean())
    ax.axvline(mean, color="black", linestyle="--", linewidth=1.0)
    note = f"mean {mean:.2f}\nmax {int(values.max())}"
    if clipped:
        note += f"\n{clipped} > {top} in last bin"
    ax.text(0.97, 0.93, note, ha="right", va="top", transform=ax.transAxes, fontsize=8,
            bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))
    ax.grid(True, axis="y", alpha=0.3)


def time_per_iteration(runs, title, _targets):
    fig, ax = plt.subplots(figsize=FIGSIZE)
    measured = [r.value("seconds_per_iteration", "seconds_per_iteration") for r in runs]
    predicted = [r.value("predicted_seconds_per_iteration", "theory", "seconds_per_iteration")
                 for r in runs]
    known = [v for v in measured + predicted if v is not None and v > 0]
    if not known:
        no_data(ax, "no seconds per iteration recorded")
        finish_axes(ax, title, "seconds per iteration: measured vs predicted")
        return fig
    # Milliseconds read better for the usual 1-100 ms iterations.
    scale, unit = (1e3, "ms") if max(known) < 1.0 else (1.0, "s")
    width, methods = 0.38, []
    for i, (run, m, p) in enumerate(zip(runs, measured, predicted)):
        if m is not None:
            ax.bar(i - width / 2 if p is not None else i, m * scale, width, color=run.color)
        if p is not None:
            method = run.predicted_method
            if method not in methods:
                methods.append(method)
            ax.bar(i + width / 2 if m is not None else i, p * scale, width, facecolor="white",
                   edgecolor=run.color, hatch=HATCHES.get(method, "xx"), linewidth=1.2)
        if m is None and p is None:
            ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=8, color="0.4")
        if m is not None and p is not None and p > 0:
            ax.annotate(f"{m / p:.2f}×", (i, max(m, p) * scale), xytext=(0, 3),
                        textcoords="offset points", ha="center", fontsize=8)
    # Bars want a linear axis; only when sync vs async (P*H_P apart) would make bars vanish.
    log = max(known) / min(known) > 30
    if log:
        ax.set_yscale("log")
        plain_log_axis(ax.yaxis)
    ax.set_ylabel(f"{unit} per iteration" + (" (log scale)" if log else ""))
    ax.set_xticks(range(len(runs)))
    rotate = len(runs) > 4 or max(len(r.label) for r in runs) > 12
    ax.set_xticklabels([r.label for r in runs], rotation=30 if rotate else 0,
                       ha="right" if rotate else "center", fontsize=8)
    ax.margins(y=0.12)
    legend = [Patch(facecolor="0.35", label="measured")]
    legend += [Patch(facecolor="white", edgecolor="0.3", hatch=HATCHES.get(m, "xx"),
                     label=f"predicted ({m})") for m in methods]
    ax.legend(handles=legend, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              frameon=False, title="ratio = measured / predicted", title_fontsize=7)
    finish_axes(ax, title, "seconds per iteration: measured vs predicted")
    ax.grid(False, axis="x")
    return fig


# ---------------------------------------------------------------- command line


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message}; see tools/plot.py --help")


def parse_args(argv):
    description = "\n".join(line for line in __doc__.splitlines() if not line.startswith("usage:"))
    parser = Parser(prog="plot.py", description=description,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", type=Path,
                        help="race dir (results.csv), run dir (summary.json) or dir of runs")
    parser.add_argument("--out", metavar="PNG_DIR", type=Path, help="where to write (default DIR)")
    parser.add_argument("--title", help="figure title (default: DIR's name)")
    parser.add_argument("--target-error", metavar="X", type=float,
                        help="draw this target error (default: from the runs' configs)")
    args = parser.parse_args(argv)
    if args.target_error is not None and not (0 < args.target_error < math.inf):
        raise UsageError(f"--target-error {args.target_error} is not positive; pass e.g. 0.08")
    return args


def targets_of(runs, override):
    if override is not None:
        return [override]
    return sorted({r.target_error for r in runs if r.target_error is not None})


def main(argv):
    args = parse_args(argv)
    runs = discover_runs(args.dir)
    assign_colors(runs)
    out_dir = args.out or args.dir
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create {out_dir} ({e.strerror}); pass a writable --out")
    if not os.access(out_dir, os.W_OK):
        raise UsageError(f"{out_dir} is not writable; pass a writable --out")
    title = args.title or args.dir.resolve().name
    targets = targets_of(runs, args.target_error)
    status = 0
    for name in FIGURES:
        try:
            fig = globals()[name](runs, title, targets)
            print(save(fig, out_dir, name))
        except Exception as e:  # one broken figure must not cost the others
            warn(f"could not draw {name}.png ({type(e).__name__}: {e})")
            plt.close("all")
            status = 1
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)

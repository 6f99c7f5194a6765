#!/usr/bin/python3
"""Figures for docs/reproducing-the-paper.md that tools/plot.py does not draw.

usage: tools/paper_figures.py COMMAND DIR [DIR ...] --out PNG [options]

Every command reads race output directories (`stalesgd race --out DIR`: results.csv plus
one folder per run holding evals.csv, updates.csv and summary.json) and writes one figure
(its format from --out's extension: .png, .pdf or .svg; --dpi for PNG, default 90).
Runs that differ only by seed (the same label without " (seed N)" and the same config but
for seed, as tools/plot.py groups them) are grouped: thin lines are the seeds, the thick
line is their mean.

commands
  curves  test error, training loss, K or the learning rate applied, against time and/or
          iterations, seeds overlaid
          --x time iteration          one panel column per x axis (default: time)
          --metric test_error train_loss k lr   one panel per metric (default: test_error;
                                      also test_loss, train_objective: evals.csv's columns)
          --logx [--xmin T]           log time axis from T (default 0.1 s): the first seconds
          --xmax T / --itmax N        cut the time / iteration axis
          --runs 'LABEL' ...          only these runs (labels without the seed suffix), in order
          --colors 0 0 1 1 --styles dashed solid   pair runs by colour, tell them by style
          --at T ... / --at-iteration N ...         also print the seed-mean metrics there
  ratio   E[T_sync]/E[T_async] against P: measured seconds per iteration of the sync and
          async runs of each P (config.workers), against the closed form P*H_P, with a
          measured/theory panel; prints the table
  bars    one horizontal bar per run: the mean over seeds with its 95% confidence
          interval (t-interval, whisker) and the seeds as dots: --value time_to_target |
          seconds_per_iteration | final_test_error; predicted s/iteration as a dashed tick;
          with --target X [Y ...], time_to_target is the first snapshot at or under each
          target (from evals.csv), one panel per target; a run not every seed of which
          reached the target gets no bar, only its seeds' dots and a note

--csv CSV also keeps the numbers a command prints, one row each, to sit beside the figure
(docs/): curves the seed-mean metrics at --at / --at-iteration and over the last quarter,
bars every run's mean with its 95% half-width, seed count and seeds, ratio its table.
Curves of several seeds are drawn as their mean with a shaded 95% t-band. Under its title
every figure names its clock, the seeds per run (and whether runs share them) and, for
real-clock runs, the range of the machine's 1-minute load average at their starts and ends
(summary.json's provenance.host), which --csv also keeps.

Prints the file written. Bad input: one line on stderr, exit status 1.
Run with /usr/bin/python3 (Debian's python3-matplotlib).
"""

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402

# Shared with the per-race plots (same directory: python puts the script's folder on sys.path).
from load_race import group_names  # noqa: E402
from plot import mean_ci, plain_log_axis, seed_band, to_float  # noqa: E402

DPI = 90  # keeps the busiest figures (dense snapshots, seeds overlaid) under 300 KB
METRIC_LABELS = {
    "test_error": "test error",
    "train_loss": "training loss",
    "train_objective": "training objective (loss + L2)",
    "test_loss": "test loss",
    "k": "K per update",
    "lr": "learning rate applied",
}


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
        wall, err = self.series("time", "test_error")
        hit = np.nonzero(err <= target)[0]
        return float(wall[hit[0]]) if hit.size else None

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


# ---------------------------------------------------------------- curves


def summary_row(rows, run, quantity, at, values):
    """Appends a --csv row: the mean of the seeds' values with its 95% half-width."""
    reached = [v for v in values if v is not None and np.isfinite(v)]
    mean, half = mean_ci(reached)
    rows.append({"run": run, "quantity": quantity, "at": at, "seeds": len(values),
                 "reached": len(reached), "mean": mean, "ci95_half_width": half,
                 "values": ";".join("" if v is None else f"{v:.10g}" for v in values)})


def print_table(groups, metrics, times, iterations, rows):
    """Seed-mean metric at the given times and iterations, and over the last quarter of each
    run's time (with its 95% half-width over seeds)."""
    metrics = [m for m in metrics if m not in ("k", "lr")]
    head = "".join(f"  t={t:g}" for t in times) + "".join(f"  it={i:g}" for i in iterations)
    for metric in metrics:
        print(f"{metric}: {'run':36s}{head}  last-quarter mean  min  (seeds)")
        for label, members in groups:
            curves_ = [r.series("time", metric) for r in members]
            by_it = [r.series("iteration", metric) for r in members]
            at = []
            for t in times:
                seeds = [float(np.interp(t, x, y)) for x, y in curves_]
                summary_row(rows, label, metric, f"t={t:g}", seeds)
                at.append(np.mean(seeds))
            for i in iterations:
                seeds = [float(np.interp(i, x, y)) for x, y in by_it]
                summary_row(rows, label, metric, f"iteration={i:g}", seeds)
                at.append(np.mean(seeds))
            last, lows = [], []
            for x, y in curves_:
                keep = np.isfinite(y)
                x, y = x[keep], y[keep]
                last.append(float(y[x >= 0.75 * x.max()].mean()))
                lows.append(float(y.min()))
            summary_row(rows, label, metric, "last quarter", last)
            summary_row(rows, label, metric, "minimum", lows)
            mean, half = mean_ci(last)
            ci = "" if half is None else f" ±{half:.4f}"
            cells = "".join(f"  {v:.4f}" for v in at)
            print(f"  {label:42s}{cells}  {mean:.4f}{ci}  {np.mean(lows):.4f}  ({len(members)})")


def max_time(groups):
    return max(float(np.nanmax(r.series("time", "test_error")[0])) for _, rs in groups for r in rs)


def curves(args):
    runs = load_runs(args.dirs)
    groups = grouped(runs, args.runs)
    xs, metrics = args.x, args.metric
    panels = [(metric, x_kind) for metric in metrics for x_kind in xs]
    ncols = len(xs) if len(xs) > 1 else min(len(metrics), 3)  # one x axis: metrics side by side
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.6 * nrows), squeeze=False)
    palette = colors(len(groups))
    if args.colors:  # e.g. --colors 0 0 1 1: pairs of runs share a colour
        palette = [colors(max(args.colors) + 1)[args.colors[i % len(args.colors)]]
                   for i in range(len(groups))]
    styles = [args.styles[i % len(args.styles)] if args.styles else "solid"
              for i in range(len(groups))]
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for (metric, x_kind), ax in zip(panels, axes.flat):
        for color, style, (label, members) in zip(palette, styles, groups):
            pairs = [r.series(x_kind, metric) for r in members]
            step = metric == "k"
            many = len(members) > 1
            if x_kind == "time" and args.logx:  # what the log axis hides must not scale y
                lo = args.xmin or 0.1
                pairs = [(x[x >= lo * 0.999], y[x >= lo * 0.999]) for x, y in pairs]
            for x, y in pairs:
                keep = np.isfinite(x) & np.isfinite(y)
                if step:
                    ax.step(x[keep], y[keep], where="post", color=color,
                            alpha=0.7 if many else 1.0, linewidth=1.2 if many else 1.6,
                            linestyle=style, label=None if many else label)
                else:
                    ax.plot(x[keep], y[keep], color=color, alpha=0.2 if many else 1.0,
                            linewidth=0.8 if many else 1.6, linestyle=style,
                            label=None if many else label)
            if many and not step:
                band = seed_band(pairs)  # tools/plot.py's: the mean and its 95% t-band
                if band is not None:
                    gx, gy, half = band
                    ax.plot(gx, gy, color=color, linewidth=2.0, linestyle=style,
                            label=f"{label} (mean of {len(members)} seeds, 95% band)")
                    # Error and loss are positive: the band stops above 0.
                    ax.fill_between(gx, np.maximum(gy - half, gy * 1e-3), gy + half,
                                    color=color, alpha=0.18, linewidth=0)
            elif many:
                ax.plot([], [], color=color, linestyle=style,
                        label=f"{label} ({len(members)} seeds)")
        for target in args.target or [] if metric == "test_error" else []:
            ax.axhline(target, color="0.2", linestyle="--", linewidth=0.8,
                       label=f"target {target:g}" if target == args.target[0] else None)
        if x_kind == "time":
            ax.set_xlabel(clock_word(runs) + (" (log scale)" if args.logx else ""))
            if args.logx:
                ax.set_xscale("log")
                ax.set_xlim(args.xmin or 0.1, args.xmax or max_time(groups))
                ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            elif args.xmin is not None:
                ax.set_xlim(left=args.xmin)
            if args.xmax:
                ax.set_xlim(right=args.xmax)
        else:
            ax.set_xlabel("iteration (server updates)")
            if args.itmax:
                ax.set_xlim(0, args.itmax)
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        if metric == "k":
            ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        if metric in ("test_error", "train_loss", "train_objective", "test_loss", "lr"):
            ax.set_yscale("log")
            lo, hi = args.ylim if args.ylim and metric == "test_error" else (None, None)
            if lo:
                ax.set_ylim(lo, hi)
            plain_log_axis(ax.yaxis)
        ax.grid(True, which="both", alpha=0.25)
        ax.set_title(f"{METRIC_LABELS.get(metric, metric)} vs "
                     f"{'time' if x_kind == 'time' else 'iteration'}", fontsize=10)
    print_table(groups, metrics, args.at or [], args.at_iteration or [], args.rows)
    load_rows(groups, args.rows)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, -0.02 - 0.03 * math.ceil(len(labels) / 3)))
    fig.suptitle(heading(args.title, runs), fontsize=11)
    fig.tight_layout(w_pad=2.0)
    save(fig, args.out, args.dpi)


# ---------------------------------------------------------------- ratio vs P


def harmonic(n):
    return sum(1.0 / i for i in range(1, n + 1))


def ratio(args):
    runs = load_runs(args.dirs)
    # (clock, P) -> {"sync": [s/it...], "async": [...]} over seeds
    table = {}
    for r in runs:
        rule = r.row.get("rule")
        if rule not in ("sync", "async"):
            continue
        p = int(r.config.get("workers", 0))
        cell = table.setdefault((r.clock, p), {"sync": [], "async": [], "load": []})
        cell[rule].append(r.value("seconds_per_iteration"))
        host = r.real_host or {}
        cell["load"] += [v for v in (to_float(host.get("load_1min_start")),
                                     to_float(host.get("load_1min_end"))) if v is not None]
    points = {}
    print("clock    P   E[T_sync] s  E[T_async] s  measured ratio (95%)  P*H_P  measured/P*H_P")
    for (clock, p), cell in sorted(table.items()):
        if not cell["sync"] or not cell["async"]:
            continue
        (ts, hs), (ta, ha) = mean_ci(cell["sync"]), mean_ci(cell["async"])
        theory = p * harmonic(p)
        # The ratio of two independent means: their relative half-widths add in quadrature.
        half = (ts / ta) * math.hypot(hs / ts, ha / ta) if hs and ha else None
        points.setdefault(clock, []).append((p, ts / ta, half or 0.0))
        shown = f"± {half:.2f}" if half is not None else ""
        print(f"{clock:7s} {p:3d}  {ts:10.5f}  {ta:12.6f}  {ts / ta:10.2f} {shown:>9s}  "
              f"{theory:5.1f}  {ts / ta / theory:14.3f}")
        args.rows.append({"clock": clock, "workers": p, "sync_seconds_per_iteration": ts,
                          "async_seconds_per_iteration": ta, "ratio": ts / ta,
                          "ratio_ci95_half_width": "" if half is None else half,
                          "theory_P_H_P": theory, "ratio_over_theory": ts / ta / theory,
                          "sync_seeds": len(cell["sync"]), "async_seeds": len(cell["async"]),
                          "load_1min_min": min(cell["load"], default=""),
                          "load_1min_max": max(cell["load"], default="")})
    if not points:
        raise UsageError("no P with both a sync and an async run; see experiments/paper-4-*.toml")
    fig, (ax, rel) = plt.subplots(2, 1, figsize=(6.4, 5.6), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.2]})
    top = max(p for pts in points.values() for p, _, _ in pts)
    grid = np.arange(1, top + 1)
    ax.plot(grid, [p * harmonic(p) for p in grid], color="0.2", linewidth=1.4,
            label="theory: P·H_P (exponential delays)")
    markers = {"real": ("o", "tab:red", "measured, real clock (threads, sleeps)"),
               "virtual": ("s", "tab:blue", "measured, virtual clock (event simulation)")}
    for clock, pts in points.items():
        marker, color, label = markers.get(clock, ("^", "tab:green", f"measured, {clock}"))
        pts.sort()
        style = dict(color=color, markersize=7, markeredgewidth=1.6,
                     markerfacecolor="none" if clock == "virtual" else color)
        ax.plot([p for p, _, _ in pts], [v for _, v, _ in pts], marker, label=label, **style)
        rel.errorbar([p for p, _, _ in pts], [v / (p * harmonic(p)) for p, v, _ in pts],
                     yerr=[h / (p * harmonic(p)) for p, _, h in pts], fmt=marker, capsize=3,
                     **style)
    rel.axhline(1.0, color="0.2", linewidth=1.2)
    lo, hi = rel.get_ylim()
    rel.set_ylim(min(lo, 0.9), max(hi, 1.1))  # +-10% at least: a 2% wobble is not a trend
    rel.set_ylabel("measured / P·H_P\n(95% interval)")
    rel.set_xlabel("workers P")
    rel.grid(True, alpha=0.25)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylabel("E[T_sync] / E[T_async]")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(heading(args.title, runs), fontsize=10)
    save(fig, args.out, args.dpi)


# ---------------------------------------------------------------- bars


def bars(args):
    runs = load_runs(args.dirs)
    groups = grouped(runs, args.runs)
    key = args.value
    targets = args.target if key == "time_to_target" and args.target else [None]
    ncols = min(len(targets), 2)
    nrows = math.ceil(len(targets) / ncols)
    # Horizontal bars: the run labels read level on the y axis, and a value or a note sits
    # on its own row, so no two labels can overlap whatever the values.
    height = 0.32 * len(groups) + 1.0
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, height * nrows + 0.8),
                             squeeze=False, sharey=True, sharex=key == "time_to_target",
                             layout="constrained")
    for ax, target in zip(axes.flat, targets):
        bar_panel(ax, args, groups, key, target)
    for ax in axes.flat[len(targets):]:
        ax.set_visible(False)
    # From 0 (bar lengths compare), with room for the values written past the longest bar.
    right = max(ax.dataLim.x1 for ax in axes.flat[:len(targets)])
    for ax in axes.flat[:len(targets)]:
        ax.set_xlim(0, right * 1.15 if np.isfinite(right) and right > 0 else 1)
    for ax in axes[-1, :]:
        ax.set_xlabel({"time_to_target": f"time to the target ({clock_word(runs)})",
                       "seconds_per_iteration": "milliseconds per iteration",
                       "final_test_error": "test error at end"}[key])
    axes[0, 0].set_yticks(range(len(groups)))
    axes[0, 0].set_yticklabels([g for g, _ in groups], fontsize=8)
    axes[0, 0].set_ylim(len(groups) - 0.5, -0.6)  # the race's order, top to bottom
    load_rows(groups, args.rows)
    fig.suptitle(heading(args.title, runs), fontsize=10)
    save(fig, args.out, args.dpi)


def bar_panel(ax, args, groups, key, target):
    """One bar per run group on ax: the mean over seeds with a 95% t-interval whisker, the
    seeds as dots, the mean written past the whisker; prints the numbers."""
    palette = colors(len(groups))
    if args.colors:
        palette = [colors(max(args.colors) + 1)[args.colors[i % len(args.colors)]]
                   for i in range(len(groups))]
    heading = f"test error <= {target:g}" if target is not None else key
    print(f"{heading}: {'run':30s} per seed  mean  95% CI half-width")
    for i, ((label, members), color) in enumerate(zip(groups, palette)):
        if target is not None:
            values = [r.time_to(target) for r in members]
        else:
            column = {"time_to_target": "time_to_target_s"}.get(key, key)
            values = [r.value(column) for r in members]
        if key == "seconds_per_iteration":
            values = [None if v is None else 1e3 * v for v in values]  # milliseconds
        summary_row(args.rows, label, key, "" if target is None else f"test_error<={target:g}",
                    values)
        reached = [v for v in values if v is not None]
        shown = ", ".join("—" if v is None else f"{v:.4g}" for v in values)
        if len(values) > 1:
            ax.plot(reached, [i] * len(reached), "o", color="black", markersize=2.5, zorder=4)
        if reached and len(reached) == len(values):
            mean, half = mean_ci(reached)
            ax.barh(i, mean, 0.6, color=color, alpha=0.85, zorder=2)
            if half is not None:
                ax.errorbar(mean, i, xerr=half, color="black", linewidth=1.0, capsize=2.5,
                            zorder=3)
            # Past the whisker or the last seed, whichever is further right.
            edge = max([mean + (half or 0)] + reached)
            ax.annotate(f"{mean:.3g}", (edge, i), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=7.5)
            ci = "" if half is None else f"  ±{half:.3g}"
            print(f"  {label:38s} {shown}  {mean:.4g}{ci}")
        else:
            missed = len(values) - len(reached)
            note = ("not reached" if len(values) == 1 else
                    f"not reached by any of {len(values)} seeds" if not reached else
                    f"not reached by {missed} of {len(values)} seeds")
            edge = max(reached) if reached else 0
            ax.annotate(note, (edge, i), xytext=(5, 0), textcoords="offset points",
                        va="center", fontsize=7, color="0.3")
            print(f"  {label:38s} {shown}  (not reached by every seed)")
        if key == "seconds_per_iteration":
            pred = [r.value("predicted_seconds_per_iteration") for r in members]
            pred = [1e3 * p for p in pred if p is not None]
            if pred:
                ax.plot([np.mean(pred)] * 2, [i - 0.4, i + 0.4], color="black",
                        linestyle="--", linewidth=1.2, zorder=5,
                        label="theory" if i == 0 else None)
    ax.grid(True, axis="x", alpha=0.25)
    ax.tick_params(labelsize=8)
    if key == "seconds_per_iteration":  # above the panel: inside, it covered the longest bar
        ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False,
                  borderaxespad=0.1)
    if target is not None:
        ax.set_title(f"first snapshot with test error <= {target:g}", fontsize=9)


# ---------------------------------------------------------------- command line


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message}; see tools/paper_figures.py --help")


def parse_args(argv):
    description = "\n".join(l for l in __doc__.splitlines() if not l.startswith("usage:"))
    parser = Parser(prog="paper_figures.py", description=description,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["curves", "ratio", "bars"])
    parser.add_argument("dirs", metavar="DIR", type=Path, nargs="+", help="race output dirs")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    parser.add_argument("--title", default="", help="figure title (say which clock)")
    parser.add_argument("--x", nargs="+", choices=["time", "iteration"], default=["time"])
    parser.add_argument("--metric", nargs="+", choices=list(METRIC_LABELS),
                        default=["test_error"])
    parser.add_argument("--runs", nargs="+", metavar="LABEL", help="only these runs, in order")
    parser.add_argument("--logx", action="store_true", help="log time axis")
    parser.add_argument("--xmin", type=float, help="start the time axis here (default with "
                        "--logx: 0.1 s)")
    parser.add_argument("--xmax", type=float, help="cut the time axis here")
    parser.add_argument("--at", type=float, nargs="+", metavar="T",
                        help="curves: print each run's (seed-mean) metrics at these times")
    parser.add_argument("--itmax", type=float, help="cut the iteration axis here")
    parser.add_argument("--ylim", type=float, nargs=2, metavar=("LO", "HI"),
                        help="test error axis range")
    parser.add_argument("--at-iteration", type=float, nargs="+", metavar="N",
                        help="curves: print each run's (seed-mean) metrics at these iterations")
    parser.add_argument("--colors", type=int, nargs="+", metavar="I",
                        help="colour index per run, e.g. 0 0 1 1 to pair runs")
    parser.add_argument("--styles", nargs="+", choices=["solid", "dashed", "dotted"],
                        help="curves: line style per run, cycled, e.g. solid dashed")
    parser.add_argument("--target", type=float, nargs="+", metavar="X",
                        help="curves: draw these target test errors; bars --value "
                        "time_to_target: one panel per target, read from evals.csv")
    parser.add_argument("--value", choices=["time_to_target", "seconds_per_iteration",
                                            "final_test_error"], default="time_to_target")
    parser.add_argument("--dpi", type=int, default=DPI, help=f"PNG resolution (default {DPI})")
    parser.add_argument("--csv", type=Path, help="also write the printed numbers here (docs/)")
    args = parser.parse_args(argv)
    args.rows = []
    if args.out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise UsageError(f"--out {args.out}: name a .png, .pdf or .svg file")
    return args


def main(argv):
    args = parse_args(argv)
    {"curves": curves, "ratio": ratio, "bars": bars}[args.command](args)
    if args.csv:
        write_csv(args.csv, args.rows)
    return 0


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


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"paper_figures.py: error: {e}", file=sys.stderr)
        sys.exit(1)

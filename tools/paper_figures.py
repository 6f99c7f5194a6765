#!/usr/bin/python3
"""Figures for docs/paper/*.md that tools/plot.py does not draw.

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
          (or time_to_target_smoothed: the first 3 consecutive snapshots whose mean is at or
          under the target, timed at the last of them, so one noisy snapshot does not count;
          or time_to_target_stays: the first snapshot from which every later one is at or
          under the target, none if the last is above it; or error_auc with --budget T: the
          area under test error against time over [0, T], trapezoids between snapshots;
          tools/race_metrics.py);
          with --target X [Y ...], time_to_target is the first snapshot at or under each
          target (from evals.csv), one panel per target; a run not every seed of which
          reached the target gets no bar, only its seeds' dots and a note

--csv CSV also keeps the numbers a command prints, one row each, for docs/data/ (the figure
goes to docs/img/): curves the seed-mean metrics at --at / --at-iteration and over the last quarter
(and, with --metric lr, each run's mean learning rate applied), bars every run's mean with
its 95% half-width, seed count and seeds (seconds_per_iteration also the predicted ms and
the measured mean staleness), ratio its table. A seed mean is missing ("—" printed, an empty
cell in --csv) unless every seed has a value: a time or iteration past a run's last snapshot
(or before its first), or a target a seed never reached, has none.
Curves of several seeds are drawn as their mean with a shaded 95% t-band. Under its title
every figure names its clock, the seeds per run (and whether runs share them) and, for
real-clock runs, the range of the machine's 1-minute load average at their starts and ends
(summary.json's provenance.host), which --csv also keeps.

Prints the file written. Bad input: one line on stderr, exit status 1.
Run with /usr/bin/python3 (Debian's python3-matplotlib).
"""

import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402

# The script's folder is on sys.path: the other commands, the race reader, plot.py's helpers.
from paper_charts import bars, ratio  # noqa: E402
from paper_runs import (UsageError, clock_word, colors, grouped, heading, load_rows,  # noqa: E402
                        load_runs, save, shown, summary_row, value_at, write_csv)
from plot import plain_log_axis, seed_band  # noqa: E402

DPI = 90  # keeps the busiest figures (dense snapshots, seeds overlaid) under 300 KB
METRIC_LABELS = {
    "test_error": "test error",
    "train_loss": "training loss",
    "train_objective": "training objective (loss + L2)",
    "test_loss": "test loss",
    "k": "K per update",
    "lr": "learning rate applied",
}


# ---------------------------------------------------------------- curves


def print_table(groups, metrics, times, iterations, rows):
    """Seed-mean metric at the given times and iterations ("—" unless every seed got there),
    and over the last quarter of each run's time (with its 95% half-width over seeds)."""
    if "lr" in metrics:  # the learning rate applied, averaged over each run's updates
        for label, members in groups:
            summary_row(rows, label, "lr", "mean over updates",
                        [float(np.nanmean(r.columns("updates.csv", ["lr"])[0])) for r in members])
    metrics = [m for m in metrics if m not in ("k", "lr")]
    head = "".join(f"  t={t:g}" for t in times) + "".join(f"  it={i:g}" for i in iterations)
    for metric in metrics:
        print(f"{metric}: {'run':36s}{head}  last-quarter mean  min  (seeds)")
        for label, members in groups:
            points = [("time", f"t={t:g}", t) for t in times]
            points += [("iteration", f"iteration={i:g}", i) for i in iterations]
            at = []
            for x_kind, where, point in points:
                seeds = [value_at(*r.series(x_kind, metric), point) for r in members]
                at.append(summary_row(rows, label, metric, where, seeds)[0])
            last, lows = [], []
            for r in members:
                x, y = r.series("time", metric)
                keep = np.isfinite(y)
                x, y = x[keep], y[keep]
                last.append(float(y[x >= 0.75 * x.max()].mean()))
                lows.append(float(y.min()))
            mean, half = summary_row(rows, label, metric, "last quarter", last)
            summary_row(rows, label, metric, "minimum", lows)
            ci = "" if half is None else f" ±{half:.4f}"
            cells = "".join(f"  {shown(v)}" for v in at)
            print(f"  {label:42s}{cells}  {shown(mean)}{ci}  {np.mean(lows):.4f}  ({len(members)})")


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
    parser.add_argument("--value", choices=["time_to_target", "time_to_target_smoothed",
                                            "time_to_target_stays", "error_auc",
                                            "seconds_per_iteration",
                                            "final_test_error"], default="time_to_target")
    parser.add_argument("--budget", type=float, metavar="T",
                        help="bars --value error_auc: the area over [0, T] seconds")
    parser.add_argument("--dpi", type=int, default=DPI, help=f"PNG resolution (default {DPI})")
    parser.add_argument("--csv", type=Path, help="also write the printed numbers here (docs/data/)")
    args = parser.parse_args(argv)
    args.rows = []
    if args.out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise UsageError(f"--out {args.out}: name a .png, .pdf or .svg file")
    if args.value in ("time_to_target_smoothed", "time_to_target_stays") and not args.target:
        raise UsageError(f"--value {args.value} needs --target X [Y ...]")
    if args.value == "error_auc" and not args.budget:
        raise UsageError("--value error_auc needs --budget T (seconds)")
    return args


def main(argv):
    args = parse_args(argv)
    {"curves": curves, "ratio": ratio, "bars": bars}[args.command](args)
    if args.csv:
        write_csv(args.csv, args.rows)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"paper_figures.py: error: {e}", file=sys.stderr)
        sys.exit(1)

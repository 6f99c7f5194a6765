#!/usr/bin/python3
"""The `ratio` and `bars` commands of tools/paper_figures.py (see its --help): E[T_sync] /
E[T_async] against P H_P, and one bar per run with the mean over seeds, its 95% interval and
the seeds as dots."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from paper_runs import (UsageError, clock_word, colors, grouped, heading, load_rows,  # noqa: E402
                        load_runs, save, summary_row)
from plot import mean_ci, to_float  # noqa: E402


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
    timed = key in ("time_to_target", "time_to_target_smoothed", "time_to_target_stays")
    targets = args.target if timed and args.target else [None]
    ncols = min(len(targets), 2)
    nrows = math.ceil(len(targets) / ncols)
    # Horizontal bars: the run labels read level on the y axis, and a value or a note sits
    # on its own row, so no two labels can overlap whatever the values.
    height = 0.32 * len(groups) + 1.0
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, height * nrows + 0.8),
                             squeeze=False, sharey=True, sharex=timed,
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
                       "time_to_target_smoothed":
                           f"time to the target, 3 snapshots' mean ({clock_word(runs)})",
                       "time_to_target_stays":
                           f"from then on under the target ({clock_word(runs)})",
                       "error_auc": f"test error x {clock_word(runs)}, over [0, {args.budget:g}]"
                                    if args.budget else "",
                       "seconds_per_iteration": "milliseconds per iteration",
                       "final_test_error": "test error at end"}[key])
    axes[0, 0].set_yticks(range(len(groups)))
    axes[0, 0].set_yticklabels([g for g, _ in groups], fontsize=8)
    axes[0, 0].set_ylim(len(groups) - 0.5, -0.6)  # the race's order, top to bottom
    load_rows(groups, args.rows)
    fig.suptitle(heading(args.title, runs), fontsize=10)
    save(fig, args.out, args.dpi)


def seed_mean(members, column, scale=1.0):
    """The mean over seeds of a results.csv column, or "" unless every seed has it."""
    values = [r.value(column) for r in members]
    return "" if None in values else scale * float(np.mean(values))


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
        if target is not None and key == "time_to_target_smoothed":
            values = [r.time_to_smoothed(target) for r in members]
        elif target is not None and key == "time_to_target_stays":
            values = [r.time_to_stays(target) for r in members]
        elif key == "error_auc":
            values = [r.error_auc(args.budget) for r in members]
        elif target is not None:
            values = [r.time_to(target) for r in members]
        else:
            column = {"time_to_target": "time_to_target_s"}.get(key, key)
            values = [r.value(column) for r in members]
        extra = {}
        if key == "seconds_per_iteration":
            values = [None if v is None else 1e3 * v for v in values]  # milliseconds
            # The tables quote the theory and the measured staleness beside the time.
            extra = {"predicted_ms": seed_mean(members, "predicted_seconds_per_iteration", 1e3),
                     "mean_staleness": seed_mean(members, "mean_staleness")}
        at = "" if target is None else f"test_error<={target:g}"
        at = f"time<={args.budget:g}" if key == "error_auc" else at
        summary_row(args.rows, label, key, at, values, **extra)
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
        ax.set_title({"time_to_target_smoothed": "3 snapshots' mean of test error",
                      "time_to_target_stays": "test error stays"}.get(
                          key, "first snapshot with test error") + f" <= {target:g}", fontsize=9)


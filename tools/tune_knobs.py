#!/usr/bin/python3
"""Picks each cell's setting (its rule's knobs and rate) from a grid race on a held-out split.

usage: tools/tune_knobs.py RACE_DIR... [--metric val_error] [--window 0.25] [--csv FILE]

Each RACE_DIR is the --out folder of a race whose runs set `holdout` and sweep their rule's knobs
(experiments/tune-the-field-knobs.toml, and the widening of its edges,
experiments/tune-the-field-edges.toml, written by tools/field_grid.py); a cell's settings are
those of every race given. A run's label is its
cell ("exp | k-sync") followed by the setting the race's sweep gave it ("(k=2, lr=0.1)") and its
seed. Each run is scored as tools/tune_lr.py scores it (the mean of METRIC over the last WINDOW of
its time; none when it stopped short of its budget or a score is not finite); a setting's score
is the mean over its seeds with a 95% t-interval, and the setting with the lowest mean is chosen.
The test split plays no part.

Prints the chosen setting and the runner-up of every cell and writes every setting with --csv:
run (the cell), setting ("k=2, lr=0.1"), quantity, seeds, reached, mean, ci95_half_width,
values, rank (1 for the chosen, 2 for the runner-up), chosen, apart_from_next (1 when the chosen
setting's interval lies below the runner-up's, 0 when they overlap: the choice is then by the
mean alone) and at_edge (the knobs whose chosen value is the smallest or largest of the cell's
grid, ';'-separated: the grid should be widened past them; a value at the knob's own bound is
not an edge: K, S or B = 1, and K = P for the rules that take K <= P). docs/the-field.md.
"""

import re
import sys

from field_grid import K_AT_MOST_P
from paper_runs import UsageError, load_runs, shown, summary_row
from tune_lr import run_tuning, window_mean

SETTING = re.compile(r"^(?P<cell>.*?) \((?P<setting>[a-z_]+=[^()]*)\)$")


def split_label(group):
    """(cell, {knob: value text}) of a run's label without its seed."""
    m = SETTING.match(group)
    if not m:
        return group, {}
    return m["cell"], dict(kv.split("=", 1) for kv in m["setting"].split(", "))


def sort_key(text):
    try:
        return (0, float(text), "")
    except ValueError:
        digits = re.findall(r"[0-9.]+", text)
        return (1, float(digits[-1]) if digits else 0.0, text)


def at_bound(knob, value, config):
    """Whether a knob's value is the least or largest its rule allows: no grid goes past it."""
    if knob != "k":
        return False
    return value == "1" or (config.get("rule") in K_AT_MOST_P
                            and value == str(config.get("workers")))


def tune(race_dirs, metric, window):
    cells = {}
    configs = {}
    for run in load_runs(race_dirs):
        if not run.config.get("holdout"):
            raise UsageError(f"{run.label!r} ran without a holdout; tune on held-out samples")
        cell, setting = split_label(re.sub(r" \(seed [0-9]+\)$", "", run.label))
        key = ", ".join(f"{k}={v}" for k, v in setting.items())
        cells.setdefault(cell, {}).setdefault(key, (setting, []))[1].append(run)
        configs[cell] = run.config
    rows = []
    for cell, settings in cells.items():
        grid = {}
        for setting, _ in settings.values():
            for k, v in setting.items():
                grid.setdefault(k, set()).add(v)
        scored = []
        for key, (setting, seeds) in settings.items():
            mean, half = summary_row(rows, cell, f"{metric}, last {window:g} of the time", "",
                                     [window_mean(r, metric, window) for r in seeds],
                                     setting=key)
            scored.append((mean, half, setting, rows[-1]))
        for *_, row in scored:
            row.update(rank="", chosen=0, apart_from_next="", at_edge="")
        ranked = sorted((s for s in scored if s[0] is not None), key=lambda s: s[0])
        for i, (*_, row) in enumerate(ranked[:2]):
            row["rank"] = i + 1
        if not ranked:
            continue
        best = ranked[0]
        best[3]["chosen"] = 1
        edges = [k for k, v in best[2].items()
                 if len(grid[k]) > 1 and not at_bound(k, v, configs[cell])
                 and v in (min(grid[k], key=sort_key), max(grid[k], key=sort_key))]
        best[3]["at_edge"] = ";".join(edges)
        if len(ranked) > 1:
            nxt = ranked[1]
            best[3]["apart_from_next"] = int(best[1] is not None and nxt[1] is not None
                                             and best[0] + best[1] < nxt[0] - nxt[1])
    return rows


def line(r):
    """A cell's chosen setting or runner-up as printed; None for the other settings."""
    if r["rank"] == "":
        return None
    mark = "chosen   " if r["chosen"] else "runner-up"
    note = ""
    if r["chosen"] and r["apart_from_next"] == 0:
        note += " (overlaps the runner-up)"
    if r["chosen"] and r["at_edge"]:
        note += f" (at the grid's edge: {r['at_edge']})"
    return (f"{r['run']:<36} {mark} {r['setting']:<40} {shown(r['mean'])} "
            f"± {shown(r['ci95_half_width'])}{note}")


def main(argv):
    return run_tuning("tune_knobs.py", __doc__, argv, tune, line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

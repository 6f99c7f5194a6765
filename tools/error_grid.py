#!/usr/bin/python3
"""The error bound's constants and floor across a grid of settings, predicted against measured.

usage: tools/error_grid.py RACE --csv CSV [--stalesgd BIN] [--constants-samples N]
                           [--optimum-epochs N]

RACE is the --out folder of a race whose runs differ in l2, lr and batch (and seed), one rule
and K each (experiments/error-grid.toml). For every setting, `stalesgd theory --error` gives the
constants (L, c = lambda, sigma^2 of a minibatch at w*, F(w0) - F*) and the floor of the bound
(Lemma 1 / Theorem 3', docs/theory.md), cached in RACE as theory-error-<setting>.json; the
measured floor is the last quarter's mean excess F(w) - F* (evals.csv's train_objective minus
the same at w*) over the seeds, with the 95% t-interval of the seeds' own last-quarter means,
and `still_falling` the last quarter's mean over the third quarter's (below 0.9: the run had not
reached its floor, so the ratio understates how loose the bound is). One CSV row per setting.
Needs Debian's python3-pandas and python3-matplotlib. Bad input: one line, exit 1.
"""

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from error_figures import (add_theory_arguments, config_of, measured, predict,  # noqa: E402
                           theory_flags, write_csv)
from load_race import LoadError, load_race  # noqa: E402
from plot import mean_ci  # noqa: E402

SETTING = ("config.l2", "config.lr", "config.batch")


def settings(race):
    """[(l2, lr, batch), the race's runs and snapshots for it as a race of its own]."""
    out = []
    for key, runs in race.runs.groupby(list(SETTING), sort=True):
        snaps = race.snapshots[race.snapshots["slug"].isin(runs["slug"])]
        name = "l2={:g} lr={:g} batch={:d}".format(key[0], key[1], int(key[2]))
        out.append((key, SimpleNamespace(runs=runs, snapshots=snaps,
                                         dir=f"{race.dir} ({name})")))
    return out


def grid(a):
    race = load_race(a.race)
    missing = [c for c in SETTING if c not in race.runs.columns]
    if missing:
        raise LoadError(f"{a.race}: no {missing[0]} in the runs' summary.json")
    rows = []
    for (l2, lr, batch), sub in settings(race):
        cfg = config_of(sub)
        cache = Path(a.race) / f"theory-error-l2-{l2:g}-lr-{lr:g}-batch-{int(batch)}.json"
        pred = predict(a.stalesgd, cfg, [1.0], cache, theory_flags(a))
        c = pred["constants"]
        meas, tables, column = measured(sub, c)
        for rule in pred["rules"]:
            k = rule["k"]
            if k not in meas:  # theory lists every K of P; the race ran some
                continue
            t, v = meas[k]
            end = t.max()
            last = float(v[t >= 0.75 * end].mean())
            third = float(v[(t >= 0.5 * end) & (t < 0.75 * end)].mean())
            table = tables[k]
            _, ci = mean_ci(table[table.index >= 0.75 * end].mean(axis=0).to_numpy())
            rows.append({
                "rule": cfg["rule"], "k": k, "l2": l2, "lr": lr, "batch": int(batch),
                "seeds": int(table.shape[1]), "L": c["L"], "c": c["c"], "L_over_c": c["L"] / c["c"],
                "sigma2_batch": c["sigma2_batch"], "start_predicted": c["f0"] - c["f_star"],
                "rate": rule["rate"], "floor_predicted": rule["floor"], "floor_measured": last,
                "floor_measured_ci95": ci if ci is not None else float("nan"),
                "floor_ratio": rule["floor"] / last, "still_falling": last / third,
                "measured_of": column})
    if not rows:
        raise LoadError(f"{a.race}: no run of a K the theory lists")
    write_csv(a.csv, rows)
    print(a.csv)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("race", help="a `stalesgd race --out` folder over l2, lr and batch")
    p.add_argument("--csv", required=True, help="the CSV to write")
    add_theory_arguments(p)
    a = p.parse_args(argv)
    try:
        grid(a)
    except (LoadError, KeyError, OSError) as e:
        print(f"error_grid.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

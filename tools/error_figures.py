#!/usr/bin/python3
"""Predicted against measured error-versus-wallclock curves (the error bounds, Lemma 1 and
Theorem 3' as docs/theory.md derives it, through `stalesgd theory --error`) for a race of
experiments/error-*.toml.

usage:
  tools/error_figures.py curves RACE --out PNG --csv CSV [--stalesgd BIN] [--title T]
  tools/error_figures.py best-k RACE [RACE ...] --out PNG --csv CSV [--stalesgd BIN]
  (both take --constants-samples N and --optimum-epochs N, passed to `theory --error`: fewer
  make a quicker, rougher prediction)

curves  one panel per race: the measured excess loss of each K (mean over seeds, solid) and
        the bound's prediction (dashed), log scale; CSV: per K, E[T] predicted and measured,
        the predicted floor against the measured one (mean over the last quarter; ci95: the
        95% t-interval of the seeds' own last-quarter means), gamma measured (a race run with
        --record-drift) and the floor the bound gives with the measured p0 and gamma, F(w0) - F* predicted and
        measured (mean of the seeds' first snapshots), the predicted and measured error at a
        few budgets and their ratio, p0 against the measured fraction of fresh gradients, and
        `measured_of`: the evals.csv column the measured excess is of (train_objective, or
        train_loss for an older race).
best-k  the best K as a function of the budget t, predicted (argmin of the bound) against
        measured (argmin of the measured mean excess, smoothed over neighbouring snapshots).

Measured excess = F(w) - F*: evals.csv's train_objective (mean cross-entropy over the first
10,000 training samples plus the L2 term l2/2 |W|^2, the objective the bounds are about) minus
the same at w* (theory --error's `train_objective_star`). A race from before that column has
only train_loss: its excess is then the cross-entropy's alone (train_loss minus
`train_loss_star`, no L2 term), and the script says so on stderr. The prediction is computed
by the C++ code only (budgets = the snapshot times), so the formulas live in one place
(src/theory/error_bound.cpp). Needs Debian's python3-pandas and
python3-matplotlib. Bad input: one line, exit 1.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_race import LoadError, load_race  # noqa: E402
from plot import mean_ci  # noqa: E402

AT = [0.4, 2.0, 8.0, 30.0]  # budgets (virtual seconds) the CSVs report: snapshot times


def config_of(race):
    """The one rule, lr, batch, l2, P, delay and seed of the race (K varies)."""
    out = {}
    for key in ("rule", "lr", "batch", "l2", "workers", "delay", "seed", "dataset"):
        values = race.runs[f"config.{key}"].dropna().unique()
        if key != "seed" and len(values) != 1:
            raise LoadError(f"{race.dir}: runs differ in {key} ({list(values)}); one per race")
        out[key] = values[0]
    return out


def predict(binary, cfg, budgets, cache, extra):
    """`stalesgd theory --error --json` for the race's configuration (and `extra` flags),
    cached in the race."""
    args = [binary, "theory", "--error", "--json", "--rule", str(cfg["rule"]),
            "--workers", str(int(cfg["workers"])), "--delay", str(cfg["delay"]),
            "--lr", str(cfg["lr"]), "--batch", str(int(cfg["batch"])), "--l2", str(cfg["l2"]),
            "--dataset", str(cfg["dataset"]), "--seed", str(int(cfg["seed"])),
            "--budget", ",".join(f"{b:.6g}s" for b in budgets)] + extra
    if cache.is_file():
        saved = json.loads(cache.read_text())
        # A prediction cached by an older stalesgd lacks train_objective_star: computed again.
        if saved.get("args") == args[1:] and \
                "train_objective_star" in saved["prediction"]["constants"]:
            return saved["prediction"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise LoadError(f"{' '.join(args)} failed: {r.stderr.strip() or r.stdout.strip()}")
    prediction = json.loads(r.stdout)
    cache.write_text(json.dumps({"args": args[1:], "prediction": prediction}))
    return prediction


def excess_column(race, constants):
    """The measured error's column and F* to subtract: train_objective when every snapshot of
    the race has it, else train_loss (a race from before the column; said on stderr)."""
    snaps = race.snapshots
    if "train_objective" in snaps.columns and snaps["train_objective"].notna().all():
        return "train_objective", constants["train_objective_star"]
    print(f"error_figures.py: note: {race.dir}: evals.csv has no train_objective (a race from "
          "before it); the measured excess is train_loss - train_loss_star, the cross-entropy "
          "without the L2 term", file=sys.stderr)
    return "train_loss", constants["train_loss_star"]


def measured(race, constants):
    """{K: (times, mean excess over seeds)} on the snapshot grid of the race, {K: the excess
    per snapshot time (rows) and seed (columns)}, and the column the excess is of."""
    column, star = excess_column(race, constants)
    snaps = race.snapshots.copy()
    snaps["excess"] = snaps[column] - star
    out, tables = {}, {}
    for k, rows in snaps.groupby("config.k"):
        table = rows.pivot_table(index="wall_s", columns="slug", values="excess").dropna()
        out[int(k)] = (table.index.to_numpy(), table.mean(axis=1).to_numpy())
        tables[int(k)] = table
    return out, tables, column


def fresh_fraction(race):
    """{K: the fraction of applied gradients with staleness 0}, from gradients.csv."""
    g = race.gradients.merge(race.runs[["slug", "config.k"]], on="slug")
    return {int(k): float((rows["staleness"] == 0).mean()) for k, rows in g.groupby("config.k")}


def gamma_measured(race, constants):
    """{K: gamma measured} from a race run with --record-drift (updates.csv's drift_sq and
    grad_sq; {} without them): L^2 E|w_j - w_tau|^2 over the stale gradients, an upper bound
    of E|grad F(w_j) - grad F(w_tau)|^2 by smoothness, over E|grad F(w_j)|^2 = E|g|^2 minus the
    minibatch noise sigma2_batch (measured at w*), both over the whole run and every seed."""
    u = race.updates
    if u is None or "drift_sq" not in u.columns or u["grad_sq"].isna().all():
        return {}
    u = u.merge(race.runs[["slug", "config.k"]], on="slug")
    out = {}
    for k, rows in u.groupby("config.k"):
        drift = rows["drift_sq"].dropna()
        signal = rows["grad_sq"].mean() - constants["sigma2_batch"]
        if drift.empty:
            out[int(k)] = 0.0  # nothing stale
        elif signal <= 0:
            out[int(k)] = float("inf")  # the gradients are all noise: no gamma bounds it
        else:
            out[int(k)] = constants["L"] ** 2 * float(drift.mean()) / signal
    return out


def add_theory_arguments(p):
    """The flags that reach `theory --error`: the binary and its constants' effort."""
    p.add_argument("--stalesgd", default="build/stalesgd", help="the stalesgd binary")
    p.add_argument("--constants-samples", type=int, help="theory --error's, default its own")
    p.add_argument("--optimum-epochs", type=int, help="theory --error's, default its own")


def theory_flags(a):
    """--constants-samples and --optimum-epochs for `theory --error`, where given."""
    extra = []
    for flag, value in (("--constants-samples", a.constants_samples),
                        ("--optimum-epochs", a.optimum_epochs)):
        if value is not None:
            extra += [flag, str(value)]
    return extra


def race_prediction(a, path):
    race = load_race(path, gradients=True, updates=True)
    cfg = config_of(race)
    grid = np.unique(np.round(race.snapshots["wall_s"].to_numpy(), 6))
    grid = grid[grid > 0]
    budgets = sorted(set(np.geomspace(grid.min(), grid.max(), 60).tolist() + AT))
    pred = predict(a.stalesgd, cfg, budgets, Path(path) / "theory-error.json", theory_flags(a))
    return race, cfg, pred


def measured_constants(a, path, cfg, rule, fresh, gamma, floor_meas):
    """The bound again with the run's own p0 (fresh fraction) and gamma, from `theory --error
    --p0 --gamma` for its K (cached in the race), so the formula lives in the C++ code only;
    none where gamma exceeds 1 (the statement does not hold)."""
    if rule["theorem"] == "Lemma 1":
        gamma, gp, floor = 0.0, 1.0, rule["floor"]
    elif not (gamma <= 1.0 and fresh > 0.0):
        gp = floor = float("nan")
    else:
        k = rule["k"]
        again = predict(a.stalesgd, cfg, [1.0], Path(path) / f"theory-error-k{k}-measured.json",
                        theory_flags(a) + ["-k", str(k), "--p0", f"{fresh:.9g}",
                                           "--gamma", f"{gamma:.9g}"])
        gp, floor = again["rules"][0]["gamma_prime"], again["rules"][0]["floor"]
    return {"gamma_measured": gamma, "gamma_prime_measured": gp,
            "floor_predicted_measured_constants": floor,
            "floor_ratio_measured_constants": floor / floor_meas}


def at(times, values, t):
    """The mean of the measured values at snapshots within 20% of t (noise averaged), or at the
    nearest snapshot when none is that close."""
    near = np.abs(times - t) <= 0.2 * t
    if not near.any():
        near = np.abs(times - t) == np.abs(times - t).min()
    return float(values[near].mean())


def curves(a):
    fig, ax = plt.subplots(1, len(a.race), figsize=(6.5 * len(a.race), 4.6), squeeze=False)
    rows = []
    for panel, path in zip(ax[0], a.race):
        race, cfg, pred = race_prediction(a, path)
        meas, tables, column = measured(race, pred["constants"])
        fresh = fresh_fraction(race)
        c = pred["constants"]
        gammas = gamma_measured(race, c)
        spi = race.runs.groupby("config.k")["seconds_per_iteration"].mean()
        budgets = np.array([b["seconds"] for b in pred["budgets"]])
        for i, rule in enumerate(pred["rules"]):
            k = rule["k"]
            if k not in meas:  # theory lists every K of P; the race ran some
                continue
            errors = np.array([b["errors"][i] for b in pred["budgets"]])
            line, = panel.plot(*meas[k], lw=1.4, label=f"K={k} measured")
            panel.plot(budgets, errors, "--", color=line.get_color(), lw=1.2,
                       label=f"K={k} {rule['theorem']}")
            t, v = meas[k]
            floor_meas = float(v[t >= 0.75 * t.max()].mean())
            # Each seed's mean over the last quarter: the floor's 95% interval across seeds.
            table = tables[k]
            _, floor_ci = mean_ci(table[table.index >= 0.75 * t.max()].mean(axis=0).to_numpy())
            row = {"rule": cfg["rule"], "k": k,
                   "seconds_per_iteration_predicted": rule["seconds_per_iteration"],
                   "seconds_per_iteration_measured": float(spi[k]),
                   "p0": rule["p0"], "fresh_measured": fresh.get(k, float("nan")),
                   "gamma": rule["gamma"], "gamma_prime": rule["gamma_prime"],
                   "floor_predicted": rule["floor"], "floor_measured": floor_meas,
                   "floor_measured_ci95": floor_ci if floor_ci is not None else float("nan"),
                   "floor_ratio": rule["floor"] / floor_meas, "measured_of": column,
                   **measured_constants(a, path, cfg, rule, fresh.get(k, float("nan")),
                                        gammas.get(k, float("nan")), floor_meas),
                   # F(w0) - F*: the prediction's (seed of the prediction) and the seeds' mean.
                   "start_predicted": c["f0"] - c["f_star"],
                   "start_measured": float(v[0]) if t[0] == 0 else float("nan")}
            for b in AT:
                j = int(np.argmin(np.abs(budgets - b)))
                m = at(t, v, b)
                row[f"predicted_{b:g}s"] = errors[j]
                row[f"measured_{b:g}s"] = m
                row[f"ratio_{b:g}s"] = errors[j] / m
            rows.append(row)
        panel.set_title(f"{cfg['rule']}, P = {int(cfg['workers'])}: L = {c['L']:.3g}, "
                        f"c = {c['c']:.3g}, sigma^2 = {c['sigma2']:.3g}", fontsize=9)
        panel.set_xscale("log")
        panel.set_yscale("log")
        panel.set_xlabel("virtual seconds")
        panel.set_ylabel("F(w) - F* (training objective excess)" if column == "train_objective"
                         else "CE(w) - CE(w*) (train loss excess, no L2 term)")
        panel.legend(fontsize=7, ncol=2)
        panel.grid(alpha=0.3)
    fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    write_csv(a.csv, rows)


def best_k(a):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    rows = []
    for path in a.race:
        race, cfg, pred = race_prediction(a, path)
        meas, _, _ = measured(race, pred["constants"])
        # The best of the race's own K, predicted and measured (theory lists every K of P).
        ran = [i for i, r in enumerate(pred["rules"]) if r["k"] in meas]
        ks = [pred["rules"][i]["k"] for i in ran]
        budgets = [b["seconds"] for b in pred["budgets"]]
        predicted = [ks[int(np.argmin([b["errors"][i] for i in ran]))] for b in pred["budgets"]]
        measured_best = [min(ks, key=lambda k: at(*meas[k], t)) for t in budgets]
        line, = ax.step(budgets, predicted, "--", where="mid", label=f"{cfg['rule']} predicted")
        ax.step(budgets, measured_best, where="mid", color=line.get_color(),
                label=f"{cfg['rule']} measured")
        for t, p, m in zip(budgets, predicted, measured_best):
            rows.append({"rule": cfg["rule"], "budget_s": t, "best_k_predicted": p,
                         "best_k_measured": m})
    ax.set_xscale("log")
    ax.set_yscale("log", base=2)
    ax.set_xlabel("budget t (virtual seconds)")
    ax.set_ylabel("best K")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    write_csv(a.csv, rows)


def write_csv(path, rows):
    import pandas as pd

    pd.DataFrame(rows).to_csv(path, index=False, float_format="%.6g")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["curves", "best-k"])
    p.add_argument("race", nargs="+", help="`stalesgd race --out` folders, one rule each")
    p.add_argument("--out", required=True, help="the PNG to write")
    p.add_argument("--csv", required=True, help="the summary CSV to write")
    p.add_argument("--title", default="predicted (dashed) against measured (solid)")
    add_theory_arguments(p)
    a = p.parse_args(argv)
    try:
        curves(a) if a.command == "curves" else best_k(a)
    except (LoadError, KeyError, OSError) as e:
        print(f"error_figures.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

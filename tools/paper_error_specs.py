#!/usr/bin/python3
"""The error theory's tables of docs/paper/error-side.md and docs/theory.md (predicted
against measured error, gamma, the best K per budget, and the constants across a grid of
settings), made from tools/error_figures.py's and tools/error_grid.py's CSVs for
tools/paper_tables.py; kept apart because those CSVs change with the error theory."""

from paper_table_specs import EC, fx

EB = "error-best-k.csv"
EG = "error-grid.csv"  # tools/error_grid.py: across lambda, lr and batch


def ratio_text(v):
    return fx(v, 2) if v < 2 else fx(v, 1) if v < 20 else fx(v, 0)


def three(v):
    return fx(v, 3) if v < 1 else f"{v:.3g}"


def number(text):
    """A CSV cell as a float: an empty cell (not defined, e.g. gamma' where gamma > 1) is NaN."""
    return float(text) if text != "" else float("nan")


def error_curves(docs):
    lines = ["| rule | K | E[T] ms predicted / measured | p₀ predicted / measured fresh fraction "
             "| floor predicted / measured (ratio) | at 0.4 s | at 2 s | at 8 s | at 30 s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in docs.rows(EC):
        f = {k: number(v) for k, v in r.items() if k not in ("rule", "measured_of")}
        fresh = "—" if r["rule"] == "k-sync" else f"{f['p0']:.4g} / {f['fresh_measured']:.4g}"
        cells = [r["rule"], r["k"],
                 f"{1e3 * f['seconds_per_iteration_predicted']:#.4g} / "
                 f"{1e3 * f['seconds_per_iteration_measured']:#.4g}", fresh,
                 f"{three(f['floor_predicted'])} / {fx(f['floor_measured'], 4)} ± "
                 f"{fx(f['floor_measured_ci95'], 4)} ({ratio_text(f['floor_ratio'])})"]
        cells += [ratio_text(f[f"ratio_{t}"]) for t in ("0.4s", "2s", "8s", "30s")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def error_gamma(docs):
    """gamma as theory --error assumes it (the drift heuristic) against gamma measured with
    --record-drift, and the floor the bound gives with the run's own p0 and gamma."""
    lines = ["| rule | K | γ heuristic / measured | γ' heuristic / measured "
             "| floor with measured p₀, γ / measured (ratio) |",
             "|---|---:|---:|---:|---:|"]
    for r in docs.rows(EC):
        if r["rule"] == "k-sync":
            continue
        f = {k: number(v) for k, v in r.items() if k not in ("rule", "measured_of")}
        gp = f["gamma_prime_measured"]
        floor = f["floor_predicted_measured_constants"]
        lines.append(
            f"| {r['rule']} | {r['k']} | {fx(f['gamma'], 3)} / {fx(f['gamma_measured'], 3)} | "
            f"{fx(f['gamma_prime'], 3)} / {'— (γ > 1)' if gp != gp else fx(gp, 3)} | "
            + ("— (the statement needs γ ≤ 1)" if floor != floor else
               f"{three(floor)} / {fx(f['floor_measured'], 4)} "
               f"({ratio_text(f['floor_ratio_measured_constants'])})") + " |")
    return "\n".join(lines)


def segments(budgets, ks):
    """'1 up to 1.6 s, 2 to 6.6 s, 4 from 40 s': where the best K changes along the budgets."""
    runs = [(ks[0], budgets[0])]
    for b, k in zip(budgets, ks):
        if k != runs[-1][0]:
            runs.append((k, b))
    words = []
    for i, (k, _) in enumerate(runs):
        if i == len(runs) - 1:
            words.append(f"{k}" + (f" from {runs[i][1]:.2g} s" if i else " throughout"))
        else:
            words.append(f"{k} {'up ' if i == 0 else ''}to {runs[i + 1][1]:.2g} s")
    return ", ".join(words)


def best_k(docs):
    lines = ["| rule | predicted | measured |", "|---|---|---|"]
    for rule in dict.fromkeys(r["rule"] for r in docs.rows(EB)):
        rows = docs.where(EB, rule=rule)
        budgets = [float(r["budget_s"]) for r in rows]
        pred = segments(budgets, [r["best_k_predicted"] for r in rows])
        meas = segments(budgets, [r["best_k_measured"] for r in rows])
        lines.append(f"| {rule} | {pred} | {meas} |")
    return "\n".join(lines)


def error_grid(docs):
    """The constants and the floor per setting of the lambda x lr x batch grid; a measured floor
    still falling (last quarter below 0.9 x the third) is marked, its ratio a lower bound."""
    lines = ["| λ = c | η | m | L (L/c) | σ² of a minibatch | floor predicted / measured "
             "| ratio |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in docs.rows(EG):
        f = {k: number(v) for k, v in r.items() if k not in ("rule", "measured_of")}
        falling = f["still_falling"] < 0.9
        lines.append(
            f"| {r['l2']} | {r['lr']} | {r['batch']} | {fx(f['L'], 2)} ({ratio_text(f['L_over_c'])}) "
            f"| {three(f['sigma2_batch'])} | {three(f['floor_predicted'])} / "
            f"{fx(f['floor_measured'], 4)} ± {fx(f['floor_measured_ci95'], 4)}"
            + (" (still falling)" if falling else "") + f" | {'≥ ' if falling else ''}"
            f"{ratio_text(f['floor_ratio'])} |")
    return "\n".join(lines)


TABLES = {
    "error-grid": ([EG], error_grid),
    "error-curves": ([EC], error_curves),
    "error-gamma": ([EC], error_gamma),
    "error-best-k": ([EB], best_k),
}

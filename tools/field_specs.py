#!/usr/bin/python3
"""The tables of docs/the-field.md (and docs/theory.md's table of the field's rules against their
theory), made for tools/paper_tables.py from the ranking races' CSVs
(tools/paper_figures.py's time_to_target rows, tools/tune_lr.py's choices): rules down, straggler
profiles across. A cell is the time to the target, "mean ± 95% half-width" in virtual seconds,
or "not reached (n/5)" when some seed did not get there; bold marks a column's fastest rule only
when its interval is apart from every other rule's (in the tuned race, any rule whose is). The
same grid holds the tuned race's other measures (the time from which the error stays under the
target, the smoothed crossing, the area under the error: tools/race_metrics.py)."""

import field_grid
from paper_table_specs import apart, fx, grid, pm

SHARED, TUNED = "the-field.csv", "the-field-tuned.csv"
FIELD_THEORY = "field-theory.csv"  # benchmarks/field_theory.py's, for docs/theory.md
THREADS, TUNING = "the-field-threads.csv", "the-field-tuning.csv"
# The tuned race run to the end of its 20 s (no stop at the target), measured three more ways.
STAYS, SMOOTHED = "the-field-tuned-stays.csv", "the-field-tuned-smoothed.csv"
AUC = "the-field-tuned-auc.csv"
PROFILES = ["exp", "fixed", "pareto", "stall"]
RULES = ["sync", "k-sync K=4", "k-batch-sync K=4", "async", "k-async K=4", "k-batch-async K=4",
         "async delay-adaptive", "ringmaster R=8", "rennala S=8", "malenia S=8",
         "mindflayer B=2 t=20ms"]
# The race at each rule's best settings (tools/field_grid.py, tools/tune_knobs.py): its rules are
# named without their knobs, which the tuning chose per cell.
KNOBS, BEST = "the-field-knobs-tuning.csv", "the-field-best.csv"
BEST_STAYS, BEST_AUC = "the-field-best-stays.csv", "the-field-best-auc.csv"
BEST_RULES = [name for name, _, _ in field_grid.RULES]
QUANTITY = "time_to_target"
TUNED_QUANTITY = "val_error, last 0.25 of the time"


def time(c):
    if c.mean is not None:
        return pm(c, 2)
    return f"not reached ({c.row.get('reached', 0)}/{c.row.get('seeds', 0)})"


def area(c):
    """The area under the error in error x seconds, "—" if a seed's snapshots do not cover the
    budget."""
    return pm(c, 3) if c.mean is not None else "—"


def race(csv, profiles=PROFILES, quantity=QUANTITY, at="", show=time, bold=True, rules=RULES):
    """One race's time to the target (or another of its --csv quantities), rules down, profiles
    across."""

    def make(docs):
        cols = [([docs.cell(csv, f"{p} | {r}", quantity, at) for r in rules],
                 lambda i, c: show(c), bold) for p in profiles]
        return grid(["rule", *profiles], ["---"] + ["---:"] * len(profiles), rules, cols)

    return [csv], make


def rates(docs):
    """The rate tune_lr.py chose for each cell."""
    chosen = {r["run"]: r["lr"] for r in docs.rows(TUNING)
              if r["quantity"] == TUNED_QUANTITY and r["chosen"] == "1"}
    text = ["| rule | " + " | ".join(PROFILES) + " |", "|---|" + "---:|" * len(PROFILES)]
    for rule in RULES:
        text.append(f"| {rule} | " + " | ".join(
            fx(float(chosen[f"{p} | {rule}"]), 3).rstrip("0").rstrip(".") for p in PROFILES) +
            " |")
    return "\n".join(text)


def knobs(docs):
    """Each cell's chosen setting and its runner-up (tools/tune_knobs.py), their held-out errors,
    whether the intervals overlap, and the knobs chosen at their grid's edge."""
    rows = docs.rows(KNOBS)
    text = ["| profile | rule | chosen | held-out error | runner-up | held-out error | "
            "intervals | at the grid's edge |", "|---|---|---|---:|---|---:|---|---|"]
    for p in PROFILES:
        for rule in BEST_RULES:
            cell = [r for r in rows if r["run"] == f"{p} | {rule}"]
            first = [r for r in cell if r["rank"] == "1"]
            second = [r for r in cell if r["rank"] == "2"]
            if not first:
                text.append(f"| {p} | {rule} | none scored | — | — | — | — | — |")
                continue
            a, b = first[0], second[0] if second else None

            def err(r):
                return f"{fx(float(r['mean']), 4)} ± {fx(float(r['ci95_half_width']), 4)}"

            verdict = "—" if b is None else ("apart" if a["apart_from_next"] == "1" else "overlap")
            text.append(f"| {p} | {rule} | {a['setting'] or 'its formula: nothing to tune'} | {err(a)} | "
                        f"{b['setting'] if b else '—'} | {err(b) if b else '—'} | {verdict} | "
                        f"{a['at_edge'].replace(';', ', ') or '—'} |")
    return "\n".join(text)


def budget(docs):
    """Runs per rule in the tuning: the first grid's, and those past its edges (tools/field_grid.py
    widen), over the four profiles."""
    rows = docs.rows(KNOBS)
    first = {name: len(PROFILES) * 2 * field_grid.settings(knobs)
             for name, _, knobs in field_grid.RULES}
    text = ["| rule | runs in all | the first grid's | past its edges |", "|---|---:|---:|---:|"]
    for rule in BEST_RULES:
        runs = sum(int(r["seeds"]) for r in rows
                   if r["run"].split(" | ", 1)[1] == rule and r["quantity"] == TUNED_QUANTITY)
        text.append(f"| {rule} | {runs} | {first[rule]} | {runs - first[rule]} |")
    return "\n".join(text)


def threads(docs):
    """The exp profile at the tuned rates: the virtual clock's race beside real threads'."""
    cols = [([docs.cell(csv, f"exp | {r}", QUANTITY) for r in RULES], lambda i, c: time(c), True)
            for csv in (TUNED, THREADS)]
    return grid(["rule (exp, tuned rate)", "virtual clock", "real threads"],
                ["---", "---:", "---:"], RULES, cols)


def field_theory(docs):
    """docs/theory.md's "The field's rules against the theory": each rule's Monte Carlo, its
    closed form where it has one, and the virtual clock's and real threads' ratios to it."""
    text = ["| delays | rule | theory s/iteration (ms) | closed form (ms) | virtual / theory | "
            "threads / theory |", "|---|---|---:|---:|---:|---:|"]
    for r in docs.rows(FIELD_THEORY):
        closed = fx(float(r["closed_form_s"]) * 1e3, 3) if r["closed_form_s"] else "—"
        text.append(f"| {r['profile']} | `{r['rule']}` {r['flags']} | "
                    f"{fx(float(r['theory_s']) * 1e3, 3)} | {closed} | "
                    f"{fx(r['virtual_over_theory'], 3)} | {fx(r['threads_over_theory'], 3)} |")
    return "\n".join(text)


TABLES = {
    "field-theory": ([FIELD_THEORY], field_theory),
    "field-tuned": race(TUNED, bold=apart),
    "field-shared": race(SHARED),
    "field-rates": ([TUNING], rates),
    "field-threads": ([TUNED, THREADS], threads),
    "field-tuned-stays": race(STAYS, quantity="time_to_target_stays", at="test_error<=0.12"),
    "field-tuned-smoothed": race(SMOOTHED, quantity="time_to_target_smoothed",
                                 at="test_error<=0.12"),
    "field-tuned-auc": race(AUC, quantity="error_auc", at="time<=20", show=area),
    "field-knobs": ([KNOBS], knobs),
    "field-budget": ([KNOBS], budget),
    "field-best": race(BEST, quantity="time_to_target", at="test_error<=0.12", bold=apart,
                       rules=BEST_RULES),
    "field-best-stays": race(BEST_STAYS, quantity="time_to_target_stays", at="test_error<=0.12",
                             bold=apart, rules=BEST_RULES),
    "field-best-auc": race(BEST_AUC, quantity="error_auc", at="time<=20", show=area, bold=apart,
                           rules=BEST_RULES),
}

#!/usr/bin/python3
"""The tuned-learning-rate tables of docs/paper/tuned-learning-rates.md,
made for tools/paper_tables.py: each grid race's validation errors by rule and rate, as
tools/tune_lr.py wrote them (the chosen rate marked ✓), and the races at the chosen rates beside
the shared ones, from tools/paper_figures.py's CSVs."""

from paper_table_specs import claim, curves_and_targets, fx, grid, pm

P1R, P5R = "paper-1-tuned-lr.csv", "paper-5-tuned-lr.csv"
F1R, F5R = "fashion-1-tuned-lr.csv", "fashion-5-tuned-lr.csv"
TUNING = ["paper-1-tuning.csv", "paper-5-tuning.csv", "fashion-1-tuning.csv",
          "fashion-5-tuning.csv"]

QUANTITY = "val_error, last 0.25 of the time"


def tuning(csv):
    """Rules down, the grid's rates across: mean validation error over the last quarter ± its
    95% half-width, the chosen rate marked ✓ (by the mean; tune_lr.py's apart_from_next says
    whether its interval is apart from the next best's)."""

    def make(docs):
        rows = [r for r in docs.rows(csv) if r["quantity"] == QUANTITY]
        rules = list(dict.fromkeys(r["run"] for r in rows))
        rates = sorted({float(r["lr"]) for r in rows})
        cols = []
        for lr in rates:
            cells = [docs.cell(csv, rule, QUANTITY, f"lr={lr:g}") for rule in rules]

            def show(i, c):
                text = pm(c, 4) if c.mean is not None else "— (diverged)"
                return text + (" ✓" if c.row["chosen"] == "1" else "")

            cols.append((cells, show, False))
        head = ["validation error, last quarter"] + [f"lr {fx(lr, 4).rstrip('0').rstrip('.')}"
                                                     for lr in rates]
        return grid(head, ["---"] + ["---:"] * len(rates), rules, cols)

    return [csv], make


def raced(curves, targets, runs, times, first, smoothed, head_times):
    """The race at the chosen rates (5 seeds): test error, then the times to the targets."""
    return curves_and_targets(curves, first, smoothed, runs, times,
                              ["mean of 5 seeds"] + head_times, targets, 2)


P1_RUNS = ["sync, lr 0.2 (shared, tuned)", "async, lr 0.2 (shared)", "async, lr 0.025 (tuned)"]
P5_RUNS = ["fixed, lr 0.5 (shared)", "dutta:c=0.3, lr 0.5 (shared)",
           "inv-staleness, lr 0.5 (shared)", "fixed, lr 0.1 (reference, tuned)",
           "dutta:c=0.3, lr 0.1 (tuned)", "inv-staleness, lr 0.2 (tuned)"]
F1_RUNS = ["sync, lr 0.1 (shared)", "async, lr 0.1 (shared)", "sync, lr 0.3 (tuned)",
           "async, lr 0.03 (tuned)"]
F5_RUNS = ["fixed, lr 0.3 (shared)", "dutta:c=0.3, lr 0.3 (shared)", "fixed, lr 0.05 (reference)",
           "fixed, lr 0.03 (tuned)", "dutta:c=0.3, lr 0.03 (tuned)"]
F_TIMES = ["t=0.5", "t=2", "t=5", "t=10", "last quarter"]
F_HEAD = ["test error at 0.5 s", "2 s", "5 s", "10 s", "last quarter"]

TABLES = {
    "paper-1-tuning": tuning("paper-1-tuning.csv"),
    "paper-5-tuning": tuning("paper-5-tuning.csv"),
    "fashion-1-tuning": tuning("fashion-1-tuning.csv"),
    "fashion-5-tuning": tuning("fashion-5-tuning.csv"),
    "paper-1-tuned": raced("paper-1-tuned-lr.csv", ["0.12", "0.1"], P1_RUNS,
                           ["t=0.2", "t=1", "t=5", "t=20", "last quarter"],
                           "paper-1-tuned-lr-target.csv", "paper-1-tuned-lr-target-smoothed.csv",
                           ["test error at 0.2 s", "1 s", "5 s", "20 s", "last quarter"]),
    "paper-5-tuned": raced("paper-5-tuned-lr.csv", ["0.05", "0.03"], P5_RUNS,
                           ["t=1", "t=5", "t=10", "last quarter"],
                           "paper-5-tuned-lr-target.csv", "paper-5-tuned-lr-target-smoothed.csv",
                           ["test error at 1 s", "5 s", "10 s", "last quarter"]),
    "fashion-1-tuned": raced("fashion-1-tuned-lr.csv", ["0.2", "0.15"], F1_RUNS, F_TIMES,
                             "fashion-1-tuned-lr-target.csv",
                             "fashion-1-tuned-lr-target-smoothed.csv", F_HEAD),
    "fashion-5-tuned": raced("fashion-5-tuned-lr.csv", ["0.2", "0.15"], F5_RUNS, F_TIMES,
                             "fashion-5-tuned-lr-target.csv",
                             "fashion-5-tuned-lr-target-smoothed.csv", F_HEAD),
}


def beyond_row(docs):
    """The "beyond the seven" row of findings 1 and 5 at tuned rates (paper_summary_specs)."""
    last = lambda name, run: pm(docs.cell(name, run, "test_error", "last quarter"), 3)  # noqa
    chosen = [r for name in TUNING for r in docs.rows(name) if r["chosen"] == "1"]
    overlapping = sum(r["apart_from_next"] == "0" for r in chosen)
    a1, s1 = P1_RUNS[2], P1_RUNS[0]
    fa, fs = F1_RUNS[3], F1_RUNS[2]
    rate = {r["run"]: float(r["lr"]) for r in docs.rows(TUNING[0]) if r["chosen"] == "1"}
    text = (
        "each rule's rate chosen on held-out training samples: 1: async's best rate is "
        f"{fx(rate['sync'] / rate['async'], 0)}x smaller than sync's on MNIST and then ends "
        f"lower, {last(P1R, a1)} against "
        f"{last(P1R, s1)}" + claim("below", P1R, a1, s1, "test_error", "last quarter")
        + f" (Fashion-MNIST: {last(F1R, fa)} against {last(F1R, fs)}"
        + claim("below", F1R, fa, fs, "test_error", "last quarter")
        + "), so sync's lower floor is the shared rate's; 5: tuned, the fixed rate and "
        f"`dutta:c=0.3` end the same ({last(P5R, P5_RUNS[3])} and {last(P5R, P5_RUNS[4])}"
        + claim("overlap", P5R, P5_RUNS[3], P5_RUNS[4], "test_error", "last quarter")
        + "): the staleness-dependent rate guards against a rate chosen too large; "
        f"{overlapping} of the {len(chosen)} chosen rates' intervals overlap the next best's")
    return ("| findings 1 and 5 at tuned rates ([its page](paper/tuned-learning-rates.md)) | "
            + text + " |")

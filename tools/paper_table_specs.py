#!/usr/bin/python3
"""How the findings' tables of docs/paper/*.md are made from the CSVs of docs/data/,
and the helpers the other specs share (paper_summary_specs.py: the prose tables;
paper_error_specs.py: the error theory's). Read by tools/paper_tables.py, which owns the
markers, the --check and the claims.

TABLES maps a table's NAME to (its CSV files, a function of paper_tables.Docs returning the
markdown). Means are printed as "mean ± 95% half-width" at one rounding per cell; a missing
mean (not every seed got there) is "—". Bold marks the lowest mean of a column (or of a group
of rows compared with each other) only when its 95% interval is apart from every other's.
"""

from decimal import ROUND_HALF_UP, Decimal

P1, P1T = "paper-1-sync-vs-async.csv", "paper-1-time-to-target.csv"
P2, P2S = "paper-2-k-sync-tradeoff.csv", "paper-2-k-sync-seconds-per-iteration.csv"
P3, P3S = "paper-3-k-batch-async.csv", "paper-3-seconds-per-iteration.csv"
P4, P5 = "paper-4-runtime-ratio.csv", "paper-5-staleness-lr.csv"
P6T, P6R = "paper-6-adasync-time-to-target.csv", "paper-6-adasync-real.csv"
P6S = "paper-6-adasync-time-to-target-smoothed.csv"  # the smoothed crossing (3 snapshots' mean)
P6A = "paper-6-adasync-all-runs.csv"  # the figure's paper-6-adasync.csv has 5 of the 7 runs
P7, P7S = "paper-7-shifted-exp.csv", "paper-7-seconds-per-iteration.csv"
P7A = "paper-7-all-runs.csv"  # the controls, which the figure's paper-7-shifted-exp.csv leaves out
KB, KBS, KBT = ("k-batch-sync-vs-k-sync.csv", "k-batch-sync-vs-k-sync-time.csv",
                "k-batch-sync-vs-k-sync-target.csv")
KBTS = "k-batch-sync-vs-k-sync-target-smoothed.csv"
F1, F1T = "fashion-1-sync-vs-async.csv", "fashion-1-target.csv"
F1TS, F2TS = "fashion-1-target-smoothed.csv", "fashion-2-target-smoothed.csv"
F2, F2S, F2T = ("fashion-2-k-sync-tradeoff.csv", "fashion-2-seconds-per-iteration.csv",
                "fashion-2-target.csv")
F5, THEORY = "fashion-5-staleness-lr.csv", "paper-theory.csv"
EC = "error-curves.csv"  # its tables: tools/paper_error_specs.py


def fx(value, decimals):
    """value at decimals, halves rounded up as the CSV's decimal text reads ("—" if None)."""
    if value is None:
        return "—"
    step = Decimal(1).scaleb(-decimals)
    return str(Decimal(repr(float(value))).quantize(step, ROUND_HALF_UP))


def pm(cell, decimals):
    """'mean ± half-width', the mean alone without a half-width, '—' without a mean."""
    if cell.mean is None:
        return "—"
    half = "" if cell.half is None else f" ± {fx(cell.half, decimals)}"
    return f"{fx(cell.mean, decimals)}{half}"


def best(cells):
    """Index of the lowest mean whose 95% interval lies below every other's, or None."""
    known = [(c.mean, i) for i, c in enumerate(cells) if c is not None and c.mean is not None]
    if len(known) < 2 or any(cells[i].half is None for _, i in known):
        return None
    low = min(known)[1]
    top = cells[low].mean + cells[low].half
    others = [cells[i] for _, i in known if i != low]
    return low if all(top < c.mean - c.half for c in others) else None


def apart(cells):
    """Indices of the cells whose 95% interval is apart from every other known cell's, the
    slowest as well as the fastest."""
    known = [i for i, c in enumerate(cells) if c is not None and c.mean is not None]
    if len(known) < 2 or any(cells[i].half is None for i in known):
        return set()
    lo = {i: cells[i].mean - cells[i].half for i in known}
    hi = {i: cells[i].mean + cells[i].half for i in known}
    return {i for i in known if all(hi[i] < lo[j] or hi[j] < lo[i] for j in known if j != i)}


def grid(header, align, labels, columns, groups=None):
    """A markdown table: labels down the first column, then one (cells, formatter, bold?) per
    column; bold is decided within each group of row indices (default: all rows): True bolds
    best()'s cell, a function of the cells (apart) the indices it returns."""
    groups = groups or [list(range(len(labels)))]
    text = [[label] for label in labels]
    for cells, show, bolded in columns:
        marks = set()
        for group in groups if bolded else []:
            if callable(bolded):
                marks |= {group[i] for i in bolded([cells[i] for i in group])}
                continue
            low = best([cells[i] for i in group])
            marks |= {group[low]} if low is not None else set()
        for i, c in enumerate(cells):
            cell = show(i, c) if c is not None else ""
            main, theory_ = cell.split(" (", 1) if cell.endswith(")") else (cell, "")
            # Bold the measurement, not the theory in brackets after it.
            text[i].append(f"**{main}**" + (f" ({theory_}" if theory_ else "") if i in marks
                           else cell)
    rows = [header, *text]
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    lines.insert(1, "|" + "|".join(align) + "|")
    return "\n".join(lines).replace("|  |", "| |")


def theory(docs, delay, rule, k):
    """Predicted ms per iteration from paper-theory.csv: the closed form where there is one,
    else the Monte-Carlo estimate (marked MC)."""
    row = docs.where(THEORY, delay=delay, rule=rule, k=k)[0]
    return (float(row["closed_form_ms"]), "") if row["closed_form_ms"] else (
        float(row["monte_carlo_ms"]), " MC")


def ms_theory(cell, predicted, decimals):
    value, mark = predicted
    return f"{pm(cell, decimals)} ({fx(value, decimals)}{mark})"


def staleness(cell, decimals):
    v = float(cell.row["mean_staleness"])
    return "0" if v == 0 else fx(v, decimals)


def claim(verb, name, a, b, quantity, at=""):
    """The marker of a sentence comparing runs a and b, which paper_tables.py --check tests."""
    return f'<!-- claim: {verb} docs/data/{name} "{a}" "{b}" {quantity} "{at}" -->'


def curves_and_targets(curves, first, smoothed, runs, times, head, targets, target_decimals):
    """(files, make) of a race's table: test error at `times` (and "last quarter"), then the
    seconds to each target, first snapshot and smoothed crossing, from tools/paper_figures.py's
    curves and bars CSVs. `head` names the first column and the `times` columns."""

    def make(docs):
        cols = [column(docs, curves, runs, "test_error", at, by_pm(3)) for at in times]
        heads = list(head)
        for target in targets:
            cols.append(column(docs, first, runs, "time_to_target", f"test_error<={target}",
                               by_pm(target_decimals)))
            cols.append(column(docs, smoothed, runs, "time_to_target_smoothed",
                               f"test_error<={target}", by_pm(target_decimals)))
            heads += [f"to {target}, s (first)", "(smoothed)"]
        return grid(heads, ["---"] + ["---:"] * (len(heads) - 1), runs, cols)

    return [curves, first, smoothed], make


def column(docs, name, runs, quantity, at, show, bolded=True):
    return ([docs.cell(name, r, quantity, at) for r in runs], show, bolded)


def by_pm(decimals):
    """Formatter: mean ± half-width at decimals (one per row if a list)."""
    return lambda i, c: pm(c, decimals[i] if isinstance(decimals, list) else decimals)


# ---------------------------------------------------------------- the findings


def finding_1(docs):
    runs = ["sync", "async"]
    times = ["t=0.2", "t=0.5", "t=1", "t=2", "t=5", "t=20", "last quarter"]
    labels = ["test error, sync", "test error, async", "training loss, sync",
              "training loss, async"]
    cols = []
    for at in times:
        err = [docs.cell(P1, r, "test_error", at) for r in runs]
        loss = [docs.cell(P1, r, "train_loss", at) for r in runs]
        d = 3 if at == "last quarter" else 2
        cols.append((err + loss, lambda i, c, d=d: pm(c, 3 if i < 2 else d), True))
    head = ["", "0.2 s", "0.5 s", "1 s", "2 s", "5 s", "20 s", "last quarter (22.5-30 s)"]
    return grid(head, ["---"] + ["---:"] * 7, labels, cols, [[0, 1], [2, 3]])


def finding_1_target(docs):
    targets = ["0.3", "0.2", "0.15", "0.12"]
    cols = [column(docs, P1T, ["sync", "async"], "time_to_target", f"test_error<={t}", by_pm(2))
            for t in targets]
    head = ["seconds to the first snapshot with test error ≤"] + targets
    return grid(head, ["---"] + ["---:"] * 4, ["sync", "async"], cols)


def finding_2(docs):
    runs, ks = ["K=1", "K=2", "K=4", "K=8 (sync)"], [1, 2, 4, 8]
    dec = [3, 2, 2, 1]
    spi = [docs.cell(P2S, r, "seconds_per_iteration") for r in runs]
    pred = [theory(docs, "exp:mean=10ms", "k-sync", k) for k in ks]
    cols = [(spi, lambda i, c: ms_theory(c, pred[i], dec[i]), False)]
    for at in ["t=0.5", "t=10", "last quarter", "iteration=500", "iteration=2000"]:
        cols.append(column(docs, P2, runs, "test_error", at, by_pm(3)))
    head = ["K", "ms / iteration (theory)", "test error at 0.5 s", "at 10 s",
            "last quarter of 60 s", "at iteration 500", "at iteration 2,000"]
    return grid(head, ["---:"] * 7, [str(k) for k in ks], cols)


def finding_3(docs):
    runs = ["k-async K=4", "k-batch-async K=4", "k-async K=8", "k-batch-async K=8"]
    rules, ks, dec = ["k-async", "k-batch-async"] * 2, [4, 4, 8, 8], [2, 2, 1, 2]
    spi = [docs.cell(P3S, r, "seconds_per_iteration") for r in runs]
    pred = [theory(docs, "exp:mean=10ms", rule, k) for rule, k in zip(rules, ks)]
    cols = [(spi, lambda i, c: ms_theory(c, pred[i], dec[i]), True),
            (spi, lambda i, c: staleness(c, 2), False)]
    for at in ["iteration=250", "iteration=1000", "iteration=2000", "last quarter"]:
        cols.append(column(docs, P3, runs, "test_error", at, by_pm(3)))
    labels = ["K-async K = 4", "K-batch-async K = 4", "K-async K = 8", "K-batch-async K = 8"]
    head = ["run", "ms / iteration (theory)", "mean staleness", "test error at iteration 250",
            "1,000", "2,000", "last quarter"]
    return grid(head, ["---"] + ["---:"] * 6, labels, cols, [[0, 1], [2, 3]])


def ms(v):
    return fx(v, 3) if v < 1 else fx(v, 2)


def finding_4(docs):
    def two(v):  # 3.00, 8.33, 21.7, 129.9: the doc's rounding of ratios
        return fx(v, 2) if v < 10 else fx(v, 1)
    lines = ["| P | P·H_P | virtual: E[T_sync] ms | E[T_async] ms | ratio | real: E[T_sync] ms "
             "| E[T_async] ms | ratio |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in sorted({int(r["workers"]) for r in docs.rows(P4)}):
        cells = [str(p), two(float(docs.where(P4, workers=p)[0]["theory_P_H_P"]))]
        for clock in ("virtual", "real"):
            r = docs.where(P4, clock=clock, workers=p)[0]
            ratio, half = float(r["ratio"]), float(r["ratio_ci95_half_width"])
            digits = 2 if ratio < 10 else 1
            cells += [fx(1e3 * float(r['sync_seconds_per_iteration']), 1),
                      ms(1e3 * float(r["async_seconds_per_iteration"])),
                      f"{fx(ratio, digits)} ± {fx(half, digits)}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def finding_5(docs):
    runs = ["fixed lr 0.5", "dutta:c=0.3, lr_max 0.5", "inv-staleness, lr 0.5",
            "fixed lr 0.1 (reference)"]
    dec = [2, 3, 3, 3]
    cols = [column(docs, P5, runs, "test_error", at, by_pm(dec))
            for at in ["t=1", "t=5", "t=20", "last quarter"]]
    cols.append(column(docs, P5, runs, "train_loss", "last quarter", by_pm(dec)))
    labels = ["fixed 0.5", "`dutta:c=0.3`, lr_max 0.5", "`inv-staleness`, lr 0.5", "fixed 0.1"]
    head = ["", "test error at 1 s", "5 s", "20 s", "last quarter",
            "training loss, last quarter"]
    return grid(head, ["---"] + ["---:"] * 5, labels, cols)


def finding_6(docs):
    runs = ["K=1", "K=2", "K=4", "K=8", "K=16 (sync)", "AdaSync K0=2", "AdaSync K0=4"]
    cols = [column(docs, P6T, runs, "time_to_target", f"test_error<={t}", by_pm(1))
            for t in ["0.09", "0.088", "0.085", "0.083", "0.08"]]
    cols.append(column(docs, P6A, runs, "test_error", "last quarter", by_pm([3, 3] + [4] * 5)))
    real = [docs.cell(P6R, r, "time_to_target") if r in ("K=2", "K=4", "K=8") or "Ada" in r
            else None for r in runs]
    cols.append((real, by_pm(1), True))
    labels = [r.replace("=", " = ").replace("K0 = ", "K0 = ") for r in runs]
    head = ["run", "≤ 0.09", "≤ 0.088", "≤ 0.085", "≤ 0.083", "≤ 0.080",
            "test error, last quarter", "real clock, ≤ 0.085"]
    return grid(head, ["---"] + ["---:"] * 7, labels, cols)


def finding_6_smoothed(docs):
    runs = ["K=1", "K=2", "K=4", "K=8", "K=16 (sync)", "AdaSync K0=2", "AdaSync K0=4"]
    targets = ["0.09", "0.088", "0.085", "0.083", "0.08"]
    cols = [column(docs, P6S, runs, "time_to_target_smoothed", f"test_error<={t}", by_pm(1))
            for t in targets]
    labels = [r.replace("=", " = ") for r in runs]
    head = ["smoothed crossing (3 snapshots' mean), s"] + [f"≤ {t}" for t in targets]
    return grid(head, ["---"] + ["---:"] * 5, labels, cols)


def finding_7(docs):
    shifted = [f"{rule} K={k}, shifted-exp" for k in (2, 4) for rule in ("K-sync", "K-async")]
    control = ["K-sync K=4, exp (control)", "K-async K=4, exp (control)"]
    runs = shifted + control
    delays = ["shifted-exp:shift=10ms,mean=2ms"] * 4 + ["exp:mean=12ms"] * 2
    pred = [theory(docs, d, r.split()[0].lower(), int(r.split()[1][2])) for d, r in
            zip(delays, runs)]
    spi = [docs.cell(P7S, r, "seconds_per_iteration") for r in runs]
    cols = [(spi, lambda i, c: ms_theory(c, pred[i], 2), True),
            (spi, lambda i, c: staleness(c, 1), False)]
    for at in ["t=5", "t=15", "iteration=250", "iteration=1300"]:
        cells = [docs.cell(P7 if r in shifted else P7A, r, "test_error", at) for r in runs]
        cols.append((cells, by_pm(3), True))
    labels = [r.replace("=", " = ") for r in runs]
    head = ["run", "ms / iteration (theory)", "mean staleness", "test error at 5 s", "at 15 s",
            "at iteration 250", "at iteration 1,300"]
    return grid(head, ["---"] + ["---:"] * 6, labels, cols, [[0, 1], [2, 3], [4, 5]])


def k_batch_sync(docs):
    runs = [f"{rule} K={k}" for k in (2, 4) for rule in ("k-sync", "k-batch-sync")]
    spi = [docs.cell(KBS, r, "seconds_per_iteration") for r in runs]
    pred = [theory(docs, "exp:mean=10ms", r.split()[0], int(r[-1])) for r in runs]
    cols = [(spi, lambda i, c: ms_theory(c, pred[i], 3), True)]
    for at in ["iteration=2000", "t=5", "last quarter"]:
        cols.append(column(docs, KB, runs, "test_error", at, by_pm(4)))
    for t in ["0.1", "0.09"]:
        decimals = [2, 2, 2, 2] if t == "0.1" else [1, 1, 2, 2]
        cols.append(column(docs, KBT, runs, "time_to_target", f"test_error<={t}",
                           by_pm(decimals)))
        cols.append(column(docs, KBTS, runs, "time_to_target_smoothed", f"test_error<={t}",
                           by_pm(decimals)))
    head = ["run", "ms / iteration (theory)", "test error at iteration 2,000", "at 5 s",
            "last quarter of 20 s", "time to 0.1, s (first)", "(smoothed)",
            "time to 0.09, s (first)", "(smoothed)"]
    labels = [r.replace("=", " = ") for r in runs]
    return grid(head, ["---"] + ["---:"] * 8, labels, cols, [[0, 1], [2, 3]])


# ---------------------------------------------------------------- Fashion-MNIST


def fashion_1(docs):
    runs = ["sync", "async"]
    cols = [column(docs, F1, runs, "test_error", at, by_pm(3))
            for at in ["t=0.5", "t=1", "t=2", "t=5", "t=10", "last quarter"]]
    cols.append(column(docs, F1T, runs, "time_to_target", "test_error<=0.2", by_pm(1)))
    cols.append(column(docs, F1TS, runs, "time_to_target_smoothed", "test_error<=0.2", by_pm(1)))
    head = ["mean of 5 seeds", "test error at 0.5 s", "1 s", "2 s", "5 s", "10 s",
            "last quarter", "time to 0.2, s (first)", "(smoothed)"]
    return grid(head, ["---"] + ["---:"] * 8, runs, cols)


def fashion_2(docs):
    runs = ["K=1", "K=2", "K=4", "K=8"]
    spi = [docs.cell(F2S, r, "seconds_per_iteration") for r in runs]
    cols = [(spi, lambda i, c: pm(c, 2 if i < 3 else 1), False)]
    cols += [column(docs, F2, runs, "test_error", at, by_pm(3))
             for at in ["iteration=300", "t=1", "t=10", "last quarter"]]
    for t in ("0.2", "0.15"):
        cols.append(column(docs, F2T, runs, "time_to_target", f"test_error<={t}", by_pm(1)))
        cols.append(column(docs, F2TS, runs, "time_to_target_smoothed", f"test_error<={t}",
                           by_pm(1)))
    head = ["K", "ms / iteration", "test error at iteration 300", "at 1 s", "at 10 s",
            "last quarter", "time to 0.2, s (first)", "(smoothed)", "time to 0.15, s (first)",
            "(smoothed)"]
    return grid(head, ["---:"] * 10, ["1", "2", "4", "8"], cols)


def fashion_5(docs):
    runs = ["fixed lr 0.3", "dutta:c=0.3, lr_max 0.3", "fixed lr 0.05 (reference)"]
    cols = [column(docs, F5, runs, "test_error", at, by_pm(3)) for at in ["t=1", "t=5", "t=10"]]
    ends = [docs.cell(F5, r, "test_error", "t=10") for r in runs]
    cols.append((ends, lambda i, c: ", ".join(fx(v, 3) for v in sorted(c.values)), False))
    labels = ["fixed lr 0.3", "`dutta:c=0.3`, lr_max 0.3", "fixed lr 0.05"]
    head = ["mean of 5 seeds", "test error at 1 s", "5 s", "10 s", "the 5 seeds at 10 s"]
    return grid(head, ["---"] + ["---:"] * 3 + ["---"], labels, cols)


TABLES = {
    "finding-1": ([P1], finding_1),
    "finding-1-target": ([P1T], finding_1_target),
    "finding-2": ([P2S, P2, THEORY], finding_2),
    "finding-3": ([P3S, P3, THEORY], finding_3),
    "finding-4": ([P4], finding_4),
    "finding-5": ([P5], finding_5),
    "finding-6": ([P6T, P6A, P6R], finding_6),
    "finding-6-smoothed": ([P6S], finding_6_smoothed),
    "finding-7": ([P7S, P7, P7A, THEORY], finding_7),
    "k-batch-sync": ([KBS, KB, KBT, KBTS, THEORY], k_batch_sync),
    "fashion-1": ([F1, F1T, F1TS], fashion_1),
    "fashion-2": ([F2S, F2, F2T, F2TS], fashion_2),
    "fashion-5": ([F5], fashion_5),
}

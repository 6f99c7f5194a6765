#!/usr/bin/python3
"""The tables of docs/machine.md (the machine model against threads, MPI ranks and its
projection) and docs/performance.md's TorchScript step, made for tools/paper_tables.py from the
CSVs that benchmarks/machine_model.py, tools/machine_projection.py and
benchmarks/torchscript_step.sh write."""

import statistics

from paper_table_specs import fx

THREADS, MPI, PROJECTION = "machine-threads.csv", "machine-mpi.csv", "machine-projection.csv"
TORCHSCRIPT = "torchscript-step.csv"
# The models' sizes (from their definitions, docs/models.md), which the CSV does not repeat.
PARAMETERS = {"mlp": ("mlp 784-128-10", "101,770"), "lenet": ("lenet", "61,706"),
              "bn-cnn": ("bn-cnn", "421,834"), "resnet": ("resnet", "4,904,650")}


def table(header, align, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|",
                      *("| " + " | ".join(r) + " |" for r in rows)])


def n(value, decimals=0):
    return fx(float(value), decimals)


def threads(docs):
    """(a): each configuration's measured updates/s against the machine model and the free
    machine."""
    return table(["model", "rule", "P", "K", "measured updates/s (95%)", "machine model",
                  "measured / machine (95%)", "free machine", "measured / free"],
                 ["---"] + ["---:"] * 8,
                 [[r["model"], r["rule"], r["workers"], r["k"],
                   f"{n(r['measured_updates_per_s'])} ± {n(r['measured_ci95'])}",
                   n(r["machine_updates_per_s"]),
                   f"{n(r['measured_over_machine'], 2)} ± {n(r['measured_over_machine_ci95'], 2)}",
                   n(r["free_updates_per_s"]), n(r["measured_over_free"], 2)]
                  for r in docs.rows(THREADS)])


def mpi(docs):
    """(b): the same on MPI ranks, with the link also taken as a network."""
    return table(["model", "rule", "worker ranks", "K", "measured updates/s (95%)",
                  "machine model", "measured / machine (95%)", "as a network",
                  "measured / network", "free machine", "measured / free"],
                 ["---", "---"] + ["---:"] * 9,
                 [[r["model"], r["rule"], r["workers"], r["k"],
                   f"{n(r['measured_updates_per_s'])} ± {n(r['measured_ci95'])}",
                   n(r["machine_updates_per_s"]),
                   f"{n(r['measured_over_machine'], 2)} ± {n(r['measured_over_machine_ci95'], 2)}",
                   n(r["network_updates_per_s"]), n(r["measured_over_network"], 2),
                   n(r["free_updates_per_s"]), n(r["measured_over_free"], 2)]
                  for r in docs.rows(MPI)])


def projection(docs):
    """Gradients applied per second at P = 16, 64, 1024, with 1 / 4 / 16 shards."""
    shown = [("mlp", "64-core box", "async"), ("mlp", "64-core box", "sync"),
             ("mlp", "cluster, 10 Gbit/s", "async"), ("mlp", "cluster, 10 Gbit/s", "sync"),
             ("lenet", "64-core box", "async"), ("lenet", "cluster, 10 Gbit/s", "async")]

    def cell(model, machine, rule, p):
        return " / ".join(
            n(docs.where(PROJECTION, model=model, machine=machine, rule=rule, workers=p,
                         shards=s)[0]["gradients_per_s"]) for s in (1, 4, 16))

    return table(["model", "machine", "rule", "P = 16", "P = 64", "P = 1024"], ["---"] * 6,
                 [[m, machine, rule, *(cell(m, machine, rule, p) for p in (16, 64, 1024))]
                  for m, machine, rule in shown])


def torchscript(docs):
    """docs/performance.md: medians over the rounds of one step's seconds, the median and the
    range of the per-round ratios; bold where every round's TorchScript / PyTorch is below 1."""
    steps = {(r["round"], r["model"], r["system"]): float(r["s_per_step"])
             for r in docs.rows(TORCHSCRIPT)}
    rounds = sorted({k[0] for k in steps}, key=int)

    def time(s):
        return f"{float(f'{s * 1e6:.3g}'):g} µs" if s < 1e-3 else f"{s * 1e3:.3g} ms"

    def ratios(model, a, b):
        v = [steps[(k, model, a)] / steps[(k, model, b)] for k in rounds
             if (k, model, a) in steps and (k, model, b) in steps]
        if not v:
            return "—", False
        return (f"{n(statistics.median(v), 2)} ({n(min(v), 2)}–{n(max(v), 2)})",
                max(v) < 1)

    rows = []
    for model, (label, parameters) in PARAMETERS.items():
        median = {s: [steps[(k, model, s)] for k in rounds if (k, model, s) in steps]
                  for s in ("torchscript", "pytorch", "builtin")}
        shown = [time(statistics.median(v)) if v else "—" for v in median.values()]
        ratio, below = ratios(model, "torchscript", "pytorch")
        rows.append([label, parameters, *shown, f"**{ratio.split(' ')[0]}** {ratio.split(' ', 1)[1]}"
                     if below else ratio, ratios(model, "builtin", "torchscript")[0]])
    return table(["model", "parameters", "stalesgd + TorchScript", "PyTorch loop", "built-in",
                  "TorchScript / PyTorch", "built-in / TorchScript"], ["---"] + ["---:"] * 6,
                 rows)


TABLES = {
    "machine-threads": ([THREADS], threads),
    "machine-mpi": ([MPI], mpi),
    "machine-projection": ([PROJECTION], projection),
    "torchscript-step": ([TORCHSCRIPT], torchscript),
}

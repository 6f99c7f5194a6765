#!/usr/bin/python3
"""The machine model against measurement (docs/machine.md), side by side in one run.

(a) The thread engine on this machine, no injected delay: updates per second measured, against
    the machine model (`stalesgd calibrate`, then `theory --machine FILE --cores N`) and against
    the free machine the paper assumes (`theory --compute-time C`: a core per worker, a server
    that takes no time). Calibration runs first, in the same run.
(b) With --mpi-workers 2 8: the MPI engine on this host (tools/mpirun.sh; rank 0 the server,
    one worker per rank), against the machine model that `stalesgd calibrate` measures under
    mpirun (its link from a ping-pong between two ranks: shared memory, whose copies are work on
    the cores), and against the same link taken as a network (copies beside the cores).
(c) With stragglers (exp:mean=20ms) the machine model's prediction against the free machine's.

usage: benchmarks/machine_model.py [--build DIR] [--models mlp softmax] [--rules async k-sync]
           [--workers 1 2 4 8 16] [--seconds 2] [--rounds 3] [--cores N] [--csv FILE]
           [--stragglers-csv FILE]
           [--mpi-workers 2 8] [--mpi-csv FILE] [--figure FILE]
k-sync runs with K = max(1, P / 2). Each of --rounds rounds calibrates, then measures every
configuration and predicts it from that calibration; rates and measured/predicted ratios are the
rounds' means with their 95% intervals.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"machine_model.py: {' '.join(cmd)} failed: {out.stderr.strip()}")
    return out.stdout


def k_of(rule, workers):
    return max(1, workers // 2) if rule == "k-sync" else 1


def theory_rate(cli, workers, rule, delay, flags):
    cmd = [cli, "theory", "--workers", str(workers), "--rule", rule, "--delay", delay, "--json",
           "--saturation-max", "1"]
    if rule == "k-sync":
        cmd += ["--k", str(k_of(rule, workers))]
    j = json.loads(run(cmd + flags))
    return 1.0 / j["rules"][0]["monte_carlo"]["seconds_per_iteration"]


def measured_rate(cli, model, rule, workers, seconds, tmp, mpi=False):
    out = os.path.join(tmp, f"{model}-{rule}-{workers}{'-mpi' if mpi else ''}")
    cmd = [cli, "train", "--model", model, "--rule", rule, "--workers", str(workers),
           "--time", f"{seconds}s", "--eval-every", "1000s", "--no-progress", "--force",
           "--out", out]
    if mpi:
        cmd = ["tools/mpirun.sh", "-np", str(workers + 1)] + cmd + ["--engine", "mpi"]
    if rule == "k-sync":
        cmd += ["--k", str(k_of(rule, workers))]
    run(cmd)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return s["iterations"] / s["wall_s"]


def mean_ci(xs):
    """The mean and the half-width of its 95% interval (Student t)."""
    t95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
           9: 2.262}
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, float("nan")
    sd = (sum((x - mean) ** 2 for x in xs) / (n - 1)) ** 0.5
    return mean, t95.get(n - 1, 1.96) * sd / n ** 0.5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--models", nargs="+", default=["mlp", "softmax"])
    ap.add_argument("--rules", nargs="+", default=["async", "k-sync"])
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--csv", default=None)
    ap.add_argument("--stragglers-csv", default=None)
    ap.add_argument("--mpi-workers", nargs="*", type=int, default=[])
    ap.add_argument("--mpi-csv", default=None)
    ap.add_argument("--figure", default=None)
    a = ap.parse_args()
    cli = os.path.join(a.build, "stalesgd")
    rows, straggler_rows, mpi_rows = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models:
            configs = [(rule, p) for rule in a.rules for p in a.workers]
            # Each round calibrates, then measures every configuration and asks the theory
            # with that round's calibration: a ratio compares numbers taken minutes apart at
            # most, and the clock's drift between rounds goes into the intervals.
            got = {c: dict(measured=[], machine=[], free=[], ratio=[]) for c in configs}
            cals = []
            for r in range(a.rounds):
                machine = os.path.join(tmp, f"{model}-{r}.json")
                run([cli, "calibrate", "--model", model, "--out", machine, "--budget", "1s"])
                with open(machine) as f:
                    cal = json.load(f)
                cals.append(cal)
                c = f"{cal['compute_s'] * 1e9:.0f}ns"
                for rule, p in configs:
                    g = got[(rule, p)]
                    g["measured"].append(measured_rate(cli, model, rule, p, a.seconds, tmp))
                    g["machine"].append(theory_rate(cli, p, rule, "none",
                                                    ["--machine", machine, "--cores",
                                                     str(a.cores)]))
                    g["free"].append(theory_rate(cli, p, rule, "none", ["--compute-time", c]))
                    g["ratio"].append(g["measured"][-1] / g["machine"][-1])
            mean = lambda key: sum(x[key] for x in cals) / len(cals)
            for rule, p in configs:
                g = got[(rule, p)]
                measured, ci = mean_ci(g["measured"])
                ratio, ratio_ci = mean_ci(g["ratio"])
                modelled = sum(g["machine"]) / len(g["machine"])
                free = sum(g["free"]) / len(g["free"])
                rows.append(dict(model=model, rule=rule, workers=p, k=k_of(rule, p),
                                 measured=measured, ci=ci, machine=modelled, free=free,
                                 ratio=ratio, ratio_ci=ratio_ci,
                                 compute_s=mean("compute_s"),
                                 server_gradient_s=mean("server_gradient_s"),
                                 server_update_s=mean("server_update_s"),
                                 contention=mean("contention")))
                print(f"{model:8} {rule:7} P={p:<3} measured {measured:9.0f}/s ± {ci:6.0f}  "
                      f"machine {modelled:9.0f}/s  measured/machine {ratio:.3f} ± "
                      f"{ratio_ci:.3f}  free {free:9.0f}/s ({measured / free:.3f})", flush=True)
                # (c) stragglers: the machine model moves nothing the delays dominate.
                delay = "exp:mean=20ms"
                with_m = theory_rate(cli, p, rule, delay,
                                     ["--machine", machine, "--cores", str(a.cores)])
                without = theory_rate(cli, p, rule, delay, [])
                straggler_rows.append(dict(model=model, rule=rule, workers=p,
                                           k=k_of(rule, p), delay=delay,
                                           machine=with_m, free=without))
            if a.mpi_workers:
                mpi_rows += mpi_model(cli, a, model, tmp)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("model,rule,workers,k,measured_updates_per_s,measured_ci95,"
                    "machine_updates_per_s,free_updates_per_s,measured_over_machine,"
                    "measured_over_machine_ci95,measured_over_free,"
                    "compute_s,server_gradient_s,server_update_s,contention\n")
            for r in rows:
                f.write(f"{r['model']},{r['rule']},{r['workers']},{r['k']},{r['measured']:.1f},"
                        f"{r['ci']:.1f},{r['machine']:.1f},{r['free']:.1f},"
                        f"{r['ratio']:.4f},{r['ratio_ci']:.4f},"
                        f"{r['measured'] / r['free']:.4f},{r['compute_s']:.4g},"
                        f"{r['server_gradient_s']:.4g},{r['server_update_s']:.4g},"
                        f"{r['contention']:.4f}\n")
    if a.stragglers_csv:
        with open(a.stragglers_csv, "w") as f:
            f.write("model,rule,workers,k,delay,machine_updates_per_s,free_updates_per_s,"
                    "machine_over_free\n")
            for r in straggler_rows:
                f.write(f"{r['model']},{r['rule']},{r['workers']},{r['k']},{r['delay']},"
                        f"{r['machine']:.2f},{r['free']:.2f},{r['machine'] / r['free']:.4f}\n")
    if a.mpi_csv and mpi_rows:
        with open(a.mpi_csv, "w") as f:
            f.write("model,rule,workers,k,link,measured_updates_per_s,measured_ci95,"
                    "machine_updates_per_s,network_updates_per_s,free_updates_per_s,"
                    "measured_over_machine,measured_over_machine_ci95,measured_over_network,"
                    "measured_over_free\n")
            for r in mpi_rows:
                f.write(f"{r['model']},{r['rule']},{r['workers']},{r['k']},\"{r['link']}\","
                        f"{r['measured']:.1f},{r['ci']:.1f},{r['machine']:.1f},"
                        f"{r['network']:.1f},{r['free']:.1f},{r['ratio']:.4f},"
                        f"{r['ratio_ci']:.4f},{r['measured'] / r['network']:.4f},"
                        f"{r['measured'] / r['free']:.4f}\n")
    if a.figure:
        figure(rows, a.figure)
    worst = max(abs(r["ratio"] - 1) for r in rows)
    worst_free = max(abs(r["measured"] / r["free"] - 1) for r in rows)
    moved = max(abs(r["machine"] / r["free"] - 1) for r in straggler_rows)
    print(f"\nworst |measured / machine - 1| = {worst:.3f}; against the free machine "
          f"{worst_free:.3f}; with stragglers the machine moves the prediction by at most "
          f"{moved:.4f}")


def mpi_model(cli, a, model, tmp):
    """(b): the MPI engine against the machine model whose link `stalesgd calibrate` measured
    under mpirun (a ping-pong between two ranks of this host: a memory link, whose copies are
    work on the cores); beside it the same link as a network, which copies beside the cores."""
    configs = [(rule, p) for rule in a.rules for p in a.mpi_workers]
    got = {c: dict(measured=[], machine=[], network=[], free=[], ratio=[]) for c in configs}
    for r in range(a.rounds):
        machine = os.path.join(tmp, f"{model}-mpi-{r}.json")
        run(["tools/mpirun.sh", "-np", "2", cli, "calibrate", "--model", model, "--out", machine,
             "--budget", "1s"])
        with open(machine) as f:
            cal = json.load(f)
        link = (f"latency={cal['link_latency_s'] * 1e9:.0f}ns,"
                f"bandwidth={cal['link_bandwidth_bps'] / 1e6:.0f}Mbit")
        for rule, p in configs:
            g = got[(rule, p)]
            g["measured"].append(measured_rate(cli, model, rule, p, a.seconds, tmp, mpi=True))
            # The server is a process of its own: the workers and it share the cores.
            flags = ["--machine", machine, "--cores", str(a.cores)]
            g["machine"].append(theory_rate(cli, p, rule, "none", flags))
            g["network"].append(theory_rate(cli, p, rule, "none",
                                            flags + ["--link", link + ",medium=network"]))
            g["free"].append(theory_rate(cli, p, rule, "none",
                                         ["--compute-time", f"{cal['compute_s'] * 1e9:.0f}ns"]))
            g["ratio"].append(g["measured"][-1] / g["machine"][-1])
    out = []
    for rule, p in configs:
        g = got[(rule, p)]
        avg = lambda key: sum(g[key]) / len(g[key])
        measured, ci = mean_ci(g["measured"])
        ratio, ratio_ci = mean_ci(g["ratio"])
        out.append(dict(model=model, rule=rule, workers=p, k=k_of(rule, p), link=link,
                        measured=measured, ci=ci, machine=avg("machine"), network=avg("network"),
                        free=avg("free"), ratio=ratio, ratio_ci=ratio_ci))
        print(f"{model:8} {rule:7} mpi P={p:<3} measured {measured:9.0f}/s  machine "
              f"{avg('machine'):9.0f}/s ({ratio:.3f} ± {ratio_ci:.3f})  as a network "
              f"{avg('network'):9.0f}/s  free {avg('free'):9.0f}/s  link {link}", flush=True)
    return out


def figure(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = sorted({(r["model"], r["rule"]) for r in rows})
    fig, axes = plt.subplots(1, len(keys), figsize=(3.6 * len(keys), 3.6), squeeze=False)
    for ax, (model, rule) in zip(axes[0], keys):
        pts = [r for r in rows if r["model"] == model and r["rule"] == rule]
        ps = [r["workers"] for r in pts]
        ax.errorbar(ps, [r["measured"] for r in pts], yerr=[r["ci"] for r in pts], fmt="o-",
                    capsize=3, label="measured (threads), 95% interval")
        ax.plot(ps, [r["machine"] for r in pts], "s--", label="machine model")
        ax.plot(ps, [r["free"] for r in pts], ":", label="free machine (paper)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{model}, {rule}" + (" (K = P/2)" if rule == "k-sync" else ""))
        ax.set_xlabel("workers P")
        ax.set_ylabel("updates per second")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A projection of each rule's updates per second against P, from the machine model
(docs/machine.md): a model's calibration on this machine carried to a 64-core box and to a
cluster of one-core nodes on 10 Gbit/s links, with 1, 4 and 16 server shards. A model's
projection, not a measurement: every row names the calibration it used.

usage: tools/machine_projection.py [--build DIR] [--models mlp lenet] [--max-workers 1024]
           [--samples 2000] [--calibrations DIR] [--csv FILE] [--figure FILE]
Machine files are read from --calibrations DIR/MODEL.json when there, else calibrated (and
written there).
"""
import argparse
import json
import os
import subprocess
import sys

MACHINES = {
    "64-core box": ["--cores", "64"],
    "cluster, 10 Gbit/s": ["--link", "latency=50us,bandwidth=10Gbit"],
}
RULES = [("sync", None), ("k-sync", "half"), ("k-batch-sync", "half"), ("async", None),
         ("k-async", 4), ("k-batch-async", 4)]
SHARDS = [1, 4, 16]


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"machine_projection.py: {' '.join(cmd)} failed: {out.stderr.strip()}")
    return out.stdout


def k_for(k, workers):
    if k is None:
        return None
    return max(1, workers // 2) if k == "half" else min(k, workers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--models", nargs="+", default=["mlp", "lenet"])
    ap.add_argument("--max-workers", type=int, default=1024)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--calibrations", default="runs/machine")
    ap.add_argument("--csv", default="docs/data/machine-projection.csv")
    ap.add_argument("--figure", default="docs/img/machine-projection.png")
    a = ap.parse_args()
    cli = os.path.join(a.build, "stalesgd")
    os.makedirs(a.calibrations, exist_ok=True)
    rows = []
    for model in a.models:
        file = os.path.join(a.calibrations, f"{model}.json")
        if not os.path.exists(file):
            run([cli, "calibrate", "--model", model, "--out", file])
        with open(file) as f:
            cal = json.load(f)
        where = f"{cal['calibration']['cpu']} ({cal['calibration']['cores']} cores)"
        for machine, flags in MACHINES.items():
            for rule, k in RULES:
                p = 1
                while p <= a.max_workers:
                    cmd = [cli, "theory", "--machine", file, "--workers", str(p), "--rule", rule,
                           "--delay", "none", "--json", "--samples", str(a.samples),
                           "--saturation-max", "1"] + flags
                    if k_for(k, p) is not None:
                        cmd += ["--k", str(k_for(k, p))]
                    j = json.loads(run(cmd))
                    cell = j["rules"][0]
                    for s in cell["server"]["shards"]:
                        if s["shards"] not in SHARDS:
                            continue
                        rows.append(dict(model=model, machine=machine, rule=rule, k=cell["k"],
                                         workers=p, shards=s["shards"],
                                         updates_per_s=s["updates_per_s"],
                                         gradients_per_s=s["updates_per_s"] * cell["k"],
                                         server_utilization=s["server_utilization"],
                                         compute_s=cal["compute_s"],
                                         server_gradient_s=cal["server_gradient_s"],
                                         server_update_s=cal["server_update_s"],
                                         calibrated_on=where))
                    print(f"{model} {machine} {rule} P={p}", file=sys.stderr, flush=True)
                    p *= 2
    with open(a.csv, "w") as f:
        f.write("# A projection of the machine model (docs/machine.md), not a measurement\n")
        cols = list(rows[0].keys())
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(f"{r[c]:.6g}" if isinstance(r[c], float) else f'"{r[c]}"'
                             if "," in str(r[c]) or " " in str(r[c]) else str(r[c])
                             for c in cols) + "\n")
    figure(rows, a.models, a.figure)


def figure(rows, models, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(models), len(MACHINES), figsize=(11, 4.2 * len(models)),
                             squeeze=False)
    colors = dict(zip([r for r, _ in RULES], plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    styles = {1: "-", 4: "--", 16: ":"}
    for i, model in enumerate(models):
        for j, machine in enumerate(MACHINES):
            ax = axes[i][j]
            for rule, _ in RULES:
                for s in SHARDS:
                    pts = [(r["workers"], r["gradients_per_s"]) for r in rows
                           if r["model"] == model and r["machine"] == machine
                           and r["rule"] == rule and r["shards"] == s]
                    if not pts:
                        continue
                    ax.plot(*zip(*pts), styles[s], color=colors[rule],
                            label=f"{rule}" if s == 1 else None)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{model} on a {machine}" if "box" in machine else f"{model}, {machine}")
            ax.set_xlabel("workers P")
            ax.set_ylabel("gradients applied per second")
            ax.grid(True, which="both", alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=8, title="solid 1, dashed 4, dotted 16 shards",
                          title_fontsize=8)
    fig.suptitle("Projection of the machine model (not a measurement); calibration on "
                 f"{rows[0]['calibrated_on']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()

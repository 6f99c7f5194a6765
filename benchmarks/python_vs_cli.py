#!/usr/bin/python3
"""A real-thread run started from Python (stalesgd.train) against the same run from the CLI
(`stalesgd train`), alternated round by round (the CLI first in even rounds, Python first in
odd ones), each in a fresh process: iterations per second of training (summary.json's
iterations / wall_s, which both read from the same engine clock) and end to end (process start
to exit). Prints one row per run and the median Python/CLI ratio of each over the rounds; the
issue's target is >= 0.97 (docs/python.md, "Speed").

usage: benchmarks/python_vs_cli.py [--build DIR] [--rounds R] [--time T] [--csv FILE]
                                   [--data-dir DIR] [--check]
--check: exit 1 when the median training ratio is under 0.97.
Needs the build's Python package (tools/setup.sh python; tools/build.sh) and MNIST.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# A real-clock run that keeps both cores busy: 2 workers of an mlp, k-async, a small delay.
OPTIONS = {"model": "mlp", "rule": "k-async", "k": 1, "workers": 2, "delay": "exp:mean=1ms",
           "clock": "real", "batch": 32, "lr": 0.05, "eval_every": "1s", "eval_samples": 1000}
TARGET = 0.97


def text(v):
    return str(v)


def run_cli(build, options, out):
    args = [os.path.join(build, "stalesgd"), "train", "--no-progress", "--out", out]
    args += [f"--set={k}={text(v)}" for k, v in options.items()]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def run_python(build, options, out):
    code = ("import sys, json, stalesgd; "
            "stalesgd.train(json.loads(sys.argv[1]), out=sys.argv[2], progress=False)")
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    subprocess.run([sys.executable, "-c", code, json.dumps(options), out], check=True, env=env)


def measure(name, runner, build, options, tmp, i):
    out = os.path.join(tmp, f"{name}-{i}")
    start = time.monotonic()
    runner(build, options, out)
    elapsed = time.monotonic() - start
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return {"round": i, "system": name, "iterations": s["iterations"], "wall_s": s["wall_s"],
            "train_ips": s["iterations"] / s["wall_s"], "process_s": elapsed,
            "end_to_end_ips": s["iterations"] / elapsed}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--time", default="10s")
    p.add_argument("--data-dir", default="data")
    p.add_argument("--csv")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    options = dict(OPTIONS, time=a.time, data_dir=os.path.abspath(a.data_dir))
    rows = []
    with tempfile.TemporaryDirectory(prefix="python_vs_cli.") as tmp:
        for i in range(a.rounds):
            order = [("cli", run_cli), ("python", run_python)]
            if i % 2:
                order.reverse()
            for name, runner in order:
                r = measure(name, runner, a.build, options, tmp, i)
                rows.append(r)
                print(f"round {i}  {name:6s}  {r['iterations']:8d} it in {r['wall_s']:.3f} s  "
                      f"{r['train_ips']:9.1f} it/s training  {r['end_to_end_ips']:9.1f} it/s "
                      f"end to end ({r['process_s']:.2f} s)", flush=True)
    ratios = {}
    for key in ("train_ips", "end_to_end_ips"):
        per_round = []
        for i in range(a.rounds):
            by = {r["system"]: r[key] for r in rows if r["round"] == i}
            per_round.append(by["python"] / by["cli"])
        ratios[key] = per_round
        print(f"python/cli {key}: median {statistics.median(per_round):.3f}  "
              f"(rounds: {', '.join(f'{x:.3f}' for x in per_round)})")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    median = statistics.median(ratios["train_ips"])
    print(f"target >= {TARGET}: {'met' if median >= TARGET else 'NOT met'} ({median:.3f})")
    return 1 if a.check and median < TARGET else 0


if __name__ == "__main__":
    sys.exit(main())

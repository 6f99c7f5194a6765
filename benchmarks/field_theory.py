#!/usr/bin/python3
"""The rules published since the paper against their theory (docs/theory.md, "The field's rules
against the theory"), side by side in one run.

For each rule (ringmaster and rennala with either old point, malenia, m-sync, fedbuff, mindflayer)
and each delay profile, the seconds per iteration of `stalesgd theory` (the Monte Carlo of the
rule's state machine under the profile's delays) against a run on the virtual clock and a run
on real threads with the same options. measured / theory is what a user sees; virtual / theory
is the sampling noise of the run's own draws. Where the rule has a closed form under the
profile (the fixed forms under fixed-hetero, docs/theory.md), it is written beside the Monte
Carlo.

usage: benchmarks/field_theory.py [--build DIR] [--workers 8] [--seconds 6] [--csv FILE]
"""
import argparse
import json
import os
import subprocess
import tempfile

PROFILES = {
    "exp": "exp:mean=20ms",
    # Fixed heterogeneous speeds, the computation model of Rennala and Malenia: worker i takes
    # (i + 1) x 4 ms.
    "fixed-hetero": ";".join(["const:4ms"] + [f"w{i}=const:{4 * (i + 1)}ms" for i in range(8)]),
}
RULES = [
    ("ringmaster", ["--staleness-threshold", "2"]),
    ("ringmaster", ["--staleness-threshold", "8"]),
    ("ringmaster", ["--staleness-threshold", "2", "--old-point", "interrupt"]),
    ("rennala", ["--k", "8"]),
    ("rennala", ["--k", "8", "--old-point", "interrupt"]),
    ("malenia", ["--k", "16", "--partition", "iid"]),
    ("m-sync", ["--k", "4"]),
    ("fedbuff", ["--k", "4"]),
    # Two attempts per worker and round, each abandoned at 20 ms (under fixed-hetero, workers
    # 5-7 never finish one).
    ("mindflayer", ["--k", "2", "--time-limit", "20ms"]),
]


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    cli = os.path.join(a.build, "stalesgd")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for profile, delay in PROFILES.items():
            for rule, flags in RULES:
                theory_flags = [f for f in flags if f not in ("--partition", "iid")]
                j = json.loads(run([cli, "theory", "--rule", rule, "--workers", str(a.workers),
                                    "--delay", delay, "--json", "--samples", "20000",
                                    "--saturation-max", "1"] + theory_flags))
                theory = j["rules"][0]["monte_carlo"]["seconds_per_iteration"]
                # The rule's fixed form under fixed-hetero (docs/theory.md), where it has one.
                closed = j["rules"][0].get("closed_form", {})
                closed = None if closed.get("upper_bound", True) else closed["seconds_per_iteration"]
                got = {}
                for clock in ("virtual", "real"):
                    out = os.path.join(tmp, f"{profile}-{rule}-{clock}")
                    run([cli, "train", "--rule", rule, "--workers", str(a.workers), "--delay",
                         delay, "--clock", clock, "--time", f"{a.seconds}s", "--eval-every",
                         "1000s", "--eval-samples", "500", "--no-progress", "--force", "--out",
                         out] + flags)
                    with open(os.path.join(out, "summary.json")) as f:
                        got[clock] = json.load(f)["seconds_per_iteration"]
                label = rule + " " + " ".join(flags)
                rows.append(dict(profile=profile, rule=rule, flags=" ".join(flags),
                                 theory=theory, closed=closed, virtual=got["virtual"],
                                 real=got["real"]))
                print(f"{profile:13} {label:50} theory {theory * 1e3:8.3f} ms  virtual/theory "
                      f"{got['virtual'] / theory:.3f}  threads/theory {got['real'] / theory:.3f}",
                      flush=True)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("profile,rule,flags,workers,theory_s,closed_form_s,virtual_s,threads_s,"
                    "virtual_over_theory,threads_over_theory\n")
            for r in rows:
                closed = "" if r["closed"] is None else f"{r['closed']:.6g}"
                f.write(f"{r['profile']},{r['rule']},{r['flags']},{a.workers},{r['theory']:.6g},"
                        f"{closed},"
                        f"{r['virtual']:.6g},{r['real']:.6g},{r['virtual'] / r['theory']:.4f},"
                        f"{r['real'] / r['theory']:.4f}\n")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The field race's tuning grid over each rule's own knobs, and the race at the settings chosen.

usage: tools/field_grid.py tuning > experiments/tune-the-field-knobs.toml
       tools/field_grid.py best TUNING_CSV > experiments/the-field-best.toml
       tools/field_grid.py check TUNING_CSV RACE_TOML
       tools/field_grid.py edges TUNING_CSV

docs/the-field.md, "Each rule at its best settings". Every rule gets the same budget: 12
settings per straggler profile (its knobs K, R, S, B, t or c crossed with learning rates; a rule
with no knob but the rate gets 12 rates), two seeds each, on 10,000 held-out training samples.
tools/tune_knobs.py picks each cell's setting; `best` writes the race at those settings (five
seeds, the test set, the full 20 s), `check` fails, naming the run, when a race file's settings
differ from the tuning's choice, and `edges` fails, naming the cell and the knob, for every
choice at an edge of its grid (the grid should be widened past it before the choice is cited).
"""

import csv
import sys

PROFILES = {
    "exp": "exp:mean=10ms",
    "fixed": "const:2ms;" + ";".join(f"w{i}=const:{2 * (i + 1)}ms" for i in range(8)),
    "pareto": "pareto:shape=1.5,scale=5ms",
    "stall": "exp:mean=10ms;w0=const:2s",
}
SQRT2 = [0.035, 0.05, 0.071, 0.1, 0.14, 0.2, 0.28, 0.4, 0.57, 0.8, 1.13, 1.6]

# Each rule: its fixed keys, then its swept knobs (the race crosses the lists). 12 settings each.
RULES = [
    ("sync", {"rule": "sync"}, {"lr": SQRT2}),
    ("k-sync", {"rule": "k-sync"}, {"k": [2, 4, 6], "lr": [0.1, 0.2, 0.4, 0.8]}),
    ("k-batch-sync", {"rule": "k-batch-sync"}, {"k": [2, 4, 6], "lr": [0.1, 0.2, 0.4, 0.8]}),
    ("async", {"rule": "async"}, {"lr": SQRT2}),
    ("k-async", {"rule": "k-async"}, {"k": [2, 4, 6], "lr": [0.1, 0.2, 0.4, 0.8]}),
    ("k-batch-async", {"rule": "k-batch-async"}, {"k": [2, 4, 6], "lr": [0.05, 0.1, 0.2, 0.4]}),
    ("async delay-adaptive (lr tuned)", {"rule": "async"},
     {"lr_rule": ["delay-adaptive:c=2", "delay-adaptive:c=8", "delay-adaptive:c=32"],
      "lr": [0.025, 0.05, 0.1, 0.2]}),
    ("ringmaster", {"rule": "ringmaster"},
     {"staleness_threshold": [2, 4, 8, 16], "lr": [0.05, 0.1, 0.2]}),
    ("rennala", {"rule": "rennala"}, {"k": [4, 8, 16], "lr": [0.2, 0.4, 0.8, 1.6]}),
    ("malenia", {"rule": "malenia", "partition": "iid"},
     {"k": [4, 8, 16], "lr": [0.2, 0.4, 0.8, 1.6]}),
    ("mindflayer", {"rule": "mindflayer"},
     {"k": [1, 2, 4], "time_limit": ["10ms", "20ms"], "lr": [0.4, 0.8]}),
    ("mindflayer-kept", {"rule": "mindflayer-kept"},
     {"k": [1, 2, 4], "time_limit": ["10ms", "20ms"], "lr": [0.4, 0.8]}),
]

COMMON_TUNING = """dataset = "mnist"
model = "softmax"
workers = 8
batch = 16
clock = "virtual"
time = "20s"
eval_every = "0.5s"
eval_samples = 2000
holdout = 10000
seeds = [11, 12]
seed_stride = 100
"""

COMMON_BEST = """dataset = "mnist"
model = "softmax"
workers = 8
batch = 16
clock = "virtual"
time = "20s"
eval_every = "0.2s"
eval_samples = 2000
seeds = [1, 2, 3, 4, 5]
seed_stride = 100
"""


def value(v):
    return f'"{v}"' if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)


def toml_value(v):
    return "[" + ", ".join(value(x) for x in v) + "]" if isinstance(v, list) else value(v)


def tuning():
    out = ["# The field's tuning over each rule's own knobs, written by tools/field_grid.py tuning",
           "# (docs/the-field.md, \"Each rule at its best settings\"): 12 rules x 4 profiles x 12",
           "# settings x 2 seeds = 1,152 runs on the virtual clock, on 10,000 held-out samples.",
           'name = "tune-the-field-knobs"',
           'description = "Each rule\'s knobs and rate on a held-out split: 12 rules x 4 profiles x '
           '12 settings (softmax, MNIST, P = 8, virtual clock)"', "", COMMON_TUNING]
    for profile, delay in PROFILES.items():
        for name, fixed, knobs in RULES:
            out.append("[[run]]")
            out.append(f'label = "{profile} | {name}"')
            for k, v in {**fixed, **knobs}.items():
                out.append(f"{k} = {toml_value(v)}")
            out.append(f'delay = "{delay}"')
            out.append("")
    return "\n".join(out)


def chosen(tuning_csv):
    """cell -> {knob: value} of the chosen setting, from tools/tune_knobs.py's CSV."""
    picks = {}
    with open(tuning_csv, newline="") as f:
        for row in csv.DictReader(f):
            if row["chosen"] == "1":
                picks[row["run"]] = dict(kv.split("=", 1) for kv in row["setting"].split(", "))
    return picks


def typed(knob, text):
    """A knob's value as the race file writes it."""
    if knob in ("lr_rule", "time_limit"):
        return text
    return float(text) if knob == "lr" else int(text)


def best(tuning_csv):
    picks = chosen(tuning_csv)
    out = ["# The field race at each rule's best settings, written by tools/field_grid.py best from",
           f"# {tuning_csv} (docs/the-field.md, \"Each rule at its best settings\"): five seeds,",
           "# the test set, the full 20 s (no stop at the target: every measure reads the whole curve).",
           'name = "the-field-best"',
           'description = "Twelve rules, four straggler profiles, each at its tuned settings '
           '(softmax, MNIST, P = 8, virtual clock)"', "", COMMON_BEST]
    for profile, delay in PROFILES.items():
        for name, fixed, knobs in RULES:
            cell = f"{profile} | {name}"
            if cell not in picks:
                raise SystemExit(f"field_grid.py: {tuning_csv} chose no setting for '{cell}'")
            out.append("[[run]]")
            out.append(f'label = "{cell}"')
            for k, v in fixed.items():
                out.append(f"{k} = {toml_value(v)}")
            for k in knobs:
                out.append(f"{k} = {toml_value(typed(k, picks[cell][k]))}")
            out.append(f'delay = "{delay}"')
            out.append("")
    return "\n".join(out)


def check(tuning_csv, race_toml):
    """Exit 1, naming each run, where the race file's knobs differ from the tuning's choice."""
    import tomllib
    picks = chosen(tuning_csv)
    race = tomllib.load(open(race_toml, "rb"))
    problems = []
    for run in race.get("run", []):
        cell = run.get("label", "")
        if cell not in picks:
            problems.append(f"{race_toml}: run '{cell}' is not a cell of {tuning_csv}")
            continue
        for knob, text in picks[cell].items():
            if run.get(knob, race.get(knob)) != typed(knob, text):
                problems.append(f"{race_toml}: run '{cell}' has {knob} = "
                                f"{run.get(knob, race.get(knob))!r}, the tuning chose {text}")
    return report(problems)


def report(problems):
    """Each problem on stderr; the exit status: 1 when there is any."""
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def edges(tuning_csv):
    """Exit 1, naming each cell and knob, where the tuning chose a value at its grid's edge."""
    found = []
    with open(tuning_csv, newline="") as f:
        for row in csv.DictReader(f):
            if row["chosen"] == "1" and row["at_edge"]:
                found.append(f"{tuning_csv}: '{row['run']}' chose {row['setting']}, at the edge "
                             f"of its grid in {row['at_edge'].replace(';', ', ')}: widen it")
    return report(found)


def main(argv):
    if argv[:1] == ["tuning"] and len(argv) == 1:
        print(tuning())
    elif argv[:1] == ["best"] and len(argv) == 2:
        print(best(argv[1]))
    elif argv[:1] == ["check"] and len(argv) == 3:
        return check(argv[1], argv[2])
    elif argv[:1] == ["edges"] and len(argv) == 2:
        return edges(argv[1])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

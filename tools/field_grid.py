#!/usr/bin/python3
"""The field race's tuning grid over each rule's own knobs, and the race at the settings chosen.

usage: tools/field_grid.py tuning > experiments/tune-the-field-knobs.toml
       tools/field_grid.py widen TUNING_CSV [ROUND] > experiments/tune-the-field-edges[-ROUND].toml
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
`widen` writes that widening, the same rule for every cell: each knob chosen at its grid's edge
takes its next two values past the edge (within what the rule allows), crossed with the cell's
chosen values of its other knobs (the chosen setting itself again, on two more seeds). ROUND
(1 by default) numbers a widening of a widening: its race's name and its seeds, which no earlier
round's equal.
"""

import csv
import itertools
import sys

PROFILES = {
    "exp": "exp:mean=10ms",
    "fixed": "const:2ms;" + ";".join(f"w{i}=const:{2 * (i + 1)}ms" for i in range(8)),
    "pareto": "pareto:shape=1.5,scale=5ms",
    "stall": "exp:mean=10ms;w0=const:2s",
}
SQRT2 = [0.035, 0.05, 0.071, 0.1, 0.14, 0.2, 0.28, 0.4, 0.57, 0.8, 1.13, 1.6]

# Each rule: its fixed keys, then its swept knobs (the race crosses the lists). 12 settings each,
# but one for a rule whose formula leaves it nothing to tune.
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
    # FedBuff as published: Q = 4 local steps of local_lr per client job, the server's step lr.
    ("fedbuff", {"rule": "fedbuff", "local_steps": 4},
     {"k": [2, 4, 6], "local_lr": [0.05, 0.1], "lr": [0.5, 1.0]}),
    # The delay-adaptive step as published: C = P and lr = 1/(4 L C), L = 6.07 the smoothness
    # `stalesgd theory --error --model softmax --l2 0.0001` estimates (docs/the-field.md). Its
    # formula leaves nothing to tune: one setting.
    ("async delay-adaptive (lr 1/(4LC))", {"rule": "async", "lr_rule": "delay-adaptive:c=8,L=6.07"},
     {}),
]
FIRST_TUNING = 12  # the rules of the first tuning, before FedBuff and the formula's rate

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


def settings(knobs):
    """How many settings a rule's swept knobs make."""
    n = 1
    for values in knobs.values():
        n *= len(values)
    return n


def tuning():
    runs = len(PROFILES) * 2 * sum(settings(knobs) for _, _, knobs in RULES)
    out = ["# The field's tuning over each rule's own knobs, written by tools/field_grid.py tuning",
           f"# (docs/the-field.md, \"Each rule at its best settings\"): {len(RULES)} rules x "
           f"{len(PROFILES)} profiles x 12",
           "# settings (1 for a rule whose formula sets its rate) x 2 seeds = "
           f"{runs:,} runs on the virtual clock, on 10,000 held-out samples.",
           'name = "tune-the-field-knobs"',
           f'description = "Each rule\'s knobs and rate on a held-out split: {len(RULES)} rules x '
           f'{len(PROFILES)} profiles x 12 settings (softmax, MNIST, P = 8, virtual clock)"', "",
           COMMON_TUNING]
    # The rules added after the first tuning come after all of its cells: a run's seed follows
    # its place in the file, so the first tuning's runs keep theirs (and a --resume keeps them).
    for rules in (RULES[:FIRST_TUNING], RULES[FIRST_TUNING:]):
        for profile, delay in PROFILES.items():
            for name, fixed, knobs in rules:
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
                picks[row["run"]] = dict(kv.split("=", 1) for kv in row["setting"].split(", ")
                                         if kv)
    return picks


def typed(knob, text):
    """A knob's value as the race file writes it."""
    if knob in ("lr_rule", "time_limit"):
        return text
    return float(text) if knob in ("lr", "local_lr") else int(text)


def best(tuning_csv):
    picks = chosen(tuning_csv)
    out = ["# The field race at each rule's best settings, written by tools/field_grid.py best from",
           f"# {tuning_csv} (docs/the-field.md, \"Each rule at its best settings\"): five seeds,",
           "# the test set, the full 20 s (no stop at the target: every measure reads the whole curve).",
           'name = "the-field-best"',
           'description = "Fourteen rules, four straggler profiles, each at its tuned settings '
           '(softmax, MNIST, P = 8, virtual clock)"', "", COMMON_BEST]
    for rules in (RULES[:FIRST_TUNING], RULES[FIRST_TUNING:]):  # seeds as in tuning()
        for profile, delay in PROFILES.items():
            for name, fixed, knobs in rules:
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


# The values past a grid's edge, by knob: ladders the grids were drawn from.
LADDERS = {
    "k": [1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64],
    "staleness_threshold": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
    "time_limit": ["2.5ms", "3.5ms", "5ms", "7ms", "10ms", "14ms", "20ms", "28ms", "40ms"],
    "lr_rule": [f"delay-adaptive:c={c}" for c in (1, 2, 8, 32, 128, 512)],
}
# The rules whose K is at most P (the others' S or B may exceed it); tools/tune_knobs.py's too.
K_AT_MOST_P = {"k-sync", "k-batch-sync", "k-async", "k-batch-async", "fedbuff", "m-sync"}
WORKERS = 8


def past_edge(rule, knob, chosen_text, grid_texts):
    """The next two values of `knob` past the end of its grid at which the tuning chose."""
    chosen_value = typed(knob, chosen_text)
    grid = sorted({typed(knob, t) for t in grid_texts}, key=lambda v: position(knob, v))
    low = position(knob, chosen_value) == position(knob, grid[0])
    if knob in ("lr", "local_lr"):  # a factor of sqrt(2) apart, as the rate grids are
        step = 2 ** -0.5 if low else 2 ** 0.5
        return [float(f"{chosen_value * step ** i:.2g}") for i in (1, 2)]
    ladder = LADDERS[knob]
    i = ladder.index(chosen_value)
    out = ladder[max(0, i - 2):i][::-1] if low else ladder[i + 1:i + 3]
    if knob == "k":
        top = WORKERS if rule in K_AT_MOST_P else max(ladder)
        out = [v for v in out if 1 <= v <= top]
    return out


def position(knob, v):
    """Where a value sits on its knob's scale."""
    if knob in ("lr", "local_lr"):
        return float(v)
    return LADDERS[knob].index(v)


def widen(tuning_csv, round_=1):
    """The race over each edge of the tuning's choices (module docstring)."""
    rows = list(csv.DictReader(open(tuning_csv, newline="")))
    grids = {}
    for r in rows:
        for kv in filter(None, r["setting"].split(", ")):
            k, v = kv.split("=", 1)
            grids.setdefault(r["run"], {}).setdefault(k, set()).add(v)
    out = ["# The widening of the field's tuning past the edges of its choices, written by",
           f"# tools/field_grid.py widen from {tuning_csv} (docs/the-field.md, \"Each rule at its",
           "# best settings\"): for each knob chosen at its grid's edge, its next two values past",
           "# it, crossed with the cell's other chosen values; two seeds each.",
           'name = "tune-the-field-edges' + (f'-{round_}"' if round_ > 1 else '"'),
           'description = "The field tuning\'s grid widened past the edges of its choices '
           '(softmax, MNIST, P = 8, virtual clock)"', "",
           # Seeds of their own: 11 + 2 r + 100 i and 12 + 2 r + 100 i never equal an earlier
           # round's (the first tuning is round 0).
           COMMON_TUNING.replace("seeds = [11, 12]",
                                 f"seeds = [{11 + 2 * round_}, {12 + 2 * round_}]")]
    fixed_of = {name: fixed for name, fixed, _ in RULES}
    delay_of = PROFILES
    cells = 0
    for r in rows:
        if r["chosen"] != "1" or not r["at_edge"]:
            continue
        profile, name = r["run"].split(" | ", 1)
        fixed = fixed_of[name]
        setting = dict(kv.split("=", 1) for kv in r["setting"].split(", "))
        lists = {}
        for knob, text in setting.items():
            lists[knob] = [typed(knob, text)]
            if knob in r["at_edge"].split(";"):
                lists[knob] += past_edge(fixed["rule"], knob, text, grids[r["run"]][knob])
        # One run per setting, labelled as the tuning's sweep labels it ("cell (k=2, lr=0.2)"),
        # so that tools/tune_knobs.py joins a setting's seeds across both races.
        for values in itertools.product(*lists.values()):
            named = ", ".join(f"{k}={value(v).strip(chr(34))}" for k, v in zip(lists, values))
            out.append("[[run]]")
            out.append(f'label = "{r["run"]} ({named})"')
            for k, v in {**fixed, **dict(zip(lists, values))}.items():
                out.append(f"{k} = {toml_value(v)}")
            out.append(f'delay = "{delay_of[profile]}"')
            out.append("")
        cells += 1
    if cells == 0:
        raise SystemExit(f"field_grid.py: no choice in {tuning_csv} sits at an edge")
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
    elif argv[:1] == ["widen"] and len(argv) in (2, 3):
        print(widen(argv[1], int(argv[2]) if len(argv) == 3 else 1))
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

#!/usr/bin/python3
"""Loads a `stalesgd race --out DIR` folder into pandas DataFrames.

usage: tools/load_race.py DIR [--updates] [--gradients] [--csv TABLE]

As a module (tools/ on sys.path, e.g. `sys.path.insert(0, "tools")` from the repository root):

    from load_race import load_race
    race = load_race("runs/quickstart")        # race.runs, race.snapshots
    race = load_race("runs/x", updates=True)   # also race.updates (gradients=True: .gradients)

runs       one row per run, in results.csv's order: every results.csv column under its own
           name, `status` (summary.json's, or `unfinished`: no summary.json yet, `missing`:
           no folder), `group` (the label without its seed suffix: runs that differ only by
           seed share it), `config.KEY` for every key of summary.json's config and
           `summary.KEY` for the rest of summary.json (nested keys joined by dots)
snapshots  one row per evals.csv row of every run, with label, slug, group and the config.*
           columns of its run
updates, gradients   one row per updates.csv / gradients.csv row with label, slug and group
           (merge with `runs` on slug for more): only on request, gradients.csv can be large

Columns are read by name, so columns that results.csv or summary.json gain appear as they
are (a results.csv column named group or status as results.group, results.status). DIR may also be a folder of run folders without results.csv (a race cut short before
writing it) or one run folder. The command line prints the runs, their groups and the row
counts; `--csv TABLE` writes that table to stdout instead. Bad DIR: one line, exit status 1.
Needs Debian's python3-pandas (`tools/setup.sh plot`); see docs/outputs.md.
"""

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# The seed part of a label: " (seed 3)" as `seeds = [...]` writes it, "-seed-3" ending its
# folder's name (a race without results.csv is labelled by folder), and "seed=3" inside a
# parenthesised list of swept values (" (k=4, seed=3)"), so a sweep's labels group as well.
SEED_SUFFIX = re.compile(r"\s*\(seed[ =]\d+\)|-seed-\d+$")
SEED_ITEM = re.compile(r"(,\s*seed=\d+(?=[,)]))|((?<=\()seed=\d+,\s*)")
NOT_GROUPING = {"seed"}
ADDED = {"group", "status"}  # the runs table's columns that are not results.csv's  # the config keys that may differ between the runs of one group

# Outputs one run folder writes, in the order `stalesgd train` documents them.
TABLE_FILES = {"snapshots": "evals.csv", "updates": "updates.csv", "gradients": "gradients.csv"}


class LoadError(Exception):
    """A problem the user can fix; printed as one line `load_race.py: error: ...`, exit 1."""


def strip_seed(label):
    """The label of a run without its seed: 'sync (seed 2)' -> 'sync'."""
    return SEED_ITEM.sub("", SEED_SUFFIX.sub("", label)).strip()


def group_key(label, config):
    """Runs with equal keys are repeats that differ only by seed.

    Both the label without its seed and the config without its seed must match: a label
    alone can hide a changed option, a config alone would merge two differently named runs
    that happen to share settings (say a copy of a run).
    """
    settings = None
    if isinstance(config, dict):
        settings = json.dumps({k: v for k, v in config.items() if k not in NOT_GROUPING},
                              sort_keys=True)
    return strip_seed(label), settings


def group_names(labels, configs):
    """The group of each run, named by its label without the seed.

    Two groups whose names clash (same label, other settings) get " [2]", " [3]", ...
    """
    keys = [group_key(label, config) for label, config in zip(labels, configs)]
    names = {}
    for key in keys:
        if key not in names:
            name, n = key[0], 2
            while name in names.values():
                name, n = f"{key[0]} [{n}]", n + 1
            names[key] = name
    return [names[key] for key in keys]


def read_json(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None  # an unfinished run has no summary.json yet
    return data if isinstance(data, dict) else None


def flatten(prefix, node, out):
    """Nested dicts become dotted keys; lists become tuples (hashable: groupby works)."""
    if isinstance(node, dict):
        for key, value in node.items():
            flatten(f"{prefix}.{key}", value, out)
    elif isinstance(node, list):
        scalar = all(not isinstance(v, (dict, list)) for v in node)
        out[prefix] = tuple(node) if scalar else json.dumps(node)
    else:
        out[prefix] = node


@dataclass
class Race:
    """The tables of one race; updates and gradients are None unless asked for."""

    dir: Path
    runs: "object"
    snapshots: "object"
    updates: "object" = None
    gradients: "object" = None


def run_rows(directory):
    """(results.csv rows as dicts of strings, or rows made from run folders)."""
    import pandas as pd

    results = directory / "results.csv"
    if results.is_file():
        try:
            # Strings first: labels and slugs must stay text ("1" is a slug, not a number).
            table = pd.read_csv(results, dtype=str, keep_default_na=False)
        except (OSError, ValueError, pd.errors.ParserError) as e:
            raise LoadError(f"cannot read {results} ({e}); re-run the race to rewrite it")
        if table.empty:
            raise LoadError(f"{results} has no rows; re-run `stalesgd race` to fill it")
        return table.to_dict("records")
    if is_run_dir(directory):
        return [{"label": directory.resolve().name, "slug": "."}]
    try:
        subdirs = sorted((p for p in directory.iterdir() if p.is_dir() and is_run_dir(p)),
                         key=lambda p: [int(s) if s.isdigit() else s
                                        for s in re.split(r"(\d+)", p.name)])
    except OSError as e:
        raise LoadError(f"cannot list {directory} ({e.strerror}); check its permissions")
    if not subdirs:
        raise LoadError(f"{directory} has no results.csv and no run folders (evals.csv or "
                        "summary.json); pass the --out DIR of `stalesgd race`")
    return [{"label": p.name, "slug": p.name} for p in subdirs]


def is_run_dir(path):
    return (path / "summary.json").is_file() or (path / "evals.csv").is_file()


def load_race(race_dir, updates=False, gradients=False):
    """A Race with .runs and .snapshots (and .updates / .gradients when asked for)."""
    import pandas as pd

    directory = Path(race_dir)
    if not directory.is_dir():
        raise LoadError(f"{directory} is not a directory; pass the --out DIR of `stalesgd race`")
    rows = run_rows(directory)
    records, configs = [], []
    for row in rows:
        slug = row.get("slug", "")
        folder = directory / slug if slug else None
        summary = read_json(folder / "summary.json") if folder else None
        config = (summary or {}).get("config")
        # The columns this loader adds win; a results.csv column of the same name is kept as
        # results.NAME (results.csv gains columns over time).
        record = {f"results.{k}" if k in ADDED else k: v for k, v in row.items()}
        if folder is None or not folder.is_dir():
            record["status"] = "missing"
        elif summary is None:
            record["status"] = "unfinished"
        else:
            record["status"] = summary.get("status", "complete")
        flat = {}
        if isinstance(config, dict):
            flatten("config", config, flat)
        for key, value in (summary or {}).items():
            if key not in ("config", "status"):
                flatten(f"summary.{key}", value, flat)
        record.update(flat)
        records.append(record)
        configs.append(config)
    runs = pd.DataFrame.from_records(records)
    # results.csv was read as text: make its numeric columns numbers, by what they hold.
    for column in (f"results.{k}" if k in ADDED else k for k in rows[0].keys()):
        if column in ("label", "slug"):
            continue
        # An empty cell is an unknown value (time to a target never reached): None, or NaN.
        text = runs[column].map(lambda v: None if isinstance(v, str) and not v.strip() else v)
        converted = pd.to_numeric(text, errors="coerce")
        runs[column] = converted if converted[text.notna()].notna().all() else text
    runs.insert(2, "group", group_names([r["label"] for r in records], configs))
    runs.insert(3, "status", runs.pop("status"))

    config_columns = ["label", "slug", "group"] + [c for c in runs.columns
                                                    if c.startswith("config.")]
    race = Race(directory, runs, read_table(directory, runs, "snapshots", config_columns))
    if updates:
        race.updates = read_table(directory, runs, "updates", ["label", "slug", "group"])
    if gradients:
        race.gradients = read_table(directory, runs, "gradients", ["label", "slug", "group"])
    return race


def read_table(directory, runs, table, joined):
    """One CSV of every run folder, stacked, with the run's `joined` columns in front."""
    import pandas as pd

    parts = []
    for _, run in runs.iterrows():
        path = directory / run["slug"] / TABLE_FILES[table]
        if run["status"] == "missing" or not path.is_file():
            continue
        try:
            part = pd.read_csv(path)
        except pd.errors.EmptyDataError:
            continue  # an empty file: a run killed before its first row
        except (OSError, ValueError, pd.errors.ParserError) as e:
            raise LoadError(f"cannot read {path} ({e}); the run's files are damaged")
        for i, column in enumerate(joined):
            part.insert(i, column, run[column])
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=joined)
    stacked = pd.concat(parts, ignore_index=True)
    for column in ("label", "slug", "group"):  # repeated per row: categories save memory
        stacked[column] = stacked[column].astype("category")
    return stacked


def describe(race):
    """The summary the command line prints."""
    runs, snaps = race.runs, race.snapshots
    lines = [f"{race.dir}: {len(runs)} runs in {runs['group'].nunique()} groups, "
             f"{len(snaps)} snapshots"]
    counts = snaps.groupby("slug", observed=True).size() if len(snaps) else {}
    lines.append(f"{'run':40s} {'status':11s} {'snapshots':>9s} {'final test error':>16s}")
    for _, run in runs.iterrows():
        final = run.get("final_test_error")
        final = "" if final is None or final != final else f"{float(final):.4f}"
        lines.append(f"{run['label'][:40]:40s} {run['status']:11s} "
                     f"{int(counts.get(run['slug'], 0)):9d} {final:>16s}")
    lines.append("groups (runs that differ only by seed):")
    for group, members in runs.groupby("group", sort=False):
        seeds = members["config.seed"].tolist() if "config.seed" in members else []
        seeds = ", ".join(str(int(s)) for s in seeds if s == s)
        lines.append(f"  {group}: {len(members)} runs" + (f" (seeds {seeds})" if seeds else ""))
    for table in ("updates", "gradients"):
        frame = getattr(race, table)
        if frame is not None:
            lines.append(f"{table}: {len(frame)} rows")
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise LoadError(f"{message}; see tools/load_race.py --help")


def main(argv):
    description = "\n".join(l for l in __doc__.splitlines() if not l.startswith("usage:"))
    parser = Parser(prog="load_race.py", description=description,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", type=Path, help="a `stalesgd race --out` folder")
    parser.add_argument("--updates", action="store_true", help="also load updates.csv")
    parser.add_argument("--gradients", action="store_true", help="also load gradients.csv")
    parser.add_argument("--csv", choices=["runs", "snapshots", "updates", "gradients"],
                        help="write this table as CSV to stdout instead of the summary")
    args = parser.parse_args(argv)
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise LoadError("needs pandas: install Debian's python3-pandas (tools/setup.sh plot)")
    race = load_race(args.dir, updates=args.updates or args.csv == "updates",
                     gradients=args.gradients or args.csv == "gradients")
    if args.csv:
        getattr(race, args.csv).to_csv(sys.stdout, index=False)
    else:
        print(describe(race))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except LoadError as e:
        print(f"load_race.py: error: {e}", file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:  # `load_race.py DIR --csv snapshots | head`: the reader had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)

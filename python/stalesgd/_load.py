"""Run and race folders, as `stalesgd train --out` and `stalesgd race --out` write them, as pandas
DataFrames (docs/outputs.md, docs/python.md). tools/load_race.py is the command line over this.

load_race(DIR) gives a Race:
runs       one row per run, in results.csv's order: every results.csv column by its name,
           `status` (summary.json's, `running` until the run ends or for one killed;
           `unfinished`: no summary.json, `missing`: no folder), `group` (the label without its
           seed suffix), `config.KEY` per key of summary.json's config, `summary.KEY` for the
           rest (nested keys joined by dots; a list becomes one text value, hidden = [256, 128]
           -> "256,128", or its JSON text if an item is a list, an object or a string holding
           a comma), so every cell is a scalar
snapshots  one row per evals.csv row of every run, with label, slug, group and the config.*
           columns of its run
updates, gradients   one row per updates.csv / gradients.csv row with label, slug and group
           (merge with `runs` on slug for more): only on request, gradients.csv can be large

load(DIR) gives a Result for one run folder (its tables as the CSVs hold them, summary.json as
a dict) and load_race(DIR) for anything else.
"""

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import Error

# The seed part of a label: " (seed 3)" as `seeds = [...]` writes it, "-seed-3" ending its
# folder's name (a race without results.csv is labelled by folder), and "seed=3" inside a
# parenthesised list of swept values (" (k=4, seed=3)"), so a sweep's labels group as well.
SEED_SUFFIX = re.compile(r"\s*\(seed[ =]\d+\)|-seed-\d+$")
SEED_ITEM = re.compile(r"(,\s*seed=\d+(?=[,)]))|((?<=\()seed=\d+,\s*)")
NOT_GROUPING = {"seed"}
ADDED = {"group", "status"}  # the runs table's columns that are not results.csv's

# Outputs one run folder writes, in the order `stalesgd train` documents them.
TABLE_FILES = {"snapshots": "evals.csv", "updates": "updates.csv", "gradients": "gradients.csv"}
# Any of these makes a folder a run's: a running run has its CSVs before its summary.json.
RUN_FILES = ("summary.json", "evals.csv", "updates.csv")


class LoadError(Error):
    """A folder that is no run or race, or whose files are damaged: one line saying so."""


def strip_seed(label):
    """The label of a run without its seed: 'sync (seed 2)' -> 'sync'."""
    return SEED_ITEM.sub("", SEED_SUFFIX.sub("", label)).strip()


def group_key(label, config):
    """Runs with equal keys are repeats that differ only by seed.

    Both the label without its seed and the config without its seed must match: a label
    alone can hide a changed option, a config alone would merge two differently named runs
    that happen to share settings (say a copy of a run). A switch off counts as unrecorded.
    """
    settings = None
    if isinstance(config, dict):
        settings = json.dumps({k: v for k, v in config.items()
                               if k not in NOT_GROUPING and v is not False}, sort_keys=True)
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


def read_summary(path, notes):
    """summary.json as a dict; None when absent (an unfinished run) or unreadable (noted)."""
    if not path.is_file():
        return None
    try:
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        notes.append(f"cannot read {path} ({e}); its run is loaded as unfinished")
        return None
    return data


def list_text(items):
    """One cell for a list: a DataFrame cell holding a list breaks insert, groupby and to_csv."""
    if any(isinstance(v, (dict, list)) or (isinstance(v, str) and "," in v) for v in items):
        return json.dumps(items)
    # As results.csv, runs.csv and `--set hidden=256,128` write it.
    return ",".join(v if isinstance(v, str) else json.dumps(v) for v in items)


def flatten(prefix, node, out):
    """Nested dicts become dotted keys, lists one text value (list_text): all cells scalars."""
    if isinstance(node, dict):
        for key, value in node.items():
            flatten(f"{prefix}.{key}", value, out)
    elif isinstance(node, list):
        out[prefix] = list_text(node)
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
    notes: list = field(default_factory=list)  # what was loaded only in part, and why


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
        if not {"label", "slug"} <= set(table.columns):
            raise LoadError(f"{results} has no label or slug column; re-run the race")
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
        raise LoadError(f"{directory} is neither a race (results.csv or run folders) nor a run "
                        f"({', '.join(RUN_FILES)}); pass the --out DIR of `stalesgd race` "
                        "or `stalesgd train`")
    return [{"label": p.name, "slug": p.name} for p in subdirs]


def is_run_dir(path):
    return any((path / name).is_file() for name in RUN_FILES)


def load_race(race_dir, updates=False, gradients=False):
    """A Race with .runs and .snapshots (and .updates / .gradients when asked for)."""
    import pandas as pd

    directory = Path(race_dir)
    if not directory.is_dir():
        raise LoadError(f"{directory} is not a directory; pass the --out DIR of `stalesgd race` "
                        "or `stalesgd train`")
    rows = run_rows(directory)
    records, configs, notes = [], [], []
    for row in rows:
        slug = row.get("slug", "")
        folder = directory / slug if slug else None
        summary = read_summary(folder / "summary.json", notes) if folder else None
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
    notes += status_notes(directory, runs)

    config_columns = ["label", "slug", "group"] + [c for c in runs.columns
                                                    if c.startswith("config.")]
    race = Race(directory, runs, read_table(directory, runs, "snapshots", config_columns),
                notes=notes)
    if updates:
        race.updates = read_table(directory, runs, "updates", ["label", "slug", "group"])
    if gradients:
        race.gradients = read_table(directory, runs, "gradients", ["label", "slug", "group"])
    for note in notes:
        print(f"{NOTE_PREFIX}{note}", file=sys.stderr)
    return race


# status: (the note after a single run folder's name, the note after "N of M runs (...)")
STATUS_NOTES = {
    "unfinished": (" has no summary.json (a run still going, or cut short): loaded what its "
                   "CSVs hold, without config.* and summary.* columns",
                   "have no summary.json (still going, or cut short): only their CSVs are loaded"),
    "running": ("'s summary.json says running (a run still going, or killed): loaded what its "
                "CSVs hold so far, and its config",
                "say running (still going, or killed): their CSVs are loaded as far as they go"),
    "missing": ("", "of results.csv have no folder: status missing, no snapshots"),
}


def status_notes(directory, runs):
    """Which rows hold less than a finished run: the tables are complete otherwise."""
    notes = []
    for status, (alone, several) in STATUS_NOTES.items():
        slugs = runs.loc[runs["status"] == status, "slug"].astype(str).tolist()
        if slugs == ["."] and alone:
            notes.append(f"{directory}{alone}")
        elif slugs:
            notes.append(f"{len(slugs)} of {len(runs)} runs ({', '.join(slugs[:3])}"
                         f"{', ...' if len(slugs) > 3 else ''}) {several}")
    return notes


def read_table(directory, runs, table, joined):
    """One CSV of every run folder, stacked, with the run's `joined` columns in front."""
    import pandas as pd

    parts, positions = [], []
    for position, (_, run) in enumerate(runs.iterrows()):
        path = directory / run["slug"] / TABLE_FILES[table]
        if run["status"] == "missing" or not path.is_file():
            continue
        try:
            part = pd.read_csv(path)
        except pd.errors.EmptyDataError:
            continue  # an empty file: a run killed before its first row
        except (OSError, ValueError, pd.errors.ParserError) as e:
            raise LoadError(f"cannot read {path} ({e}); the run's files are damaged")
        parts.append(part)
        positions += [position] * len(part)
    if not parts:
        return pd.DataFrame(columns=joined)
    stacked = pd.concat(parts, ignore_index=True)
    # Joined after stacking, taken from the whole column: per-part scalars would give each part
    # its own dtype (a bool beside an unfinished run's NaN), which concat warns about.
    for i, column in enumerate(joined):
        stacked.insert(i, column, runs[column].take(positions).to_numpy())
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
        if final is None or final != final:  # no results.csv: summary.json's
            final = run.get("summary.final_test_error")
        final = "" if final is None or final != final else f"{float(final):.4f}"
        lines.append(f"{run['label'][:40]:40s} {run['status']:11s} "
                     f"{int(counts.get(run['slug'], 0)):9d} {final:>16s}")
    lines.append("groups (runs that differ only by seed):")
    for group, members in runs.groupby("group", sort=False):
        seeds = ", ".join(str(int(s)) for s in members.get("config.seed", []) if s == s)
        lines.append(f"  {group}: {len(members)} runs" + (f" (seeds {seeds})" if seeds else ""))
    lines += [f"{table}: {len(getattr(race, table))} rows" for table in ("updates", "gradients")
              if getattr(race, table) is not None]
    return "\n".join(lines)


# How a note is printed on stderr; tools/load_race.py keeps its own name on it.
NOTE_PREFIX = "stalesgd: note: "


@dataclass
class Result:
    """One run: updates, gradients, evals and workers as their CSVs, summary.json as a dict."""

    dir: "object"  # the run folder; None for a run into a temporary folder, removed since
    updates: "object"
    gradients: "object"
    evals: "object"
    workers: "object"
    summary: dict
    stop_reason: str = ""
    error: str = ""  # why the run was cut short (summary.json's one line); "" when it was not

    @property
    def snapshots(self):
        return self.evals

    def __repr__(self):
        final = self.evals["test_error"].iloc[-1] if len(self.evals) else float("nan")
        return (f"<stalesgd.Result {len(self.updates)} updates, {len(self.evals)} evaluations, "
                f"final test error {final:.4f}, {self.stop_reason or 'complete'}>")


def read_run(directory, dir_kept=True):
    """A Result from one run folder."""
    import pandas as pd

    directory = Path(directory)
    tables = {}
    for name in ("updates", "gradients", "evals", "workers"):
        path = directory / f"{name}.csv"
        try:
            tables[name] = pd.read_csv(path)
        except FileNotFoundError:
            tables[name] = pd.DataFrame()
        except pd.errors.EmptyDataError:
            tables[name] = pd.DataFrame()
        except (OSError, ValueError, pd.errors.ParserError) as e:
            raise LoadError(f"cannot read {path} ({e}); the run's files are damaged")
    notes = []
    summary = read_summary(directory / "summary.json", notes) or {}
    if notes:
        raise LoadError(notes[0])
    return Result(directory if dir_kept else None, summary=summary,
                  stop_reason=str(summary.get("stop_reason", "")),
                  error=str(summary.get("error", "") or ""), **tables)


def load(path, updates=True, gradients=False):
    """A run folder as a Result, a race folder (or a folder of runs) as a Race."""
    directory = Path(path)
    if not directory.is_dir():
        raise LoadError(f"{directory} is not a directory; pass the --out DIR of `stalesgd race` "
                        "or `stalesgd train`")
    if is_run_dir(directory) and not (directory / "results.csv").is_file():
        return read_run(directory)
    race = load_race(directory, updates=updates, gradients=gradients)
    results = directory / "results.csv"
    if results.is_file():
        import pandas as pd
        race.results = pd.read_csv(results)
    return race

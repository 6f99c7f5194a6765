#!/usr/bin/python3
"""Loads a `stalesgd race --out DIR` or `stalesgd train --out DIR` folder into pandas DataFrames
(a command line over stalesgd.load_race, python/stalesgd/_load.py).

usage: tools/load_race.py DIR [--updates] [--gradients] [--csv TABLE]

As a module (tools/ on sys.path, e.g. `sys.path.insert(0, "tools")` from the repository root):

    from load_race import load_race
    race = load_race("runs/quickstart")        # race.runs, race.snapshots
    race = load_race("runs/x", updates=True)   # also race.updates (gradients=True: .gradients)

The tables (runs, snapshots, updates, gradients) are described in python/stalesgd/_load.py.

Columns are read by name, so columns that results.csv or summary.json gain appear as they
are (a results.csv column named group or status as results.group, results.status). DIR may
also be a folder of run folders without results.csv (a race cut short before writing it) or one
run folder (labelled by its name), finished or not. What is loaded only in part (runs running or
without summary.json, run folders gone) is said in notes: Race.notes, each also printed to stderr as
`load_race.py: note: ...`. The command line prints the runs, their groups and the row counts;
`--csv TABLE` writes that table to stdout instead. A DIR that is neither a race nor a run: one
line, exit status 1 (as a module: LoadError, a ValueError). Needs Debian's python3-pandas
(`tools/setup.sh plot`); see docs/outputs.md.
"""

import argparse
import os
import sys
from pathlib import Path

# The loading itself is the Python package's (python/stalesgd/_load.py, docs/python.md); its
# pure-Python files load without the engine's extension module, from the source tree.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from stalesgd import _load  # noqa: E402
from stalesgd._load import LoadError, Race, describe, group_names, load_race, strip_seed  # noqa: E402,F401

_load.NOTE_PREFIX = "load_race.py: note: "


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise LoadError(f"{message}; see tools/load_race.py --help")


def main(argv):
    description = "\n".join(l for l in __doc__.splitlines() if not l.startswith("usage:"))
    parser = Parser(prog="load_race.py", description=description,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", type=Path,
                        help="a `stalesgd race --out` or `stalesgd train --out` folder")
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

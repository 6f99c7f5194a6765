"""Checks the pages browser_test.sh dumped from headless Chromium against the runs' own files.

usage: browser_check.py TMP FOLDER   (TMP holds the dumped pages, FOLDER the served runs)

The page writes what it shows into data- attributes (app.js, charts.js): the table's rows, the
points each chart drew per run (#drawn), the hover readout's values, the legend, the empty state.
"""
import json
import sys
from html.parser import HTMLParser

tmp, folder = sys.argv[1], sys.argv[2]
CHARTS = ["error-time", "error-iteration", "loss-time", "loss-iteration", "staleness",
          "seconds-per-iteration", "staleness-histogram"]
UPDATE_CHARTS = {"staleness", "seconds-per-iteration", "staleness-histogram"}
SWEEP = [f"sweep/k-async-k-{k}-seed-{s}" for k in (1, 2, 3, 4) for s in (1, 2)] + \
    [f"sweep/k-batch-async-k-{k}-seed-{s}" for k in (2, 4) for s in (1, 2)] + \
    ["sweep/sync-seed-1", "sweep/sync-seed-2", "sweep/diverged"]
PAPER = ["paper/async-seed-1", "paper/async-seed-2", "paper/k-sync", "paper/live"]
ALL = sorted(SWEEP + PAPER + ["killed"])


def fail(message):
    sys.exit(f"browser_test: {message}")


class Page(HTMLParser):
    """The parts of a dumped page the checks read."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.rows, self.drawn, self.charts, self.legend, self.readouts = {}, [], {}, [], {}
        self.body, self.empty_text, self.status_text = {}, "", {}
        self._in, self._row, self._readout, self._chart = None, None, None, None
        self.feed(open(f"{tmp}/{name}.html").read())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "body":
            self.body = a
        elif tag == "tr" and "data-run" in a:
            self.rows[a["data-run"]] = a
            self._row = a["data-run"]
        elif tag == "span" and "status" in classes and self._row:
            self._in = ("status", self._row)
        elif tag == "li" and "data-chart" in a:
            self.drawn.append(a)
        elif tag == "div" and "chart" in classes and "data-chart" in a:
            self.charts[a["data-chart"]] = a
            self._chart, self._readout = a["data-chart"], None
        elif tag == "div" and "readout" in classes:
            self._readout = {"hidden": "hidden" in a, "x": a.get("data-x"), "rows": []}
            self.readouts[self._chart] = self._readout
        elif tag == "div" and self._readout is not None and "data-run" in a:
            self._readout["rows"].append(a)
        elif tag == "button" and "item" in classes and "data-run" in a:
            self.legend.append(a)
            self._in = ("legend", len(self.legend) - 1)
        elif tag == "div" and a.get("id") == "empty":
            self._in = ("empty", "hidden" in a)
        if tag == "span" and "swatch" in classes and self._in and self._in[0] == "legend":
            self.legend[self._in[1]]["color"] = a.get("style", "")

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None
        if tag == "button":
            self._in = None
        if tag == "main":
            self._readout = None

    def handle_data(self, data):
        if not self._in:
            return
        kind, key = self._in
        if kind == "status":
            self.status_text[key] = data
            self._in = None
        elif kind == "legend":
            self.legend[key]["text"] = self.legend[key].get("text", "") + data
        elif kind == "empty":
            self.empty_text = "" if key else data
            self._in = None

    def points(self, run, chart):
        counts = [int(d["data-points"]) for d in self.drawn
                  if d.get("data-run") == run and d["data-chart"] == chart]
        return counts[0] if counts else None

    def drawn_runs(self, chart):
        return sorted(d["data-run"] for d in self.drawn if d["data-chart"] == chart and "data-run" in d)


def csv_rows(run, name):
    lines = open(f"{folder}/{run}/{name}").read().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def polled(page):
    if int(page.body.get("data-polls", "0")) < 1:
        fail(f"{page.name}: the page never finished a poll")


# The plain page, twice: every run listed and drawn, labels with the race, distinct colours.
plain = [Page("plain1"), Page("plain2")]
for page in plain:
    polled(page)
    if sorted(page.rows) != ALL:
        fail(f"{page.name}: the table lists {sorted(page.rows)}")
    for run, row in page.rows.items():
        if row["data-status"] in ("pending", "missing"):
            continue
        for chart in CHARTS:
            points = page.points(run, chart)
            started = row["data-started"] == "true"
            if points is None or (started and points < 1):
                fail(f"{page.name}: run {run} has no curve on chart {chart}")
    bands = [d for d in page.drawn if d.get("data-group") == "paper/async" and d["data-chart"] == "error-time"]
    if not bands or int(bands[0]["data-points"]) < 2:
        fail(f"{page.name}: the two async seeds have no band")
    if page.body.get("data-table-overflow") != "false":
        fail(f"{page.name}: the table of {len(page.rows)} runs overflows a 1400 px window")
    labels = {d["data-run"]: d.get("text", "") for d in page.legend}
    if labels.get("paper/async-seed-1") != "paper / async (seed 1)" or \
            labels.get("sweep/k-async-k-2-seed-1") != "sweep / k-async (k=2) (seed 1)":
        fail(f"{page.name}: legend labels do not name the race: {labels}")
    # One colour per group of seeds, and no two groups alike.
    color_of = {d["data-run"]: d.get("color", "") for d in page.legend}
    groups = {run.rsplit("-seed-", 1)[0] for run in ALL}
    colors = {g: {color_of[r] for r in ALL if r.rsplit("-seed-", 1)[0] == g} for g in groups}
    if any(len(c) != 1 for c in colors.values()) or len({next(iter(c)) for c in colors.values()}) != len(groups):
        fail(f"{page.name}: colours are not one per group and distinct: {colors}")
    # Honest status: killed before its first update, diverged at its second.
    killed = page.rows["killed"]
    if killed["data-status"] != "stopped" or killed["data-started"] != "false" or \
            "before its first update" not in page.status_text.get("killed", ""):
        fail(f"{page.name}: the killed run shows {killed['data-status']} "
             f"'{page.status_text.get('killed')}', started={killed['data-started']}")
    if float(killed["data-progress"] or 0) != 0.0:
        fail(f"{page.name}: the killed run shows progress {killed['data-progress']}")
    if page.rows["sweep/diverged"]["data-status"] != "incomplete":
        fail(f"{page.name}: the diverged run is {page.rows['sweep/diverged']['data-status']}")
    # The diverged run's test loss is off the loss charts' range; its error is not.
    if int(page.charts["loss-time"].get("data-clipped", "0")) < 1:
        fail(f"{page.name}: the diverged run's loss was not kept out of the y range")
    if int(page.charts["error-time"].get("data-clipped", "0")) != 0:
        fail(f"{page.name}: a test error was taken for an outlier")

first, second = plain[0].rows["paper/live"], plain[1].rows["paper/live"]
if first["data-status"] != "running":
    fail(f"the real-clock run was not running at the first load: {first['data-status']}")
if not (int(second["data-evals"]) > int(first["data-evals"]) and
        int(second["data-updates"]) > int(first["data-updates"])):
    fail(f"the running run's points did not grow: evals {first['data-evals']} -> "
         f"{second['data-evals']}, updates {first['data-updates']} -> {second['data-updates']}")
if int(first["data-evals"]) > len(csv_rows("paper/live", "evals.csv")):
    fail("the page holds more snapshots than evals.csv")

for run in ["paper/async-seed-1", "paper/async-seed-2", "paper/k-sync"] + SWEEP[:-1]:
    row = plain[1].rows[run]
    rows = csv_rows(run, "evals.csv")
    summary = json.load(open(f"{folder}/{run}/summary.json"))
    if row["data-status"] != "complete":
        fail(f"{run}: status {row['data-status']}")
    if int(row["data-evals"]) != len(rows):
        fail(f"{run}: the page has {row['data-evals']} snapshots, evals.csv {len(rows)}")
    if float(row["data-test-error"]) != float(rows[-1]["test_error"]):
        fail(f"{run}: test error {row['data-test-error']} on the page, {rows[-1]['test_error']} in evals.csv")
    if float(row["data-iterations"]) != summary["iterations"]:
        fail(f"{run}: {row['data-iterations']} iterations on the page, {summary['iterations']} in summary.json")
    theory = [d for d in plain[1].drawn if d.get("data-theory") == run]
    if not theory or int(theory[0]["data-points"]) != 2:
        fail(f"{run}: no theory line on the seconds-per-iteration chart")


def readout_matches_csv(page, chart, smooth):
    """Each run's readout row is a point of its evals.csv (smoothed as the page says)."""
    readout = page.readouts.get(chart)
    if not readout or readout["hidden"] or not readout["rows"]:
        fail(f"{page.name}: no hover readout on {chart}")
    runs = [r for r in readout["rows"] if r["data-kind"] == "run"]
    if not runs:
        fail(f"{page.name}: the readout lists no run")
    for r in runs:
        rows = csv_rows(r["data-run"], "evals.csv")
        xs = [float(row["wall_s"]) for row in rows]
        ys = [float(row["test_error"]) for row in rows]
        if smooth:
            last, out = 0.0, []
            for n, y in enumerate(ys, 1):
                last = last * smooth + (1 - smooth) * y
                out.append(last / (1 - smooth ** n))
            ys = out
        x, value = float(r["data-x"]), float(r["data-value"])
        if x not in xs:
            fail(f"{page.name}: readout x {x} of {r['data-run']} is not one of its snapshots")
        expected = ys[xs.index(x)]
        if abs(value - expected) > 1e-9:
            fail(f"{page.name}: readout {value} for {r['data-run']} at {x}, expected {expected}")
    return runs


# Filtered by text, with a hover: only the sweep's k-async runs, and the readout's values.
page = Page("filtered")
polled(page)
wanted = [r for r in SWEEP if r.startswith("sweep/k-async-")]
if sorted(page.rows) != sorted(wanted):
    fail(f"filtered: the table lists {sorted(page.rows)}, not the 8 k-async runs of the sweep")
if page.drawn_runs("error-time") != sorted(wanted):
    fail(f"filtered: the charts draw {page.drawn_runs('error-time')}")
if sorted(d["data-run"] for d in page.legend) != sorted(wanted):
    fail("filtered: the legend lists other runs")
hovered = readout_matches_csv(page, "error-time", 0)

# Filtered by race and status.
page = Page("race-status")
polled(page)
if sorted(page.rows) != ["paper/async-seed-1", "paper/async-seed-2", "paper/k-sync"]:
    fail(f"race-status: the table lists {sorted(page.rows)}")

# A filter that matches nothing: an empty state that says so, no table, no charts.
page = Page("nothing")
polled(page)
if page.rows or page.body.get("data-empty") != "filtered" or "No run of 20 matches" not in page.empty_text:
    fail(f"nothing: rows {sorted(page.rows)}, empty state '{page.empty_text}'")

# Smoothing: the readout's values are the debiased moving average of the snapshots.
page = Page("smooth")
polled(page)
if sorted(page.rows) != ["sweep/sync-seed-1", "sweep/sync-seed-2"]:
    fail(f"smooth: the table lists {sorted(page.rows)}")
readout_matches_csv(page, "error-time", 0.9)

# Outliers kept and a log scale: nothing clipped, every chart on a log scale.
page = Page("full-log")
polled(page)
if any(int(c.get("data-clipped", "0")) for c in page.charts.values()):
    fail("full-log: points were clipped with outliers kept")
if {c.get("data-scale") for c in page.charts.values()} != {"log"}:
    fail("full-log: not every chart has a log scale")

# A run deleted while the page is open: the others are there.
page = Page("deleted")
polled(page)
if sorted(page.rows) != [r for r in ALL if r != "killed"]:
    fail(f"deleted: the table lists {sorted(page.rows)}")

print(f"browser_check: 20 runs of 2 races and a run drawn on every chart; filters, a hover readout "
      f"({len(hovered)} runs equal to evals.csv), smoothing, log scale, outliers and an empty state "
      f"checked; the running run grew ({first['data-evals']} -> {second['data-evals']} snapshots)")

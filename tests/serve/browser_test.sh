#!/usr/bin/env bash
# `stalesgd serve` in a real browser (docs/serve.md, "Tests"): a race whose real-clock run is
# still writing, served, and loaded by headless Chromium twice a few seconds apart. Every run's
# curve must be drawn on every chart (the page writes its point counts into #drawn), the running
# run's points must grow between the two loads, and the table's figures must equal the CSVs.
# Saves a screenshot to ARTIFACT_DIR/serve.png.
# usage: browser_test.sh STALESGD_BINARY ARTIFACT_DIR   (from the source tree: data/ has MNIST)
set -euo pipefail
cli=${1:?usage: browser_test.sh STALESGD_BINARY ARTIFACT_DIR}
artifacts=${2:?usage: browser_test.sh STALESGD_BINARY ARTIFACT_DIR}
fail() { echo "browser_test: $*" >&2; exit 1; }
command -v chromium >/dev/null || fail "chromium is not installed; run tools/setup.sh serve"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stalesgd-serve.XXXXXX")
race_job="" serve_job=""
# Runs a command in the background in its own session, with SIGINT and SIGTERM at their defaults
# (as a terminal's job), its pid in PIDFILE (a shell may fork before it, so $! is not its pid).
start() {
  local pidfile=$1; shift
  sh -c 'echo $$ >"$0"; exec setsid env --default-signal=INT,TERM "$@"' "$pidfile" "$@"
}
signal() { kill "-$1" "$(cat "$2")" 2>/dev/null || true; }
cleanup() {
  [ -n "$serve_job" ] && signal KILL "$tmp/serve.pid"
  [ -n "$race_job" ] && signal KILL "$tmp/race.pid"
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
# A bounded wait for a condition (fails a hang; it times nothing).
wait_for() {
  local what=$1; shift
  for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done
  fail "gave up waiting for $what"
}

# Two seeds and a k-sync run on the virtual clock (done in a few seconds), then a real-clock run
# that is still going while the browser looks: 60 s, which Ctrl-C below cuts short (12 s was
# over before Chromium's first load once in CI, beside a C++ build of another test).
cat >"$tmp/race.toml" <<EOF
model = "softmax"
workers = 4
delay = "exp:mean=10ms"
eval_every = "0.25s"
eval_samples = 1000
data_dir = "$PWD/data"
[[run]]
label = "async"
rule = "async"
clock = "virtual"
time = "2s"
seed = [1, 2]
[[run]]
label = "k-sync"
rule = "k-sync"
k = 2
clock = "virtual"
time = "2s"
[[run]]
label = "live"
rule = "async"
clock = "real"
time = "60s"
EOF
start "$tmp/race.pid" "$cli" race --config "$tmp/race.toml" --out "$tmp/race" --jobs 2 \
  --no-progress -q >"$tmp/race.log" 2>&1 &
race_job=$!
live_rows() {
  kill -0 "$race_job" 2>/dev/null || fail "the race ended early: $(tail -3 "$tmp/race.log")"
  [ -f "$tmp/race/live/evals.csv" ] && [ "$(wc -l <"$tmp/race/live/evals.csv")" -ge 3 ]
}
wait_for "the real-clock run's snapshots" live_rows

start "$tmp/serve.pid" "$cli" serve "$tmp/race" --port 0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_job=$!
url=""
have_url() {
  kill -0 "$serve_job" 2>/dev/null || fail "serve ended: $(cat "$tmp/serve.err")"
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/serve.out" || true)
  [ -n "$url" ]
}
wait_for "serve's URL" have_url

# Chromium's virtual time lets the page's timers (its 1.5 s poll) run before the DOM is dumped.
browse() {
  chromium --headless --disable-gpu --no-sandbox --user-data-dir="$tmp/chromium" \
    --window-size=1400,1100 --virtual-time-budget=4000 "$@" "$url" 2>>"$tmp/chromium.log"
}
browse --dump-dom >"$tmp/dom1.html"
sleep 2
browse --dump-dom >"$tmp/dom2.html"
mkdir -p "$artifacts"
browse --screenshot="$artifacts/serve.png" >/dev/null
[ -s "$artifacts/serve.png" ] || fail "no screenshot: $(tail -3 "$tmp/chromium.log")"

/usr/bin/python3 - "$tmp" <<'EOF'
import json, sys
from html.parser import HTMLParser

tmp = sys.argv[1]
CHARTS = ["error-time", "error-iteration", "loss-time", "loss-iteration", "staleness",
          "seconds-per-iteration", "staleness-histogram"]

class Page(HTMLParser):
    def __init__(self, path):
        super().__init__()
        self.rows, self.drawn, self.polls = {}, [], 0
        self.feed(open(path).read())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.polls = int(a.get("data-polls", "0"))
        elif tag == "tr" and "data-run" in a:
            self.rows[a["data-run"]] = a
        elif tag == "li" and "data-chart" in a:
            self.drawn.append(a)

def fail(message):
    sys.exit(f"browser_test: {message}")

def evals(run):
    lines = open(f"{tmp}/race/{run}/evals.csv").read().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]

pages = [Page(f"{tmp}/dom1.html"), Page(f"{tmp}/dom2.html")]
for n, page in enumerate(pages, 1):
    if page.polls < 1:
        fail(f"load {n}: the page never finished a poll")
    if sorted(page.rows) != ["async-seed-1", "async-seed-2", "k-sync", "live"]:
        fail(f"load {n}: the table lists {sorted(page.rows)}")
    for run, row in page.rows.items():
        if row["data-status"] == "pending":
            continue
        for chart in CHARTS:
            points = [int(d["data-points"]) for d in page.drawn
                      if d.get("data-run") == run and d["data-chart"] == chart]
            if not points or points[0] < 1:
                fail(f"load {n}: run {run} has no curve on chart {chart}")
    bands = [d for d in page.drawn if d.get("data-group") == "async" and d["data-chart"] == "error-time"]
    if not bands or int(bands[0]["data-points"]) < 2:
        fail(f"load {n}: the two async seeds have no band")

first, second = pages[0].rows["live"], pages[1].rows["live"]
if first["data-status"] != "running":
    fail(f"the real-clock run was not running at the first load: {first['data-status']}")
if not (int(second["data-evals"]) > int(first["data-evals"]) and
        int(second["data-updates"]) > int(first["data-updates"])):
    fail(f"the running run's points did not grow: evals {first['data-evals']} -> "
         f"{second['data-evals']}, updates {first['data-updates']} -> {second['data-updates']}")
if int(first["data-evals"]) > len(evals("live")):
    fail("the page holds more snapshots than evals.csv")

for run in ["async-seed-1", "async-seed-2", "k-sync"]:
    row = pages[1].rows[run]
    rows = evals(run)
    summary = json.load(open(f"{tmp}/race/{run}/summary.json"))
    if row["data-status"] != "complete":
        fail(f"{run}: status {row['data-status']}")
    if int(row["data-evals"]) != len(rows):
        fail(f"{run}: the page has {row['data-evals']} snapshots, evals.csv {len(rows)}")
    if float(row["data-test-error"]) != float(rows[-1]["test_error"]):
        fail(f"{run}: test error {row['data-test-error']} on the page, {rows[-1]['test_error']} in evals.csv")
    if float(row["data-iterations"]) != summary["iterations"]:
        fail(f"{run}: {row['data-iterations']} iterations on the page, {summary['iterations']} in summary.json")
    theory = [d for d in pages[1].drawn if d.get("data-theory") == run]
    if not theory or int(theory[0]["data-points"]) != 2:
        fail(f"{run}: no theory line on the seconds-per-iteration chart")
print("browser_test: every run drawn on every chart, the running run grew "
      f"({first['data-evals']} -> {second['data-evals']} snapshots), figures equal the CSVs")
EOF

# Ctrl-C ends the race early (it writes what it has) and stops the server: 130.
signal INT "$tmp/race.pid"
wait "$race_job" || true
race_job=""
signal INT "$tmp/serve.pid"
status=0
wait "$serve_job" || status=$?
serve_job=""
[ "$status" -eq 130 ] || fail "serve exited $status after SIGINT, not 130: $(cat "$tmp/serve.err")"
echo "browser_test: passed; screenshot $artifacts/serve.png"

#!/usr/bin/env bash
# `stalesgd serve` in a real browser (docs/serve.md, "Tests"): a folder of two races and a run
# (20 runs; one race's real-clock run still writing, one run killed before its first update),
# served and loaded by headless Chromium, plainly and with the view's URL settings (filters, a
# hover, smoothing, log scale, outliers), then with a run deleted. browser_check.py reads the
# dumped pages against the runs' CSVs. Saves a screenshot of a filtered view with a hover
# readout to ARTIFACT_DIR/serve.png.
# usage: browser_test.sh STALESGD_BINARY ARTIFACT_DIR   (from the source tree: data/ has MNIST)
set -euo pipefail
cli=${1:?usage: browser_test.sh STALESGD_BINARY ARTIFACT_DIR}
artifacts=${2:?usage: browser_test.sh STALESGD_BINARY ARTIFACT_DIR}
fail() { echo "browser_test: $*" >&2; exit 1; }
command -v chromium >/dev/null || fail "chromium is not installed; run tools/setup.sh serve"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stalesgd-serve.XXXXXX")
race_job="" serve_job="" killed_job=""
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
  [ -n "$killed_job" ] && kill -KILL "$killed_job" 2>/dev/null
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

# A folder of two races and a run, 20 runs, as a researcher's results folder holds them:
# - "sweep", 15 runs on the virtual clock (done in a second or two): K and seeds of k-async and
#   k-batch-async, sync, and one whose learning rate makes it diverge at once (an outlier on the
#   loss charts);
# - "paper": two seeds and a k-sync run on the virtual clock, then a real-clock run that is still
#   going while the browser looks: 60 s, which Ctrl-C below cuts short (12 s was over before
#   Chromium's first load once in CI, beside a C++ build of another test);
# - "killed": a real-clock run killed (SIGKILL) before its first update.
folder=$tmp/folder
cat >"$tmp/sweep.toml" <<EOF
model = "softmax"
workers = 4
delay = "exp:mean=10ms"
eval_every = "0.25s"
eval_samples = 500
data_dir = "$PWD/data"
clock = "virtual"
time = "2s"
[[run]]
label = "k-async"
rule = "k-async"
k = [1, 2, 3, 4]
seed = [1, 2]
[[run]]
label = "k-batch-async"
rule = "k-batch-async"
k = [2, 4]
seed = [1, 2]
[[run]]
label = "sync"
rule = "sync"
seed = [1, 2]
[[run]]
label = "diverged"
rule = "async"
lr = 3000
EOF
"$cli" race --config "$tmp/sweep.toml" --out "$folder/sweep" --jobs 2 --no-progress -q \
  >"$tmp/sweep.log" 2>&1 || fail "the sweep race failed: $(tail -3 "$tmp/sweep.log")"

# Every worker's first minibatch takes 30 s: the run scores its initial model, then is killed.
"$cli" train --model softmax --data-dir "$PWD/data" --delay const:30s --time 60s \
  --eval-every 0.25s --eval-samples 500 --out "$folder/killed" -q >"$tmp/killed.log" 2>&1 &
killed_job=$!
first_snapshot() {
  kill -0 "$killed_job" 2>/dev/null || fail "the killed run ended early: $(tail -3 "$tmp/killed.log")"
  [ -f "$folder/killed/evals.csv" ] && [ "$(wc -l <"$folder/killed/evals.csv")" -ge 2 ]
}
wait_for "the killed run's first snapshot" first_snapshot
kill -KILL "$killed_job"
wait "$killed_job" 2>/dev/null || true
killed_job=""
[ "$(wc -l <"$folder/killed/updates.csv")" -eq 1 ] || fail "the killed run made an update"

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
start "$tmp/race.pid" "$cli" race --config "$tmp/race.toml" --out "$folder/paper" --jobs 2 \
  --no-progress -q >"$tmp/race.log" 2>&1 &
race_job=$!
live_rows() {
  kill -0 "$race_job" 2>/dev/null || fail "the race ended early: $(tail -3 "$tmp/race.log")"
  [ -f "$folder/paper/live/evals.csv" ] && [ "$(wc -l <"$folder/paper/live/evals.csv")" -ge 3 ]
}
wait_for "the real-clock run's snapshots" live_rows

start "$tmp/serve.pid" "$cli" serve "$folder" --port 0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_job=$!
url=""
have_url() {
  kill -0 "$serve_job" 2>/dev/null || fail "serve ended: $(cat "$tmp/serve.err")"
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/serve.out" || true)
  [ -n "$url" ]
}
wait_for "serve's URL" have_url

# Chromium's virtual time lets the page's timers (its 1.5 s poll) run before the DOM is dumped.
# browse QUERY CHROMIUM_ARGS...: the page at ?QUERY (the view's settings: view.js).
browse() {
  local query=$1; shift
  chromium --headless --disable-gpu --no-sandbox --user-data-dir="$tmp/chromium" \
    --window-size=1400,1100 --virtual-time-budget=4000 "$@" "$url$query" 2>>"$tmp/chromium.log"
}
browse "" --dump-dom >"$tmp/plain1.html"
sleep 2
browse "" --dump-dom >"$tmp/plain2.html"
# The must-show view: one race's k-async runs, with the readout of a hover on the first chart.
filtered='?q=sweep+k-async&hover=error-time@0.3'
browse "$filtered" --dump-dom >"$tmp/filtered.html"
mkdir -p "$artifacts"
browse "$filtered" --screenshot="$artifacts/serve.png" >/dev/null
[ -s "$artifacts/serve.png" ] || fail "no screenshot: $(tail -3 "$tmp/chromium.log")"
browse '?race=paper&status=complete' --dump-dom >"$tmp/race-status.html"
browse '?q=zzz-no-such-run' --dump-dom >"$tmp/nothing.html"
browse '?race=sweep&rule=sync&smooth=0.9&hover=error-time@0.5' --dump-dom >"$tmp/smooth.html"
browse '?outliers=0&log=1' --dump-dom >"$tmp/full-log.html"
# A run deleted while the page is open: the others stay.
rm -rf "$folder/killed"
browse "" --dump-dom >"$tmp/deleted.html"

/usr/bin/python3 "$(dirname "$0")/browser_check.py" "$tmp" "$folder"

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

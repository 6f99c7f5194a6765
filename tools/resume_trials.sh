#!/usr/bin/env bash
# Runs the randomized kill -9 / SIGINT and resume tests of tests/output/checkpoint_test.cpp REPS
# times each and writes one CSV row per repetition (docs/reliability.md, "Checkpoint and
# resume"). Each repetition of the real-clock case cuts 10 runs (5 engines x SIGKILL and
# SIGINT) at a random moment after the first checkpoint; the virtual-clock case cuts 10 runs
# (5 rules x 2 moments) and compares them byte for byte with uninterrupted ones.
# usage: tools/resume_trials.sh REPS [OUT.csv]   (after tools/build.sh; OUT defaults to stdout)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:?usage: tools/resume_trials.sh REPS [OUT.csv]}
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "tools/resume_trials.sh: REPS '$reps' is not a positive integer" >&2; exit 2; }
out=${2:-/dev/stdout}
tests=build/tests/stalesgd_tests
[ -x "$tests" ] || { echo "tools/resume_trials.sh: $tests is missing; run tools/build.sh first" >&2; exit 2; }

rows="case,repetition,cuts,assertions,failed,seconds"
for name in "resume: a real-clock run cut by kill -9 or SIGINT and resumed has each iteration once" \
            "resume: a virtual-clock run killed with kill -9 and resumed writes identical outputs"; do
  short=$([[ "$name" == *real-clock* ]] && echo real-clock || echo virtual-clock)
  for rep in $(seq "$reps"); do
    start=$(date +%s.%N)
    log=$("$tests" "$name" -r compact 2>&1 || true)
    end=$(date +%s.%N)
    # Catch2's compact summary: "Passed 1 test case with N assertions." or "Failed ... N failed".
    assertions=$(grep -oE '[0-9]+ assertions?' <<<"$log" | tail -1 | grep -oE '^[0-9]+' || echo 0)
    failed=$(grep -oE '[0-9]+ failed' <<<"$log" | tail -1 | grep -oE '^[0-9]+' || echo 0)
    rows+=$'\n'"$short,$rep,10,$assertions,$failed,$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')"
    echo "$short $rep: $assertions assertions, $failed failed" >&2
  done
done
printf '%s\n' "$rows" >"$out"

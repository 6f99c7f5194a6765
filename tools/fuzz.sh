#!/usr/bin/env bash
# Runs the libFuzzer harnesses of fuzz/ (docs/reliability.md): installs what is missing, builds
# them in build-asan (clang, AddressSanitizer + UBSan: tools/build.sh) and fuzzes NAME for SECONDS
# from its seeds in fuzz/corpus/NAME (read only) and a scratch corpus build-asan/corpus/NAME
# (kept between runs), so the tree is not modified.
# usage: tools/fuzz.sh NAME|all SECONDS [libFuzzer flags, e.g. -jobs=2 or -seed=1]
#        tools/fuzz.sh --list
# One line per harness. Exit 1 on a finding, naming the saved input (build-asan/findings/NAME/)
# and the log; replay it with build-asan/fuzz/fuzz_NAME <input>.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t names < <(for f in fuzz/*.cpp; do basename "$f" .cpp; done)
if [ "${1:-}" = "--list" ]; then printf '%s\n' "${names[@]}"; exit 0; fi
usage="usage: tools/fuzz.sh NAME|all SECONDS [libFuzzer flags]; NAME one of: ${names[*]} (tools/fuzz.sh --list)"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
name=$1 seconds=$2
shift 2
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "tools/fuzz.sh: SECONDS '$seconds' is not a positive integer; $usage" >&2; exit 2; }
if [ "$name" = all ]; then
  run=("${names[@]}")
  target=fuzz
else
  printf '%s\n' "${names[@]}" | grep -qxF -- "$name" ||
    { echo "tools/fuzz.sh: no harness '$name'; $usage" >&2; exit 2; }
  run=("$name")
  target=fuzz_$name
fi

tools/setup.sh build fuzz
# The harnesses are targets of the AddressSanitizer + UBSan build (clang, the library at -O2 with
# libFuzzer's coverage on the code that reads input): the one tools/test.sh builds for the suite.
dir=$(tools/build.sh --sanitize address,undefined --target "$target")

# A UBSan report aborts (-fno-sanitize-recover) with its stack, so libFuzzer saves the input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# One harness: its line into $dir/logs/NAME.line, exit 1 on a finding.
fuzz_one() {
  local n=$1; shift
  local corpus=$dir/corpus/$n findings=$dir/findings/$n log=$dir/logs/$n.log ok
  mkdir -p "$corpus" "$findings" "$dir/logs"
  # Files a harness's input may name (fuzz/support/scratch_dir.hpp), kept here, not in /tmp.
  export STALESGD_FUZZ_SCRATCH=$PWD/$dir/scratch/$n
  # A slow input is a finding too: -timeout is per input, far above any valid file's time.
  # Fast inputs are mutated more: a harness's read through memory files (idx_reader,
  # cifar_reader) costs about 70 times its in-memory parse.
  if "$dir/fuzz/fuzz_$n" -max_total_time="$seconds" -timeout=25 -print_final_stats=1 \
      -entropic_scale_per_exec_time=1 -artifact_prefix="$findings/" "$@" \
      "$corpus" "fuzz/corpus/$n" >"$log" 2>&1; then
    ok=1
  else
    ok=0
  fi
  local runs rate entries input what
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  entries=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  if [ "$ok" = 1 ]; then
    echo "fuzz $n: ${seconds} s, ${runs:-?} runs (${rate:-?}/s), corpus ${entries:-?} entries, no finding" >"$dir/logs/$n.line"
    return 0
  fi
  input=$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)
  what=$(grep -m1 -E '^SUMMARY: |property failed: |ERROR: libFuzzer: ' "$log" || echo "see the log")
  echo "fuzz $n: FINDING after ${runs:-?} runs: $what; input ${input:-none saved}; log $log" >"$dir/logs/$n.line"
  return 1
}

# Each harness is one process on one core: as many at a time as there are cores (STALESGD_FUZZ_JOBS
# to choose), so `all` takes SECONDS x harnesses / cores. The lines come in harness order.
jobs=${STALESGD_FUZZ_JOBS:-$(nproc)}
status=0
running=0
for n in "${run[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  rm -f "$dir/logs/$n.line"
  fuzz_one "$n" "$@" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
for n in "${run[@]}"; do cat "$dir/logs/$n.line"; done
exit $status

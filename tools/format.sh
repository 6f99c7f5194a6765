#!/usr/bin/env bash
# Applies .clang-format to every tracked C++ file, or with --check fails (exit 1) naming the
# files that are not formatted. .ci/run runs the check.
# usage: tools/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null 2>&1 ||
  { echo "tools/format.sh: clang-format not found; run tools/setup.sh test" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "tools/format.sh: not clang-formatted (run tools/format.sh): ${bad[*]}" >&2
    exit 1
  fi
  echo "tools/format.sh: ${#files[@]} C++ files formatted"
  exit 0
fi
[ $# -eq 0 ] || { echo "tools/format.sh: unknown argument '$1'; use --check or nothing" >&2; exit 2; }
clang-format -i "${files[@]}"

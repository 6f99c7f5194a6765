#!/usr/bin/env bash
# Installs what is missing, builds, fetches MNIST and runs the whole suite with ctest.
# usage: tools/test.sh [--sanitize address,undefined|thread] [extra ctest args]
# Exit status is the suite's.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize_args=()
if [ "${1:-}" = "--sanitize" ]; then sanitize_args=(--sanitize "${2:?}"); shift 2; fi
# The AddressSanitizer + UBSan build is clang's, with the fuzz harnesses (tools/build.sh).
case "${sanitize_args[1]:-}" in
  address,undefined|undefined,address) tools/setup.sh build plot serve test torch fuzz ;;
  *) tools/setup.sh build plot serve test python torch ;;
esac
dir=$(tools/build.sh "${sanitize_args[@]}")
"$dir"/stalesgd data fetch mnist
"$dir"/stalesgd data fetch fashion-mnist
ctest --test-dir "$dir" -j "$(nproc)" --output-on-failure --timeout 1200 "$@"

# Sourced by the script tests of tests/tools/ after `set -euo pipefail`: takes the stalesgd
# binary from $1, moves to the repository root (tools/ and the default data/ live there), and
# sets $stalesgd, $python (Debian's, for matplotlib and pandas), a scratch $tmp removed on exit,
# and fail(), which names the test and exits 1.
# A test that runs no binary sets no_binary=1 before sourcing it.
test_name=$(basename "$0" .sh)
[ "${no_binary:-0}" = 1 ] || stalesgd=$(realpath "${1:?usage: $test_name.sh path/to/stalesgd}")
cd "$(dirname "$0")/../.."
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "$test_name: FAIL: $*" >&2
  exit 1
}

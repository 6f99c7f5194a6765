#!/usr/bin/env bash
# From a fresh Debian 12 machine: installs what is missing, builds, fetches MNIST, and runs the
# quickstart race (sync vs async vs k-async vs k-batch-async with stragglers, at most 80 s), then
# prints the results table and writes the plots into runs/quickstart/ (--force: a second
# quickstart replaces the first one's files there). It ends with the command that shows the runs
# live in the browser (stalesgd serve; the serve group installs its HTTP and chart libraries).
set -euo pipefail
cd "$(dirname "$0")/.."

# Only what the quickstart uses: no test tools, no browser. The binary and, where LibTorch is
# installed (tools/setup.sh torch), its TorchScript plugin; tools/test.sh builds the suite.
tools/setup.sh build plot serve
dir=$(tools/build.sh --target stalesgd_cli)
"$dir"/stalesgd data fetch mnist
"$dir"/stalesgd data info --dataset mnist
echo
"$dir"/stalesgd race --config experiments/quickstart.toml --out runs/quickstart --force
/usr/bin/python3 tools/plot.py runs/quickstart --title "quickstart: MNIST mlp, P = 8, exp:mean=10ms stragglers"
echo "watch runs live in the browser: $dir/stalesgd serve runs/   (http://127.0.0.1:6006)"

#!/usr/bin/env bash
# From a fresh Debian 12 machine: installs, builds, fetches MNIST and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh build plot
dir=$(tools/build.sh)
"$dir"/stalesgd data fetch mnist
"$dir"/stalesgd data info --dataset mnist

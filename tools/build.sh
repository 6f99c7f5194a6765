#!/usr/bin/env bash
# Configures and builds stalesgd with CMake + Ninja (Release, -march=native).
# usage: tools/build.sh [--sanitize address,undefined|thread] [--target T]...  -> prints the build
#        directory. Without --target it builds everything (the suite and the benchmarks too);
#        --target builds those targets alone (the quickstart: stalesgd_cli, the binary and its
#        TorchScript plugin).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize="" target=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize="${2:?--sanitize needs address,undefined or thread}"; shift 2 ;;
    --target) target+=("${2:?--target needs a target}"); shift 2 ;;
    *) echo "tools/build.sh: unknown argument '$1'; usage: tools/build.sh [--sanitize address,undefined|thread] [--target T]..." >&2; exit 2 ;;
  esac
done
compiler=()
fuzz=OFF
case "$sanitize" in
  "") dir=build ;;
  thread) dir=build-tsan ;;
  address,undefined|undefined,address)
    # clang, which compiles it in three quarters of GCC's time, and with the libFuzzer harnesses
    # of fuzz/, so that CI compiles the library for them once (docs/reliability.md).
    dir=build-asan compiler=(-DCMAKE_CXX_COMPILER=clang++) fuzz=ON ;;
  *) echo "tools/build.sh: --sanitize takes address,undefined or thread, not '$sanitize'" >&2; exit 2 ;;
esac

# Sanitizer builds are for the test suite: no benchmarks (they would only lengthen CI).
benchmarks=ON
[ -n "$sanitize" ] && benchmarks=OFF
# ccache when installed (tools/setup.sh installs it): a rebuild, or CI on a clean clone of a
# commit whose sources an earlier build compiled, takes the cached objects. Paths are hashed
# relative to the checkout, so a clone elsewhere hits too; the sloppiness lets the tests'
# precompiled Catch2 header be cached (docs/install.md).
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime
fi
# -march=native here, for the suite and the benchmarks; the CMake default is a portable build
# (docs/install.md).
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTALESGD_NATIVE=ON \
  -DSTALESGD_SANITIZE="$sanitize" -DSTALESGD_FUZZ="$fuzz" -DSTALESGD_BUILD_TESTS=ON \
  -DSTALESGD_BUILD_BENCHMARKS="$benchmarks" "${compiler[@]}" "${launcher[@]}" >/dev/null
if [ ${#target[@]} -gt 0 ]; then
  cmake --build "$dir" --target "${target[@]}" >&2
else
  cmake --build "$dir" >&2
fi
echo "$dir"

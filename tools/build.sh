#!/usr/bin/env bash
# Configures and builds stalesgd with CMake + Ninja (Release, -march=native).
# usage: tools/build.sh [--sanitize address,undefined|thread]  -> prints the build directory
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
if [ "${1:-}" = "--sanitize" ]; then sanitize="${2:?--sanitize needs address,undefined or thread}"; fi
case "$sanitize" in
  "") dir=build ;;
  thread) dir=build-tsan ;;
  address,undefined|undefined,address) dir=build-asan ;;
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
  -DSTALESGD_SANITIZE="$sanitize" -DSTALESGD_BUILD_BENCHMARKS="$benchmarks" "${launcher[@]}" \
  >/dev/null
cmake --build "$dir" >&2
echo "$dir"

#!/usr/bin/env bash
# `pip install .` as a Python user installs stalesgd (docs/python.md, "Installing"): a fresh
# venv with --system-site-packages, no network (--no-index, --no-build-isolation: Debian's
# setuptools, wheel and pybind11), then a race from the installed package, from outside the
# repository (with BUILD, one of its runs a plug-in's rule). It installs from a copy of the sources; with BUILD (the suite's own build tree)
# pip builds the module there (STALESGD_BUILD_DIR: nothing is left to compile), else in
# build-pip/ of the copy, a second build of the library (about 8 minutes on 2 cores).
# usage: tests/python/pip_install_test.sh REPO [BUILD]
set -euo pipefail
repo=$(cd "${1:?usage: pip_install_test.sh REPO [BUILD]}" && pwd)
build_dir=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pip_install_test: $*" >&2; exit 1; }

/usr/bin/python3 -m venv --system-site-packages "$tmp/venv" || fail "python3 -m venv failed (python3-venv)"
# A copy of the sources (tracked and new files, as a user's checkout has them), so that the
# install writes nothing into the repository while other tests read it.
mkdir "$tmp/src"
(cd "$repo" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$tmp/src") ||
  fail "copying the sources failed"
start=$(date +%s)
# -march=native as tools/build.sh builds, so that ccache shares the objects of build/ (paths are
# hashed relative to the checkout: setup.py sets CCACHE_BASEDIR).
(cd "$tmp/src" && STALESGD_CMAKE_ARGS="-DSTALESGD_NATIVE=ON ${STALESGD_CMAKE_ARGS:-}" \
  STALESGD_BUILD_DIR="$build_dir" "$tmp/venv/bin/pip" install --no-build-isolation --no-index --no-deps . >"$tmp/pip.log" 2>&1) ||
  fail "pip install failed: $(tail -n 20 "$tmp/pip.log")"
[ ! -e "$tmp/src/python/stalesgd.egg-info" ] || fail "pip install wrote python/stalesgd.egg-info"
built=$(($(date +%s) - start))
cd "$tmp"
# With BUILD, also a rule plug-in the suite built (examples/custom_rule) in a run of its rule:
# the installed module's registries are the ones a plug-in registers into.
plugin=
[ -z "$build_dir" ] || plugin=$build_dir/test-plugins/libcapped_k_async.so
[ -z "$plugin" ] || [ -f "$plugin" ] || fail "$plugin is missing: build the suite first"
"$tmp/venv/bin/python" - "$repo/data" "$plugin" <<'PY' || fail "the installed package's race failed"
import sys

import stalesgd

assert stalesgd.__file__.startswith(sys.prefix), f"stalesgd from {stalesgd.__file__}, not the venv"
runs = [{"label": "sync", "rule": "sync"}, {"label": "k-async K=2", "rule": "k-async", "k": 2}]
if sys.argv[2]:
    runs.append({"label": "capped", "rule": "capped-k-async", "k": 2, "cap": 0,
                 "plugin": sys.argv[2]})
race = stalesgd.race({"model": "softmax", "workers": 4, "delay": "exp:mean=10ms",
                      "clock": "virtual", "time": "0.5s", "data_dir": sys.argv[1], "run": runs})
assert list(race.results["rule"]) == [r["rule"] for r in runs], race.results
assert (race.results["iterations"] > 10).all(), race.results
print(race.results[["label", "iterations", "final_test_error"]].to_string(index=False))
PY
echo "pip_install_test: ok (pip install . in ${built} s, then a race from the venv${plugin:+, with a plug-in rule})"

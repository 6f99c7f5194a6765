#!/usr/bin/env bash
# Installs a build into a temporary prefix and uses it as another project would
# (docs/install.md): every public header compiles on its own against the installed include dir,
# the exported targets carry no build-tree path or build-only flag, and the consumer project
# (tests/install/consumer/) configures with find_package(stalesgd), links the shared library and
# nothing else of stalesgd's dependencies, builds, runs and reports the
# same version and commit as the build's own `stalesgd --version`; docs/install.md quotes the
# consumer unchanged.
# usage: install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [SANITIZERS]
#   SANITIZERS: the build's STALESGD_SANITIZE; the consumer is compiled with the same
#   -fsanitize, as a program linking a sanitized library must be.
set -euo pipefail
build=${1:?usage: install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [SANITIZERS]}
source_dir=${2:?usage: install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [SANITIZERS]}
cxx=${3:?usage: install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [SANITIZERS]}
sanitize=${4:-}
build=$(cd "$build" && pwd -P)
source_dir=$(cd "$source_dir" && pwd -P)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stalesgd-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install_test: $*" >&2; exit 1; }
# Runs a step quietly; on failure prints its output and one line naming the step.
step() {
  local name=$1; shift
  "$@" >"$tmp/step.log" 2>&1 || { cat "$tmp/step.log" >&2; fail "$name failed: $*"; }
}

step "cmake --install" cmake --install "$build" --prefix "$prefix"
for f in bin/stalesgd lib/libstalesgd.so include/stalesgd/version.hpp \
         include/stalesgd/engine/trainer.hpp lib/cmake/stalesgd/stalesgdConfig.cmake \
         lib/cmake/stalesgd/stalesgdConfigVersion.cmake lib/cmake/stalesgd/stalesgdTargets.cmake \
         share/doc/stalesgd/cli.md share/doc/stalesgd/README.md share/man/man1/stalesgd.1; do
  [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files"
# The manual page, as man finds it under the prefix (generated from the option tables).
# (Read whole: grep -q would stop at its match, and pipefail would fail on man's SIGPIPE.)
page=$(MANPATH="$prefix/share/man" man stalesgd 2>/dev/null) || true
grep -q -- "--workers" <<<"$page" || fail "man stalesgd under $prefix/share/man shows no --workers"

# A build with the TorchScript plugin installs it, and the installed binary finds it in its own
# prefix (it is the plugin that says a file is not TorchScript; docs/models.md).
if [ -e "$build/libstalesgd_torchscript.so" ]; then
  [ -e "$prefix/lib/stalesgd/libstalesgd_torchscript.so" ] ||
    fail "cmake --install did not install lib/stalesgd/libstalesgd_torchscript.so"
  echo "not a model" >"$tmp/not-torchscript.pt"
  out=$("$prefix/bin/stalesgd" train --model "torchscript:$tmp/not-torchscript.pt" --iterations 1 \
        --data-dir "$source_dir/data" \
        --no-progress --out "$tmp/run" 2>&1) && fail "a text file was taken as a TorchScript model"
  case "$out" in
    *"is not a TorchScript file"*) echo "the installed binary loads the installed plugin" ;;
    *) fail "the installed binary did not load its plugin: $out" ;;
  esac
fi

# The exported interface is the library, its headers and its dependencies: nothing of this build.
for bad in "$build" "$source_dir" -march -fsanitize -Wall stalesgd_flags; do
  if grep -l -e "$bad" "$prefix"/lib/cmake/stalesgd/*.cmake; then
    fail "the installed CMake package mentions '$bad' (the build's interface leaked into it)"
  fi
done

# Each public header on its own, with nothing but the installed include dir: no src/ header and
# no third-party header may be needed by a user of the API.
n=0
while IFS= read -r h; do
  echo "#include <${h#"$prefix/include/"}>" |
    "$cxx" -std=c++20 -fsyntax-only -I"$prefix/include" -x c++ - 2>"$tmp/header.log" ||
    { cat "$tmp/header.log" >&2; fail "${h#"$prefix/include/"} does not compile on its own against the installed headers"; }
  n=$((n + 1))
done < <(find "$prefix/include/stalesgd" -name '*.hpp' | sort)
[ "$n" -gt 10 ] || fail "only $n public headers installed"
echo "headers: $n compile on their own"

flags=()
if [ -n "$sanitize" ]; then
  flags=(-DCMAKE_CXX_FLAGS="-fsanitize=$sanitize -fno-omit-frame-pointer"
         -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize")
fi
# No package registry: only the prefix may provide stalesgd.
step "configuring the consumer" cmake -S "$source_dir/tests/install/consumer" -B "$tmp/consumer" \
  -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "${flags[@]}"
found=$(sed -n 's/^stalesgd_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[ "$found" = "$prefix/lib/cmake/stalesgd" ] ||
  fail "find_package(stalesgd) took '$found', not the installed $prefix/lib/cmake/stalesgd"
step "building the consumer" cmake --build "$tmp/consumer"

# The consumer's link line is its own object and libstalesgd.so: the library's dependencies
# (linked PRIVATE) and Open MPI stay behind it.
link=$(grep -A3 "^build consumer:" "$tmp/consumer/build.ninja" | sed -n 's/^ *LINK_LIBRARIES = //p')
[[ "$link" == *"$prefix/lib/libstalesgd.so"* ]] ||
  fail "the consumer does not link $prefix/lib/libstalesgd.so: '$link'"
for dep in spdlog tbb fmt toml nlohmann eigen libz mpi; do
  [[ "$link" != *"$dep"* ]] || fail "the consumer's link line names '$dep': '$link'"
done
echo "the consumer links: $link"

# The library reaches MPI only through the CLI's backend (src/engine/mpi/mpi_runtime.hpp): a
# program using it does not load Open MPI.
if ldd "$tmp/consumer/consumer" | grep -E "libmpi|libopen-rte|libopen-pal"; then
  fail "the consumer loads Open MPI (above); the library must not link it"
fi
echo "the consumer does not load Open MPI"

status=0
"$tmp/consumer/consumer" >"$tmp/consumer.out" 2>&1 || status=$?
[ "$status" -eq 0 ] || { cat "$tmp/consumer.out" >&2; fail "the consumer exited with status $status"; }
cat "$tmp/consumer.out"
expected=$("$build/stalesgd" --version)
[ "$(head -n 1 "$tmp/consumer.out")" = "$expected" ] ||
  fail "the consumer reports '$(head -n 1 "$tmp/consumer.out")', the build's stalesgd '$expected'"
[ "$("$prefix/bin/stalesgd" --version)" = "$expected" ] ||
  fail "the installed stalesgd reports '$("$prefix/bin/stalesgd" --version)', not '$expected'"
for rule in sync async; do
  grep -q "^$rule  *P = 4: 400 updates" "$tmp/consumer.out" || fail "the consumer printed no $rule run"
done
# examples/: a program with a model of its own, and plug-ins with a rule, a model and a delay
# family of their own, built against the same install, without Open MPI.
for example in "$source_dir"/examples/*/; do
  name=$(basename "$example")
  step "configuring examples/$name" cmake -S "$example" -B "$tmp/example-$name" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "${flags[@]}"
  step "building examples/$name" cmake --build "$tmp/example-$name"
done
if ldd "$tmp/example-custom_model/custom_model" | grep -E "libmpi|libopen-rte|libopen-pal"; then
  fail "examples/custom_model loads Open MPI (above)"
fi
"$tmp/example-custom_model/custom_model" "$source_dir/data" "$tmp/example-custom_model/runs" ||
  fail "examples/custom_model exited with status $?"
# The same model as a plug-in of the installed stalesgd: it trains under `train --model`.
model_plugin=$tmp/example-custom_model/libhand_softmax.so
[ -f "$model_plugin" ] || fail "examples/custom_model built no libhand_softmax.so"
"$prefix/bin/stalesgd" train --plugin "$model_plugin" --model hand-softmax --clock virtual \
  --iterations 50 --eval-every 1000s --no-progress --data-dir "$source_dir/data" \
  --out "$tmp/hand-softmax" >/dev/null || fail "train --model hand-softmax from its plug-in failed"
grep -q '"model": "hand-softmax"' "$tmp/hand-softmax/summary.json" ||
  fail "summary.json does not record the plug-in's model"
# examples/custom_delay: a delay family as a plug-in of the installed stalesgd.
delay_plugin=$tmp/example-custom_delay/libweibull_delay.so
[ -f "$delay_plugin" ] || fail "examples/custom_delay built no libweibull_delay.so"
"$prefix/bin/stalesgd" train --plugin "$delay_plugin" --delay 'weibull:scale=10ms,shape=0.7' \
  --rule async --workers 4 --clock virtual --iterations 50 --eval-every 1000s --no-progress \
  --data-dir "$source_dir/data" --out "$tmp/weibull" >/dev/null ||
  fail "train --delay weibull:... from its plug-in failed"
grep -q 'weibull:scale=10ms,shape=0.7' "$tmp/weibull/summary.json" ||
  fail "summary.json does not record the plug-in's delay family"
# examples/custom_rule is a plug-in: the installed stalesgd runs its rule through every command
# (tests/install/plugin_test.sh).
plugin=$tmp/example-custom_rule/libcapped_k_async.so
[ -f "$plugin" ] || fail "examples/custom_rule built no libcapped_k_async.so"
bash "$source_dir/tests/install/plugin_test.sh" "$prefix/bin/stalesgd" "$plugin" "$source_dir" ||
  fail "the installed stalesgd with examples/custom_rule's plug-in failed (above)"

# docs/install.md quotes the consumer whole, so that the example cannot drift from this test.
doc=$(cat "$source_dir/docs/install.md")
for f in CMakeLists.txt main.cpp; do
  [[ "$doc" == *"$(cat "$source_dir/tests/install/consumer/$f")"* ]] ||
    fail "docs/install.md does not quote tests/install/consumer/$f as it is; copy it there"
done
echo "install_test: ok"

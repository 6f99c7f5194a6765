// stalesgd::version() and git_commit() (include/stalesgd/version.hpp), `stalesgd --version`, and
// cmake/git_commit.cmake, which generates git_commit() on every build.
#include "stalesgd/version.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Runs cmake/git_commit.cmake on `tree` and returns the commit string it wrote to `out`.
std::string generated_commit(const fs::path& tree, const fs::path& out) {
  const auto r =
      run_shell(fmt::format("cmake -DSOURCE_DIR='{}' -DOUTPUT='{}' -P cmake/git_commit.cmake",
                            tree.string(), out.string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(out);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex("return \"([^\"]*)\";")));
  return m[1];
}

CliResult git(const fs::path& tree, const std::string& args) {
  return run_shell(fmt::format("git -C '{}' -c user.name=t -c user.email=t@example.com {}",
                               tree.string(), args));
}

}  // namespace

TEST_CASE("version: --version prints the version and the commit", "[version]") {
  CHECK(std::regex_match(std::string(version()), std::regex(R"(\d+\.\d+\.\d+)")));
  const auto r = run_cli({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.output == fmt::format("stalesgd {} (commit {})\n", version(), git_commit()));
}

TEST_CASE("version: git_commit() is the HEAD of the checkout the build came from", "[version]") {
  const auto top = run_shell("git rev-parse --show-toplevel");
  const bool checkout =
      top.exit_code == 0 && fs::equivalent(trimmed(top.output), STALESGD_SOURCE_DIR);
  if (!checkout) {
    CHECK(git_commit() == "unknown");  // a tarball
    return;
  }
  const auto head = run_shell("git rev-parse --short HEAD");
  REQUIRE(head.exit_code == 0);
  const std::string hash = trimmed(head.output);
  // The tree may have been edited since the build: either form is the right commit. Another
  // hash means the build did not take the commit, or HEAD moved after it (then rebuild).
  INFO("HEAD is " << hash << "; the library says " << git_commit());
  CHECK((git_commit() == hash || git_commit() == hash + "-dirty"));
}

TEST_CASE("version: cmake/git_commit.cmake writes the hash, -dirty or unknown", "[version]") {
  TempDir dir;
  const fs::path tree = dir / "tree";
  const fs::path out = dir / "git_commit.cpp";
  fs::create_directories(tree);
  write_bytes(tree / "a.txt", {'a', '\n'});
  CHECK(generated_commit(tree, out) == "unknown");  // not a git checkout

  REQUIRE(git(tree, "init -q").exit_code == 0);
  REQUIRE(git(tree, "add a.txt").exit_code == 0);
  REQUIRE(git(tree, "commit -q -m first").exit_code == 0);
  const std::string hash = trimmed(git(tree, "rev-parse --short HEAD").output);
  CHECK(generated_commit(tree, out) == hash);

  // An unchanged commit leaves the file alone, so the build recompiles nothing.
  const auto old_time = fs::last_write_time(out) - std::chrono::hours(1);
  fs::last_write_time(out, old_time);
  CHECK(generated_commit(tree, out) == hash);
  CHECK(fs::last_write_time(out) == old_time);

  write_bytes(tree / "a.txt", {'b', '\n'});
  CHECK(generated_commit(tree, out) == hash + "-dirty");  // a modified file
  REQUIRE(git(tree, "checkout -q a.txt").exit_code == 0);
  CHECK(generated_commit(tree, out) == hash);
  write_bytes(tree / "new.cpp", {'\n'});
  CHECK(generated_commit(tree, out) == hash + "-dirty");  // an untracked file is built too

  // A tree inside another repository is not that repository's commit.
  fs::create_directories(tree / "unpacked");
  CHECK(generated_commit(tree / "unpacked", out) == "unknown");
}

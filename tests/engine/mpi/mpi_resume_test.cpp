// --engine mpi with --checkpoint-every: rank 0 writes the checkpoint; an mpirun job killed with
// kill -9 and resumed with --resume continues with each iteration once.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/mpi/mpi_test_util.hpp"

using namespace stalesgd::test;
namespace fs = std::filesystem;

TEST_CASE("mpi: a run killed with kill -9 and resumed has each iteration once", "[engine][mpi]") {
  require_mpi();
  TempDir dir;
  const fs::path out = dir / "run";
  // Every rank is killed at once once rank 0 has written a checkpoint and gone on a little. The
  // pattern is anchored at the binary's path: unanchored it also matches this shell's own
  // command line, which pkill would kill before it waits.
  const std::string ranks =
      std::string("'^") + STALESGD_CLI + " train --engine mpi .*" + out.string() + "'";
  const auto killed = run_mpi_shell(
      "timeout --foreground 60 tools/mpirun.sh -np 3 " STALESGD_CLI
      " train --engine mpi --model softmax --rule k-sync --k 1 --delay exp:mean=3ms --time 3s "
      "--checkpoint-every 0.3s --no-progress --out " +
      out.string() + " >/dev/null 2>&1 & for i in $(seq 1200); do [ -e " +
      (out / "checkpoint.bin").string() + " ] && break; sleep 0.05; done; sleep 0.5; pkill -9 -f " +
      ranks +
      "; wait; "
      // A killed rank may still be in a system call (fsync); until it is gone it owns the
      // folder, and the resume would be refused as a second process on it.
      "for i in $(seq 200); do pgrep -f " +
      ranks + " >/dev/null || break; sleep 0.05; done; echo done");
  INFO(killed.output);
  REQUIRE(fs::exists(out / "checkpoint.bin"));
  REQUIRE(summary_status(out) == "running");  // written at the start, never ended
  // A worker rank that cannot read the checkpoint (on another host, with no copy of the folder)
  // stops every rank, named by rank 0 in one line; nothing in the folder changes.
  const auto bytes = [&](const char* name) {
    std::ifstream f(out / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string checkpoint = bytes("checkpoint.bin");
  const std::string summary = bytes("summary.json");
  const std::string flags = " train --engine mpi --no-progress --resume ";
  const auto unread =
      run_mpi_shell("timeout 60 tools/mpirun.sh -np 1 " STALESGD_CLI + flags + out.string() +
                    " : -np 2 " STALESGD_CLI + flags + (dir / "elsewhere").string());
  INFO(unread.output);
  CHECK(unread.exit_code == 1);
  CHECK(line_count(unread.output) == 1);
  CHECK(unread.output.find("stalesgd: error: rank 1 (host ") != std::string::npos);
  CHECK(unread.output.find((dir / "elsewhere").string() + ": no such folder") != std::string::npos);
  CHECK(bytes("checkpoint.bin") == checkpoint);
  CHECK(bytes("summary.json") == summary);
  const auto resumed = run_mpi_shell("timeout --foreground 60 tools/mpirun.sh -np 3 " STALESGD_CLI
                                     " train --engine mpi --no-progress --resume " +
                                     out.string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  std::ifstream updates(out / "updates.csv");
  std::string line;
  std::getline(updates, line);
  std::uint64_t expected = 1;
  while (std::getline(updates, line)) {
    REQUIRE(std::stoull(line.substr(0, line.find(','))) == expected);
    ++expected;
  }
  std::ifstream in(out / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["stop_reason"] == "time");
  CHECK(j["iterations"].get<std::uint64_t>() == expected - 1);
  CHECK(expected > 10);
}

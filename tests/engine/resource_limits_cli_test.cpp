// Memory and threads running out, through the real process (docs/reliability.md, "Memory and
// threads"): an allocation that fails in a worker on every engine, a worker thread the system
// will not start, and, in the plain build, the refusals made before anything is allocated under
// a `ulimit -v`. Each ends in one line, exit 1, and summary.json saying "failed" where the run
// had begun; a run that failed before its first update does not need --force to be run again.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/fixtures.hpp"
#include "support/sanitized.hpp"
#include "support/summary.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

CliResult train(const std::string& env, const std::string& flags, const fs::path& out) {
  return run_shell(env + kCli + " train --model softmax --iterations 200 --no-progress " + flags +
                   " --out " + out.string());
}

// The run's files are all written, summary.json "failed" with the line as its error.
void check_failed(const CliResult& r, const fs::path& out, const std::string& line_start) {
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, StartsWith("stalesgd: error: " + line_start));
  const auto s = read_summary(out);
  CHECK(s["status"] == "failed");
  CHECK_THAT(s["error"].get<std::string>(), StartsWith(line_start));
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv", "workers.csv", "run.log"}) {
    INFO(f);
    CHECK(fs::exists(out / f));
  }
}

}  // namespace

TEST_CASE(
    "resource limits CLI: memory running out in a worker is one line and exit 1 on every "
    "engine",
    "[cli][reliability][resources]") {
  const std::string flags =
      GENERATE(std::string("--workers 4 --rule async"),
               std::string("--workers 4 --rule async --server thread"),
               std::string("--workers 4 --rule async --server hogwild"),
               std::string("--workers 4 --rule k-async --k 2 --clock virtual"));
  INFO(flags);
  TempDir dir;
  const auto r = train("STALESGD_FAULT=worker:alloc ", flags, dir / "run");
  check_failed(r, dir / "run", "out of memory in worker ");
  CHECK_THAT(r.output, Contains("an allocation failed (") && Contains(" left under "));
  // Failed before its first update: the same command, without the fault, needs no --force.
  const auto again = train("", flags, dir / "run");
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(read_summary(dir / "run")["status"] == "complete");
}

TEST_CASE("resource limits CLI: a worker thread the system will not start is one line and exit 1",
          "[cli][reliability][resources]") {
  const std::string server = GENERATE(std::string("inline"), std::string("thread"));
  INFO(server);
  TempDir dir;
  const auto r =
      train("STALESGD_FAULT=thread:threads ",
            "--workers 8 --rule k-sync --k 4 --delay const:1ms --server " + server, dir / "run");
  check_failed(r, dir / "run",
               "starting the worker threads: the system would not start another thread (EAGAIN)");
  CHECK_THAT(r.output, Contains("fewer --workers, or --clock virtual"));
  CHECK(read_summary(dir / "run")["iterations"] == 0);
}

// Not in the sanitizer builds: ASan and TSan reserve terabytes of address space for their
// shadow memory at start-up, so no process starts under a `ulimit -v`; the plain suite runs it.
#if !STALESGD_TEST_SANITIZED
TEST_CASE(
    "resource limits CLI: under ulimit -v what cannot fit is refused before it is "
    "allocated",
    "[cli][reliability][resources]") {
  TempDir dir;
  const std::string limit = "ulimit -v 3000000 && ";  // 3 GB of address space
  SECTION("an .npz whose arrays need more memory than the limit: no summary, nothing to force") {
    // 170,000 samples of 64x64 uint8 (700 MB, deflated to a few MB): 2.8 GB as float32.
    const auto py = run_shell(
        "/usr/bin/python3 -c \"import numpy; p='" + (dir / "big.npz").string() +
        "'; x=numpy.zeros((170000, 64, 64), 'uint8'); x[:, 0, 0]=255; y=numpy.arange(170000) % "
        "10; numpy.savez_compressed(p, x_train=x, y_train=y, x_test=x[:10], y_test=y[:10])\"");
    REQUIRE(py.exit_code == 0);
    const auto r = train(limit, "--dataset npz:" + (dir / "big.npz").string(), dir / "run");
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output,
               StartsWith("stalesgd: error: " + (dir / "big.npz").string() +
                          ": 170010 samples of 1x64x64 as float32 and its arrays inflated: ") &&
                   Contains("GB needed, but this process may allocate only") &&
                   Contains("under the address-space limit (ulimit -v) of 3.07 GB") &&
                   Contains("save fewer samples"));
    CHECK_FALSE(fs::exists(dir / "run" / "summary.json"));
  }
  SECTION("4,096 real-clock workers, whose stacks the limit cannot hold") {
    const auto r = train(limit, "--workers 4096 --rule async --delay const:10ms", dir / "run");
    check_failed(r, dir / "run", "--workers 4096 on the real clock: 4100 threads of ");
    CHECK_THAT(r.output, Contains("under the address-space limit (ulimit -v)") &&
                             Contains("or --clock virtual"));
    // On the virtual clock the same workers need no thread each.
    const auto v = train(limit, "--workers 4096 --rule async --delay const:10ms --clock virtual",
                         dir / "virtual");
    INFO(v.output);
    CHECK(v.exit_code == 0);
  }
  SECTION("a model whose copies cannot fit: one per worker and the server's") {
    const auto r = run_shell(limit + kCli +
                             " train --model mlp --hidden 20000,20000 --workers 4 "
                             "--iterations 5 --no-progress --out " +
                             (dir / "run").string());
    check_failed(r, dir / "run", "5 copies of the model's 415920010 values");
  }
}
#endif

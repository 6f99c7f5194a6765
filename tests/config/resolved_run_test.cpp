// ResolvedRun::resolve: derived values (effective K, mlp hidden default), the server/clock
// combinations it rejects, and the one-parse check: `stalesgd train` opens a trace file once.
#include "stalesgd/config/resolved_run.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "support/fixtures.hpp"
#include "util/subprocess.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

TrainerOptions options(const std::string& rule, int workers, int k = 0) {
  TrainerOptions o;
  o.model.name = "softmax";
  o.rule = {rule, k};
  o.workers = workers;
  o.iterations = 10;
  o.progress = false;
  return o;
}

std::string error_of(const TrainerOptions& o) {
  auto r = ResolvedRun::resolve(o);
  if (r.ok()) FAIL("resolve accepted what it should reject");
  return r.error().message;
}

}  // namespace

TEST_CASE("resolve fills the effective K: sync -> P, async -> 1, k-rules their --k", "[config]") {
  auto sync = ResolvedRun::resolve(options("sync", 6));
  REQUIRE(sync.ok());
  CHECK(sync->rule().rule == "sync");
  CHECK(sync->rule().k == 6);
  CHECK(sync->options().rule.k == 6);  // written back for summary.json
  CHECK(sync->make_rule()->k() == 6);

  auto async = ResolvedRun::resolve(options("async", 6));
  REQUIRE(async.ok());
  CHECK(async->rule().rule == "async");
  CHECK(async->rule().k == 1);
  CHECK(async->options().rule.k == 1);

  auto kasync = ResolvedRun::resolve(options("k-async", 6, 3));
  REQUIRE(kasync.ok());
  CHECK(kasync->rule().k == 3);
  CHECK(kasync->workers() == 6);
}

TEST_CASE("resolve gives an mlp without --hidden one hidden layer of 128", "[config]") {
  auto o = options("async", 2);
  o.model.name = "mlp";
  auto r = ResolvedRun::resolve(o);
  REQUIRE(r.ok());
  CHECK(r->options().model.hidden == std::vector<int>{128});
  o.model.hidden = {64, 32};
  auto given = ResolvedRun::resolve(o);
  REQUIRE(given.ok());
  CHECK(given->options().model.hidden == std::vector<int>{64, 32});
}

TEST_CASE("resolve rejects --server hogwild with any rule but async", "[config]") {
  for (const auto& [rule, k] : std::vector<std::pair<std::string, int>>{
           {"sync", 0}, {"k-sync", 2}, {"k-batch-sync", 2}, {"k-async", 2}, {"k-batch-async", 2}}) {
    INFO(rule);
    auto o = options(rule, 4, k);
    o.server = ServerPlacement::kHogwild;
    const auto message = error_of(o);
    CHECK_THAT(message, Contains("hogwild"));
    CHECK_THAT(message, Contains("async"));
    CHECK_THAT(message, Contains(rule));
  }
  auto o = options("async", 4);
  o.server = ServerPlacement::kHogwild;
  CHECK(ResolvedRun::resolve(o).ok());
}

TEST_CASE("resolve rejects a server placement on the virtual clock", "[config]") {
  for (const auto server : {ServerPlacement::kThread, ServerPlacement::kHogwild}) {
    INFO(to_string(server));
    auto o = options("async", 4);
    o.server = server;
    o.clock = ClockKind::kVirtual;
    const auto message = error_of(o);
    CHECK_THAT(message, Contains(std::string("--server ") + to_string(server)));
    CHECK_THAT(message, Contains("virtual clock"));
    o.clock = ClockKind::kReal;
    CHECK(ResolvedRun::resolve(o).ok());
  }
}

TEST_CASE("resolve rejects --compute-time on the real clock", "[config]") {
  auto o = options("async", 2);
  o.compute_time_s = 0.002;
  CHECK_THAT(error_of(o), Contains("--compute-time"));
  o.clock = ClockKind::kVirtual;
  CHECK(ResolvedRun::resolve(o).ok());
}

TEST_CASE("train and race refuse --compute-time on the real clock in one line", "[config][cli]") {
  const std::string line =
      "--compute-time models a gradient's compute on the virtual clock; on the real clock "
      "compute takes what it takes: drop --compute-time or add --clock virtual";
  auto r = run_cli({"train", "--compute-time", "2ms", "--iterations", "10"});
  CHECK(r.exit_code == 2);
  CHECK(r.output == "stalesgd: error: " + line + "\n");
  TempDir dir;
  std::ofstream(dir / "x.toml") << "iterations = 10\ncompute_time = \"2ms\"\n[[run]]\n"
                                   "label = \"a\"\n";
  r = run_cli({"race", "--config", (dir / "x.toml").string(), "--dry-run"});
  CHECK(r.exit_code == 2);
  CHECK(r.output ==
        "stalesgd: error: " + (dir / "x.toml").string() + ":3: run 'a': " + line + "\n");
}

TEST_CASE("every time a run takes is refused over 1e9 s in one line", "[config][cli]") {
  // Longer times wrapped the engines' nanosecond clocks (duration.hpp's kMaxDurationSeconds).
  const std::vector<std::vector<std::string>> cases{
      {"--time", "1e10s"},
      {"--eval-every", "1e10s"},
      {"--clock", "virtual", "--compute-time", "1e10s"},
      {"--rule", "k-async", "--k", "1", "--adasync-every", "1e10s"},
      {"--delay", "const:1e10s"},
      {"--delay", "exp:mean=1e10s"},
      {"--delay", "uniform:1ms..1e10s"},
      {"--delay", "mix:0.5*const:1ms+0.5*const:1e10s"},
      {"--delay", "exp:mean=1ms;w0@1e10s=x2"},
  };
  for (const auto& flags : cases) {
    std::vector<std::string> args{"train", "--iterations", "10"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("'1e10s' is longer than 1e+09s (about 31 years), the longest "
                                  "the run's clocks hold; write a shorter time"));
  }
}

TEST_CASE("stalesgd train opens a trace file exactly once", "[config]") {
  if (!program_available("strace")) {
    FAIL(
        "strace is not installed: tools/setup.sh installs it (the test group); run "
        "tools/setup.sh test, or apt-get install strace");
  }
  TempDir dir;
  // A distinctive name, so that no other path in the strace log matches it.
  const auto trace = dir / "one-parse-trace.csv";
  std::ofstream(trace) << "# two workers' recorded delays\nw0[ms],w1[us]\n1,500\n2,1500\n0.5,800\n";
  const auto log = dir / "strace.log";
  // LeakSanitizer cannot run under ptrace: an AddressSanitizer build checks leaks elsewhere.
  const auto r = run_process({"env",
                              "ASAN_OPTIONS=detect_leaks=0",
                              "strace",
                              "-f",
                              "-e",
                              "trace=openat,open",
                              "-o",
                              log.string(),
                              STALESGD_CLI,
                              "train",
                              "--dataset",
                              "mnist",
                              "--data-dir",
                              repo_data_dir().string(),
                              "--model",
                              "softmax",
                              "--rule",
                              "async",
                              "--workers",
                              "2",
                              "--delay",
                              "trace:" + trace.string(),
                              "--iterations",
                              "20",
                              "--no-progress",
                              "--out",
                              (dir / "out").string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(log);
  REQUIRE(in.good());
  std::string line, opens;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.find("one-parse-trace.csv") == std::string::npos) continue;
    ++n;
    opens += line + '\n';
  }
  INFO("the opens of the trace file:\n" << opens);
  CHECK(n == 1);
}

TEST_CASE("resolve: --fail is parsed once and checked against the engine", "[config][failures]") {
  auto o = options("k-sync", 8, 6);
  o.fail = "w3:crash@2s;w5:hang@4s";
  auto r = ResolvedRun::resolve(o);
  REQUIRE(r.ok());
  REQUIRE(r->failures().failures.size() == 2);
  CHECK(r->failures().of(5)->kind == FailureKind::kHang);
  CHECK(r->options().fail == "w3:crash@2s;w5:hang@4s");

  o.fail = "w9:crash@1s";
  CHECK_THAT(error_of(o), Contains("--fail 'w9:crash@1s': there is no worker 9"));
  auto seq = options("sync", 1);
  seq.sequential = true;
  seq.fail = "w0:crash@1s";
  CHECK_THAT(error_of(seq), Contains("--sequential has none"));
  // Whole ranks fail only on the MPI engine, and only worker ranks that exist: P = 4 on two
  // threads per rank is ranks 1 and 2.
  o.fail = "rank1:crash@1s";
  CHECK_THAT(error_of(o), Contains("a whole rank fails only with --engine mpi"));
  auto mpi = options("async", 4);
  mpi.engine = EngineKind::kMpi;
  mpi.workers_per_rank = 2;
  mpi.fail = "w0:crash@1s;rank2:hang@3s";
  auto m = ResolvedRun::resolve(mpi);
  REQUIRE(m.ok());
  CHECK(m->failures().of(0)->kind == FailureKind::kCrash);
  REQUIRE(m->failures().of_rank(2) != nullptr);
  CHECK(m->failures().of_rank(2)->kind == FailureKind::kHang);
  CHECK(m->failures().of_rank(1) == nullptr);
  CHECK(m->options().fail == "w0:crash@1s;rank2:hang@3s");
  mpi.fail = "rank3:crash@1s";
  CHECK_THAT(error_of(mpi), Contains("there is no rank 3: the worker ranks are rank1 to rank2"));
  mpi.fail = "rank0:crash@1s";
  CHECK_THAT(error_of(mpi), Contains("rank 0 is the server"));
}

TEST_CASE("resolve: the worker and stall timeouts in effect are written back",
          "[config][failures]") {
  // No delay: the floors, 10 s and 60 s.
  auto none = ResolvedRun::resolve(options("async", 2));
  REQUIRE(none.ok());
  CHECK(none->options().worker_timeout_s == 10.0);
  CHECK(none->options().stall_timeout_s == 60.0);
  // 20 x the largest 0.999 quantile over workers: w1's const 1 s.
  auto slow = options("async", 2);
  slow.delay = "exp:mean=10ms;w1=const:1s";
  auto r = ResolvedRun::resolve(slow);
  REQUIRE(r.ok());
  CHECK(r->options().worker_timeout_s == Approx(20.0));
  CHECK(r->options().stall_timeout_s == Approx(60.0));
  slow.delay = "exp:mean=1s";  // quantile 0.999 = -ln(0.001) s = 6.91 s
  r = ResolvedRun::resolve(slow);
  REQUIRE(r.ok());
  CHECK(r->options().worker_timeout_s == Approx(20.0 * 6.907755).epsilon(1e-5));
  CHECK(r->options().stall_timeout_s == Approx(2.0 * 20.0 * 6.907755).epsilon(1e-5));
  // Given values stay; a resolved run resolves to itself.
  auto given = options("sync", 2);
  given.worker_timeout_s = 2.0;
  given.stall_timeout_s = 3.0;
  r = ResolvedRun::resolve(given);
  REQUIRE(r.ok());
  CHECK(r->options().worker_timeout_s == 2.0);
  CHECK(r->options().stall_timeout_s == 3.0);
  // The virtual clock adds its compute time, and has no --stall-timeout (its own watchdog).
  auto virt = options("async", 2);
  virt.clock = ClockKind::kVirtual;
  virt.compute_time_s = 1.0;
  r = ResolvedRun::resolve(virt);
  REQUIRE(r.ok());
  CHECK(r->options().worker_timeout_s == Approx(20.0));
  CHECK(r->options().stall_timeout_s == 0.0);
  CHECK(ResolvedRun::resolve(r->options()).ok());
  virt.stall_timeout_s = 5.0;
  CHECK_THAT(error_of(virt), Contains("--stall-timeout watches the real clock"));
}

TEST_CASE("resolve: --local-steps needs --local-lr, and --local-lr needs --local-steps",
          "[config]") {
  auto o = options("fedbuff", 4, 2);
  o.local_steps = 3;
  CHECK_THAT(error_of(o), Contains("--local-steps 3 needs --local-lr"));
  o.local_lr = 0.05;
  CHECK(ResolvedRun::resolve(o).ok());
  o.local_steps = 1;
  CHECK_THAT(error_of(o), Contains("--local-lr is the step size of --local-steps Q > 1"));
  o.local_steps = 5000;
  o.batch = 32;
  CHECK_THAT(error_of(o), Contains("draws more than 65536 samples a job"));
}

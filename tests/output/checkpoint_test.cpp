// Checkpoint and resume: a virtual-clock run killed with kill -9 at any moment and resumed
// writes the uninterrupted run's outputs byte for byte; a real-clock run resumed has every
// iteration once; a damaged checkpoint or a conflicting flag gets one line.
#include <sys/stat.h>

#include <cmath>

#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "output/checkpoint.hpp"
#include "support/sanitized.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Starts `command` in the background, waits for DIR/checkpoint.bin, waits `after` more
// seconds, then sends `signal`; returns what the shell printed ("finished" if the run ended
// first).
std::string cut(const std::string& command, const fs::path& dir, const std::string& after,
                const std::string& signal) {
  const auto r =
      run_shell(command + " >/dev/null 2>&1 & pid=$!; for i in $(seq 1200); do [ -e " +
                (dir / kCheckpointFile).string() + " ] && break; sleep 0.02; done; sleep " + after +
                "; kill -0 $pid 2>/dev/null || echo finished; kill -" + signal +
                " $pid; wait $pid; echo exit=$?");
  return r.output;
}

// updates.csv's wall_s column, in file order.
std::vector<double> update_times(const fs::path& updates_csv) {
  std::ifstream in(updates_csv);
  std::string line;
  std::getline(in, line);
  std::vector<double> times;
  while (std::getline(in, line)) {
    const auto a = line.find(',');
    times.push_back(std::stod(line.substr(a + 1, line.find(',', a + 1) - a - 1)));
  }
  return times;
}

std::vector<std::uint64_t> iterations(const fs::path& updates_csv) {
  std::ifstream in(updates_csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::uint64_t> its;
  while (std::getline(in, line)) its.push_back(std::stoull(line.substr(0, line.find(','))));
  return its;
}

}  // namespace

TEST_CASE("resume: a virtual-clock run killed with kill -9 and resumed writes identical outputs",
          "[output][resume]") {
  // The sync rules cut work, the async ones keep older versions pinned, dutta reads w_tau, and
  // AdaSync changes K: each is state a checkpoint must carry (and --l2, evals' objective), as is
  // a modelled machine's.
  std::vector<std::string> configs{
      "--rule k-sync --k 2 --workers 4 --delay exp:mean=10ms --l2 1e-3",
      "--rule k-async --k 2 --workers 4 --delay pareto:shape=2,scale=5ms --lr-rule dutta:c=0.01",
      "--rule k-batch-async --k 3 --workers 6 --delay 'exp:mean=5ms;w0=x4' --compute-time 1ms",
      "--rule k-sync --k 1 --workers 4 --delay exp:mean=10ms --adasync-every 2s",
      "--rule ssp --staleness-bound 1 --workers 4 --delay 'exp:mean=1ms;w0=x8'",
      // Rennala's S > P, Malenia's per-worker sums and counts on per-worker shards, and
      // MindFlayer's attempts in flight and spent.
      "--rule rennala --k 5 --workers 3 --delay 'exp:mean=4ms;w0=x4'",
      "--rule malenia --k 6 --workers 3 --partition dirichlet:0.5 --delay 'exp:mean=4ms;w0=x4'",
      "--rule mindflayer --k 3 --workers 3 --time-limit '6ms;w0=2ms' --delay exp:mean=4ms",
      // A rule from outside the tree (examples/custom_rule, a plug-in): its own options and the
      // state it checkpoints through RuleState (each worker's drops in a row, which --patience
      // reads).
      "--plugin " STALESGD_TEST_PLUGIN_DIR
      "/libcapped_k_async.so --rule capped-k-async --k 2 "
      "--cap 1 --patience 2 --workers 6 --delay 'exp:mean=4ms;w0=x6'",
      // A modelled machine (docs/machine.md): the cores' jobs, the server's queue and the
      // links' messages in flight are state too.
      "--rule k-sync --k 2 --workers 6 --delay exp:mean=2ms --cores 2 --server-time "
      "'gradient=20us,update=10us' --link 'latency=100us,bandwidth=10Gbit' --compute-time 1ms"};
  // The virtual clock runs the rules on one thread: what varies between these is rule state,
  // which the plain and ASan suites check; under ThreadSanitizer two of them check the threads
  // around the engine (journal, evaluator, signals) at a third of the cost in CI.
  if (kThreadSanitized) configs.resize(2);
  const std::string config = GENERATE_COPY(from_range(configs));
  // Under the sanitizers one kill time of the two (the plain suite runs both): 6 runs of 3.
  const std::string after = GENERATE(from_range(kSanitized ? std::vector<std::string>{"0.3"}
                                                           : std::vector<std::string>{"0", "0.3"}));
  INFO(config << " / kill -9 " << after << " s after the first checkpoint");
  TempDir b;
  // mlp has more state to carry; softmax and 6 s keep the sanitizer builds' 15 runs in
  // minutes (the kill still lands mid-run: compute is 10-40x slower there).
  const std::string model = kSanitized ? "softmax --time 6s" : "mlp --time 12s";
  const std::string run = kCli + " train --model " + model + " --clock virtual --eval-every 2s " +
                          "--checkpoint-every 1s --no-progress " + config + " --out ";
  // The uninterrupted run, once per configuration: both kill times compare against it.
  static std::map<std::string, std::unique_ptr<TempDir>> uninterrupted;
  auto& baseline = uninterrupted[config];
  if (!baseline) {
    baseline = std::make_unique<TempDir>();
    REQUIRE(run_shell(run + baseline->path().string()).exit_code == 0);
  }
  const TempDir& a = *baseline;
  const std::string killed = cut(run + b.path().string(), b.path(), after, "KILL");
  INFO(killed);
  REQUIRE(killed.find("finished") == std::string::npos);  // else nothing was cut
  REQUIRE(summary_status(b.path()) == "running");         // written at the start, never ended
  const auto resumed = run_shell(kCli + " train --no-progress --resume " + b.path().string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  for (const char* f :
       {"updates.csv", "gradients.csv", "evals.csv", "workers.csv", "summary.json"}) {
    INFO(f);
    CHECK(output_bytes(a / f) == output_bytes(b / f));
  }
}

TEST_CASE("resume: a real-clock run cut by kill -9 or SIGINT and resumed has each iteration once",
          "[output][resume]") {
  const std::vector<std::string> engines{
      "--rule k-sync --k 2 --workers 4 --delay exp:mean=2ms",
      "--rule async --workers 4 --server thread --delay exp:mean=2ms",
      "--rule async --workers 4 --server hogwild --delay exp:mean=2ms",
      "--rule ssp --staleness-bound 0 --workers 4 --delay 'exp:mean=2ms;w0=x4'", "--sequential"};
  const std::size_t e = GENERATE(range(std::size_t{0}, std::size_t{5}));
  const std::string& engine = engines.at(e);
  // Each engine under both signals; under ThreadSanitizer each under one of them, the two
  // taking turns (the path after the signal is the same code; the plain and ASan suites run
  // all ten), at half the cost in CI.
  const std::string signal = GENERATE_COPY(filter(
      [e](const std::string& s) { return !kThreadSanitized || (s == "KILL") == (e % 2 == 0); },
      values<std::string>({"KILL", "INT"})));
  // A random moment after the first checkpoint, 0 to 1.2 s: at a checkpoint, between two, or
  // in the middle of writing one.
  std::random_device rd;
  const std::string after = std::to_string(std::uniform_real_distribution<double>(0.0, 1.2)(rd));
  INFO(engine << " / " << signal << " " << after << " s after the first checkpoint");
  TempDir dir;
  const std::string killed = cut(kCli +
                                     " train --model softmax --time 3s --checkpoint-every 0.5s "
                                     "--no-progress " +
                                     engine + " --out " + dir.path().string(),
                                 dir.path(), after, signal);
  INFO(killed);
  REQUIRE(killed.find("finished") == std::string::npos);
  CHECK(killed.find(signal == "INT" ? "exit=130" : "exit=137") != std::string::npos);
  const auto resumed = run_shell(kCli + " train --no-progress --resume " + dir.path().string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const auto its = iterations(dir / "updates.csv");
  REQUIRE(its.size() > 10);
  for (std::size_t i = 0; i < its.size(); ++i) REQUIRE(its[i] == i + 1);
  // Time never steps back, across the resume point too (a checkpoint's records end at or
  // before its clock). Hogwild! times an update when its write ends, which may come out of
  // number order (docs/outputs.md), so its times are not checked.
  if (engine.find("hogwild") == std::string::npos) {
    const auto times = update_times(dir / "updates.csv");
    for (std::size_t i = 1; i < times.size(); ++i) {
      INFO("update " << i + 1);
      REQUIRE(times[i] >= times[i - 1]);
    }
  }
  std::ifstream in(dir / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["stop_reason"] == "time");
  CHECK(j["status"] == "complete");
  CHECK(j["iterations"] == its.size());
  CHECK(j["gradients"]["applied"].get<std::size_t>() == iterations(dir / "gradients.csv").size());
}

TEST_CASE("resume: a conflicting flag, a finished run and a damaged checkpoint get one line",
          "[output][resume]") {
  TempDir dir;
  const std::string run = kCli +
                          " train --model softmax --clock virtual --rule async --workers 2 "
                          "--delay exp:mean=10ms --checkpoint-every 1s --no-progress --time " +
                          // Long enough that the kill lands early (it comes within 20 ms of
                          // the first checkpoint, at 1 s); shorter where compute is slow, for
                          // the resume that runs it to its end.
                          (kSanitized ? "5s" : "60s") + " --out " + dir.path().string();
  const std::string killed = cut(run, dir.path(), "0", "KILL");
  REQUIRE(killed.find("finished") == std::string::npos);
  const std::string resume = kCli + " train --no-progress --resume " + dir.path().string();

  // A flag beside --resume that disagrees with the run, --out elsewhere and --force are usage
  // errors (exit 2).
  auto r = run_shell(resume + " --time 90s");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains(std::string("--time conflicts with the run's --time ") +
                                (kSanitized ? "5s" : "60s")));
  r = run_shell(resume + " --out /tmp/elsewhere");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("a resumed run writes into its own folder"));
  r = run_shell(resume + " --force");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("--force and --resume exclude each other"));

  const std::string good = slurp(dir / kCheckpointFile);
  const auto damaged = [&](std::string bytes, const std::string& expected) {
    std::ofstream(dir / kCheckpointFile, std::ios::binary | std::ios::trunc) << bytes;
    const auto out = run_shell(resume);
    INFO(out.output);
    CHECK(out.exit_code == 1);
    CHECK(line_count(out.output) == 1);
    CHECK_THAT(out.output, Contains(expected));
  };
  damaged(good.substr(0, good.size() / 2), "is truncated or padded");
  damaged(good + "x", "is truncated or padded");
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x20;
  damaged(flipped, "is corrupt (its checksum does not match)");
  damaged("#!/bin/sh\n" + good, "is not a stalesgd checkpoint");
  std::string other_format = good;
  other_format[std::string_view("stalesgd checkpoint\n").size()] = 10;
  damaged(other_format, "has checkpoint format 10");
  fs::remove(dir / kCheckpointFile);
  r = run_shell(resume);
  CHECK_THAT(r.output, Contains("only a run started with --checkpoint-every can be resumed"));

  // Not a regular file: a FIFO (whose read would block) and a symlink loop, each one line.
  REQUIRE(::mkfifo((dir / kCheckpointFile).c_str(), 0644) == 0);
  r = run_shell(resume);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains(kCheckpointFile) && Contains("is not a regular file"));
  fs::remove(dir / kCheckpointFile);
  fs::create_symlink(kCheckpointFile, dir / kCheckpointFile);
  r = run_shell(resume);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("cannot read") && Contains("Too many levels of symbolic links"));
  fs::remove(dir / kCheckpointFile);

  std::ofstream(dir / kCheckpointFile, std::ios::binary | std::ios::trunc) << good;
  REQUIRE(run_shell(resume).exit_code == 0);
  r = run_shell(resume);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("holds a finished run"));
}

TEST_CASE("checkpoint: the header's records round-trip field for field", "[output]") {
  CheckpointHeader h;
  h.args = {"--model", "softmax", "--l2", "0.1"};
  h.engine = "virtual";
  h.t = 1.5;
  h.rows.updates = {{1, 0.25, 2, 0.5, 1, 0.02, 2.3}};
  h.rows.gradients = {{1, 3, 0, 0, 0.0125}};
  // The first without a holdout (val NaN), the second with one.
  h.rows.evals = {{0.0, 0, 2.3, 2.31, 0.9, 3.01}, {1.25, 1, 1.7, 1.72, 0.4, 2.125, 1.75, 0.375}};
  h.offsets = {1, 60, 1, 40, 2, 90};
  h.snapshots = 2;
  StateWriter out;
  save_header(out, h);
  StateReader in(out.bytes());
  const auto back = load_header(in);
  REQUIRE(in.ok());
  CHECK(back.args == h.args);
  CHECK(back.t == h.t);
  REQUIRE(back.rows.evals.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto &a = back.rows.evals[i], &b = h.rows.evals[i];
    CHECK(a.wall_s == b.wall_s);
    CHECK(a.iteration == b.iteration);
    CHECK(a.train_loss == b.train_loss);
    CHECK(a.test_loss == b.test_loss);
    CHECK(a.test_error == b.test_error);
    CHECK(a.train_objective == b.train_objective);
    CHECK((a.val_loss == b.val_loss || (std::isnan(a.val_loss) && std::isnan(b.val_loss))));
    CHECK((a.val_error == b.val_error || (std::isnan(a.val_error) && std::isnan(b.val_error))));
  }
  CHECK(back.rows.evals[1].val_error == 0.375);
  CHECK(back.rows.gradients.at(0).duration_s == 0.0125);
}

TEST_CASE("checkpoint: every cut of a real payload is refused without a crash", "[output]") {
  // A payload from a real run, cut at every length: the reader must stop with an error (the
  // fuzz harness does the same with arbitrary bytes).
  TempDir dir;
  REQUIRE(run_shell(kCli +
                    " train --model softmax --l2 0.1 --clock virtual --rule k-sync --k 1 "
                    "--workers 2 --delay exp:mean=10ms --time 1s --checkpoint-every 0.5s "
                    "--no-progress --out " +
                    dir.path().string())
              .exit_code == 0);
  auto payload = read_checkpoint(dir.path());
  REQUIRE(payload.ok());
  {
    StateReader whole(*payload);
    const auto h = load_header(whole);
    REQUIRE(whole.ok());
    CHECK(h.engine == "virtual");
    CHECK(h.rows.updates.size() == h.offsets.update_rows);
    REQUIRE_FALSE(h.rows.gradients.empty());
    CHECK(h.rows.gradients.back().duration_s > 0.0);  // the rows keep their durations
    REQUIRE_FALSE(h.rows.evals.empty());
    // and the evaluations their L2 objective (--l2 0.1: above the cross-entropy)
    CHECK(h.rows.evals.back().train_objective > h.rows.evals.back().train_loss);
  }
  for (std::size_t n = 0; n < 4096 && n < payload->size(); n += 7) {
    StateReader in(std::string_view(*payload).substr(0, n));
    (void)load_header(in);
    CHECK_FALSE(in.ok());
  }
}

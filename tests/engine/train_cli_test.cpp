// `stalesgd train` end to end: bad input gives one line and a non-zero exit before any
// thread starts; a run writes its files; Ctrl-C, SIGTERM, SIGHUP or SIGUSR1/2 stops it, keeps what
// it recorded, exits 128 + the signal.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
CliResult train_cli(std::vector<std::string> extra) {
  std::vector<std::string> args{"train", "--no-progress"};
  // A flag may be given once: these defaults only where the test gives none of its own.
  for (const auto& [flag, value] :
       {std::pair{"--model", "softmax"}, std::pair{"--iterations", "10"}}) {
    if (std::find(extra.begin(), extra.end(), flag) == extra.end())
      args.insert(args.end(), {flag, value});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}
}  // namespace

TEST_CASE("train CLI: bad rule, K and delay specs get one line and exit non-zero", "[cli][train]") {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--rule", "k-sync", "--workers", "4", "--k", "5"}, "--k 5 is out of range for --workers 4"},
      {{"--rule", "k-sync", "--workers", "4", "--k", "0"}, "1 <= K <= P"},
      {{"--rule", "k-async", "--workers", "4"}, "needs --k"},
      {{"--rule", "hogwild", "--workers", "4"}, "unknown rule 'hogwild'"},
      {{"--rule", "async", "--workers", "2", "--delay", "gamma:mean=1ms"}, "gamma"},
      {{"--rule", "async", "--workers", "2", "--delay", "exp:shift=1ms"}, "mean"},
      {{"--rule", "async", "--workers", "2", "--delay", "exp:mean=-5ms"}, "exp:mean"},
      {{"--rule", "async", "--workers", "2", "--delay", "exp:mean=10"}, "10ms"},
      {{"--rule", "async", "--workers", "2", "--delay", "const:10parsecs"}, "unit"},
      {{"--rule", "async", "--workers", "2", "--delay", "trace:" + (dir / "nope.csv").string()},
       "nope.csv"},
      {{"--rule", "async", "--workers", "2", "--delay", "exp:mean=1ms;w5=x3"}, "w5"},
      {{"--batch", "0"}, "--batch 0"},
      {{"--lr", "-1"}, "--lr -1"},
      {{"--model", "resnet"}, "resnet"},
      {{"--model", "mlp", "--hidden", "256,x"}, "--hidden"},
      {{"--model", "lenet", "--hidden", "12"}, "--hidden applies to --model mlp only"},
      {{"--time", "5"}, "--time '5'"},
      {{"--delay-mode", "sleep"}, "--delay-mode 'sleep'"},
      {{"--clock", "fast"}, "--clock 'fast'"},
      {{"--sequential", "--workers", "2"}, "--sequential"},
      {{"--dataset", "svhn"}, "unknown data set 'svhn'"},
      {{"--wrkers", "3"}, "wrkers"},
      {{"--out", ""}, "--out '' names no folder"},
  };
  for (const auto& [args, expected] : cases) {
    auto r = train_cli(args);
    INFO(args.back() << " -> " << r.output);
    CHECK(r.exit_code != 0);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error:") && Contains(expected));
  }
}

TEST_CASE("train CLI: no budget is an error naming the flags", "[cli][train]") {
  auto r = run_cli({"train", "--model", "softmax"});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("--iterations") && Contains("--time"));
}

TEST_CASE("train CLI: a k-async run writes every output file", "[cli][train]") {
  TempDir dir;
  auto r = train_cli({"--rule", "k-async", "--workers", "4", "--k", "2", "--delay", "exp:mean=2ms",
                      "--iterations", "40", "--out", dir.path().string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("s / iteration") && Contains("theory"));
  for (const char* f :
       {"updates.csv", "gradients.csv", "evals.csv", "workers.csv", "summary.json"}) {
    CHECK(std::filesystem::exists(dir / f));
  }
  std::ifstream in(dir / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["iterations"] == 40);
  CHECK(j["config"]["rule"] == "k-async");
  CHECK(j["theory"]["formula"] == "(H_P - H_{P-K}) / mu");
  CHECK(j["theory"]["seconds_per_iteration"].get<double>() == Approx((1.0 / 4 + 1.0 / 3) * 0.002));
  CHECK(j["gradients"]["applied"] == 80);
  std::ifstream updates(dir / "updates.csv");
  std::string header;
  std::getline(updates, header);
  CHECK(header ==
        "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss,drift_sq,grad_sq");
}

TEST_CASE(
    "train CLI: SIGINT, SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2 stops the run and keeps its records "
    "with exit 128 + signal",
    "[cli][train]") {
  // SIGHUP (a closed terminal or ssh session) and SIGUSR1/2 (a batch system's warning before
  // its time limit) ended the process at once, as kill -9 does, summary.json left "running".
  const int signal = GENERATE(SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2);
  INFO("signal " << signal);
  TempDir dir;
  std::vector<std::string> args{STALESGD_CLI,    "train",        "--model",          "softmax",
                                "--rule",        "async",        "--workers",        "4",
                                "--delay",       "exp:mean=5ms", "--time",           "600s",
                                "--no-progress", "--out",        dir.path().string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  // Wait until the worker threads exist (data loaded, training under way), then a little more.
  auto threads = [pid] {
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    return std::distance(std::filesystem::directory_iterator(tasks, ec), {});
  };
  for (int i = 0; i < 1200 && threads() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, signal);
  int status = 0;
  // A hang guard, not a timing assertion: the run would otherwise go on for 600 s.
  for (int i = 0; i < 600 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (waitpid(pid, &status, WNOHANG) == 0 && !WIFEXITED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL("stalesgd train did not stop within 30 s of the signal");
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + signal);
  std::ifstream in(dir / "summary.json");
  REQUIRE(in.good());
  const auto j = nlohmann::json::parse(in);
  CHECK(j["stop_reason"] == "interrupted");
  CHECK(j["status"] == "interrupted");
  CHECK(j["iterations"].get<int>() > 0);
  // Every file written, the journal to its last row: updates.csv holds every iteration.
  const std::string updates = slurp(dir / "updates.csv");
  CHECK(std::count(updates.begin(), updates.end(), '\n') == j["iterations"].get<int>() + 1);
  for (const char* f : {"gradients.csv", "evals.csv", "workers.csv", "run.toml"}) {
    CHECK_FALSE(slurp(dir / f).empty());
  }
  CHECK_THAT(slurp(dir / "run.log"), Contains("end: interrupted after "));
}

TEST_CASE("train CLI: under nohup a SIGHUP stays ignored and the run ends on its budget",
          "[cli][train]") {
  // The parent's SIG_IGN is kept for SIGHUP (and SIGUSR1/2): `nohup stalesgd train ...` must
  // outlive the terminal that started it.
  TempDir dir;
  const fs::path out = dir / "run";
  const auto r = run_shell(
      "nohup " + kCli +
      " train --model softmax --rule async --workers 2 --delay exp:mean=2ms --time 3s "
      "--no-progress --out " +
      out.string() + " >" + (dir / "log").string() + " 2>&1 & pid=$!; i=0; while [ ! -e " +
      (out / "summary.json").string() + " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; " +
      "kill -HUP $pid; wait $pid; echo exit=$?");
  INFO(r.output << slurp(dir / "log"));
  CHECK(r.output.find("exit=0") != std::string::npos);
  CHECK(read_summary(out)["status"] == "complete");
}

TEST_CASE("train CLI: a second signal ends the process at once with one line", "[cli][train]") {
  // After the first SIGINT the run evaluates its final snapshot, which for an mlp of two
  // 2048-wide layers on the whole test split and 10,000 training samples takes about a second
  // on every core (a LeNet's took 0.2 s once snapshot 0 no longer held a core at the end); the
  // second ends it there.
  TempDir dir;
  const auto r = run_shell(std::string(STALESGD_CLI) +
                           " train --model mlp --hidden 2048,2048 --rule async --workers 2 "
                           "--delay none --time 600s --eval-every 600s --no-progress --out " +
                           dir.path().string() +
                           // Once the 2 workers, an evaluator thread and main run: under way.
                           " >/dev/null & pid=$!; for i in $(seq 1200); do "
                           "[ $(ls /proc/$pid/task 2>/dev/null | wc -l) -ge 4 ] && break; "
                           "sleep 0.05; done; sleep 1; kill -INT $pid; sleep 0.3; "
                           "kill -INT $pid; wait $pid; echo exit=$?")
                     .output;
  INFO(r);
  CHECK(r.find("stalesgd: second signal: stopped without writing the outputs") !=
        std::string::npos);
  CHECK(r.find("exit=130") != std::string::npos);
  CHECK(summary_status(dir.path()) == "running");  // the start's, not replaced
}

TEST_CASE("train CLI: a diverging run stops with the iteration and the learning rate",
          "[cli][train]") {
  // 1e38: the loss overflows to inf or nan at once, or grows past the limit first; 1e20: it
  // stays finite (about 1e19 on softmax), and only the growth limit (1000 x ln 10) stops it.
  const std::string lr = GENERATE("1e38", "1e20");
  for (const auto& extra :
       std::vector<std::vector<std::string>>{{"--sequential"},
                                             {"--rule", "async", "--workers", "4"},
                                             {"--rule", "k-sync", "--workers", "4", "--k", "2",
                                              "--clock", "virtual", "--delay", "exp:mean=1ms"}}) {
    TempDir dir;
    std::vector<std::string> args{"--lr", lr, "--iterations", "200", "--out", dir.path().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = train_cli(args);
    INFO(lr << " " << extra.front() << ": " << r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output,
               Contains("training diverged at iteration") &&
                   Contains("learning rate " + std::string(lr == "1e38" ? "1e+38" : "1e+20") +
                            " is probably too large"));
    if (lr == "1e20") CHECK_THAT(r.output, Contains("over 1000 times a uniform guess's loss"));
    // What it recorded is kept, and not passed off as a finished run.
    std::ifstream in(dir / "summary.json");
    REQUIRE(in.good());
    const auto j = nlohmann::json::parse(in);
    CHECK(j["stop_reason"] == "diverged");
    CHECK(j["status"] == "incomplete");
    CHECK_THAT(j["error"].get<std::string>(), Contains("training diverged"));
  }
}

TEST_CASE(
    "train CLI: a rule left without enough workers writes its outputs then exits 1 with one line",
    "[cli][train][failures]") {
  TempDir dir;
  auto r = train_cli({"--rule", "k-sync", "--workers", "4", "--k", "4", "--delay", "exp:mean=10ms",
                      "--clock", "virtual", "--time", "1s", "--iterations", "0", "--fail",
                      "w1:crash@200ms", "--out", dir.path().string()});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("iterations") && Contains("(workers-failed)") &&
                           Contains("failed workers    w1 crash at 0.200 s"));
  CHECK_THAT(r.output,
             Catch::EndsWith("\nstalesgd: error: worker 1 failed (w1 crashed at 0.200 s); k-sync "
                             "needs K = 4 live workers and 3 of 4 are left: lower --k to 3 or "
                             "less to run on without them\n"));
  std::ifstream in(dir / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["stop_reason"] == "workers-failed");
  CHECK_THAT(j["stop_message"].get<std::string>(), Contains("worker 1 failed"));
  REQUIRE(j["failures"].size() == 1);
  CHECK(j["failures"][0]["how"] == "crash");
  std::ifstream workers(dir / "workers.csv");
  std::string header, row;
  std::getline(workers, header);
  CHECK_THAT(header, Catch::EndsWith(",failed,failed_at_s,failure"));
  std::getline(workers, row);
  std::getline(workers, row);
  CHECK_THAT(row, Catch::StartsWith("1,") && Catch::EndsWith(",1,0.200000,crash"));
}

TEST_CASE("train CLI: a run that goes on without a failed worker says so and exits 0",
          "[cli][train][failures]") {
  auto r = train_cli({"--rule", "sync", "--workers", "3", "--delay", "const:10ms", "--clock",
                      "virtual", "--time", "2s", "--iterations", "0", "--fail", "w2:hang@505ms",
                      "--worker-timeout", "300ms"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("(time)") && Contains("failed workers    w2 hang at 0.810 s"));
}

TEST_CASE("train CLI: bad --fail and timeouts are one line and exit 2", "[cli][train][failures]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--workers", "2", "--fail", "w2:crash@1s"}, "--fail 'w2:crash@1s': there is no worker 2"},
      {{"--workers", "2", "--fail", "w1:explode@1s"}, "unknown failure 'explode'"},
      {{"--workers", "2", "--fail", "w1:crash@1"}, "has no unit"},
      {{"--worker-timeout", "5"}, "--worker-timeout '5'"},
      {{"--clock", "virtual", "--stall-timeout", "5s"}, "--stall-timeout watches the real clock"},
  };
  for (const auto& [args, expected] : cases) {
    auto r = train_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error:") && Contains(expected));
  }
}

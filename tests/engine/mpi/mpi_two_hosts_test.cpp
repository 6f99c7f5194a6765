// --engine mpi across two hosts: two network namespaces joined by a veth pair that the test
// makes itself (tools/two_hosts.sh), ranks started in both by Open MPI's rsh launcher entering
// the other namespace with its own hostname, TCP between the hosts. The rules keep their
// semantics across the hosts, each rank's host and clock are recorded (both namespaces read one
// CLOCK_MONOTONIC, so every estimated offset must lie within its error bound of 0), and the
// faults of the field end as docs/distributed.md ("Faults") says: a 3 s link outage is ridden
// out and recorded, a longer one ends the run as stalled, a stopped rank is retired, a killed
// one is named and the run resumes, an unreachable host is one line. Where namespaces cannot
// be made (not root), every case fails with the tool's one line.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/mpi/mpi_test_util.hpp"
#include "support/fixtures.hpp"
#include "support/summary.hpp"

using namespace stalesgd::test;
namespace fs = std::filesystem;

namespace {

const std::string kTool = STALESGD_SOURCE_DIR "/tools/two_hosts.sh";

// Two hosts, NAME-a and NAME-b, for the life of the test process.
class TwoHosts {
 public:
  TwoHosts() : name_("t" + std::to_string(getpid() % 100000000)) {
    require_mpi();
    const auto up = run_shell(kTool + " up " + name_);
    if (up.exit_code != 0) FAIL("two hosts cannot be made here: " << up.output);
  }
  ~TwoHosts() { run_shell(kTool + " down " + name_); }
  TwoHosts(const TwoHosts&) = delete;
  TwoHosts& operator=(const TwoHosts&) = delete;

  const std::string& name() const { return name_; }
  std::string host(char side) const { return name_ + "-" + side; }

  // `stalesgd train --engine mpi` into `out`, rank 0 and on_a - 1 more ranks on host a, on_b on
  // host b; `during` runs in the shell while the job runs ($job its pid, $out its folder;
  // `underway` waits until rank 0 trains, `pid_of_rank R` prints a rank's pid). The output ends
  // with "exit=N" and "ended=SECONDS" (since the epoch).
  CliResult train(const fs::path& out, int on_a, int on_b, const std::string& args,
                  const std::string& during = "true") const {
    const std::string o = out.string();
    const std::string hosts = host('a') + ":" + std::to_string(on_a) +
                              (on_b > 0 ? "," + host('b') + ":" + std::to_string(on_b) : "");
    return run_mpi_shell(
        "out=" + o +
        "; underway() { for i in $(seq 1200); do for p in $(pgrep -x stalesgd); do "
        "grep -q -- \"$out\" /proc/$p/cmdline 2>/dev/null && grep -qx mpi-server-recv "
        "/proc/$p/task/*/comm 2>/dev/null && return; done; sleep 0.05; done; }; "
        "pid_of_rank() { for p in $(pgrep -x stalesgd); do grep -q -- \"$out\" /proc/$p/cmdline "
        "2>/dev/null && tr '\\0' '\\n' </proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK=$1 && "
        "echo $p; done; }; " +
        kTool + " mpirun " + name_ + " --host " + hosts + " -np " + std::to_string(on_a + on_b) +
        " -x TSAN_OPTIONS -x LSAN_OPTIONS -x ASAN_OPTIONS " STALESGD_CLI
        " train --engine mpi --model softmax --batch 16 --data-dir " +
        repo_data_dir().string() + " --eval-every 1000s --eval-samples 1000 --no-progress " + args +
        " --out " + o + " > " + o +
        ".log 2>&1 & job=$!; ( sleep 150; kill -KILL $job ) "
        ">/dev/null 2>&1 & dog=$!; " +
        during + "; wait $job; echo exit=$?; echo ended=$(date +%s.%N); cat " + o +
        ".log; pkill -P $dog sleep; kill $dog 2>/dev/null; " + kTool + " link " + name_ + " up");
  }

 private:
  std::string name_;
};

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int exit_of(const CliResult& r) {
  const auto at = r.output.find("exit=");
  REQUIRE(at != std::string::npos);
  return std::stoi(r.output.substr(at + 5));
}

// A number the job's shell printed as "key=value".
double printed(const CliResult& r, const std::string& key) {
  const auto at = r.output.find(key + "=");
  REQUIRE(at != std::string::npos);
  return std::stod(r.output.substr(at + key.size() + 1));
}

double modified_s(const fs::path& file) {
  const auto t = fs::last_write_time(file);
  const auto system = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration<double>(system.time_since_epoch()).count();
}

}  // namespace

TEST_CASE("mpi, two hosts: six rules keep their semantics, every clock within its bound",
          "[engine][mpi][two-hosts]") {
  TwoHosts hosts;
  const TempDir dir;
  struct Case {
    std::string rule;
    int k;
    int iterations;
  };
  // 2 ranks on host a (rank 0, the server, and rank 1), 2 on host b; 2 workers per rank: P = 6.
  const int p = 6;
  for (const auto& c : std::vector<Case>{{"sync", 6, 25},
                                         {"k-sync", 2, 60},
                                         {"k-batch-sync", 4, 30},
                                         {"async", 1, 150},
                                         {"k-async", 3, 80},
                                         {"k-batch-async", 4, 40}}) {
    INFO("rule " << c.rule);
    const fs::path out = dir / c.rule;
    const auto r =
        hosts.train(out, 2, 2,
                    "--workers-per-rank 2 --rule " + c.rule +
                        (c.rule.starts_with("k-") ? " --k " + std::to_string(c.k) : "") +
                        " --delay exp:mean=2ms --iterations " + std::to_string(c.iterations));
    INFO(r.output);
    REQUIRE(exit_of(r) == 0);
    const Run run = read_run(out);
    REQUIRE(run.updates.size() == static_cast<std::size_t>(c.iterations));
    REQUIRE(run.workers.size() == static_cast<std::size_t>(p));
    long stale = 0;
    bool repeated = false;
    for (const auto& [it, gs] : run.by_update) {
      CHECK(gs.size() == static_cast<std::size_t>(c.k));
      repeated = repeated || !distinct_workers(gs);
      for (const auto& g : gs) stale += g.staleness > 0;
    }
    const bool synchronous = c.rule == "sync" || c.rule == "k-sync" || c.rule == "k-batch-sync";
    if (synchronous) CHECK(stale == 0);
    // Distinct workers per update where the rule says so; any for the batch rules.
    if (c.rule != "k-batch-sync" && c.rule != "k-batch-async") CHECK_FALSE(repeated);
    // k-sync cuts exactly P - K minibatches per update, wherever their workers are; the
    // asynchronous rules cut none, and gradients computed on an older version do occur.
    if (c.rule == "sync" || c.rule == "k-sync") {
      CHECK(run.total("cancelled") == (p - c.k) * c.iterations);
    }
    if (!synchronous) {
      CHECK(run.total("cancelled") == 0);
      CHECK(stale > 0);
    }
    // Every rank's host, and its clock: exact on rank 0's host, estimated on the other, where
    // the true offset (one CLOCK_MONOTONIC) is 0.
    const auto summary = read_summary(out);
    const auto& ranks = summary["ranks"];
    REQUIRE(ranks.size() == 4);
    for (int rank = 0; rank < 4; ++rank) {
      const auto& rk = ranks[static_cast<std::size_t>(rank)];
      INFO("rank " << rank << ": " << rk.dump());
      CHECK(rk["rank"] == rank);
      CHECK(rk["host"] == hosts.host(rank < 2 ? 'a' : 'b'));
      CHECK(rk["answered"] == true);
      CHECK(rk["clock_estimated"] == (rank >= 2));
      const double offset = rk["clock_offset_s"].get<double>();
      const double error = rk["clock_error_s"].get<double>();
      CHECK(std::abs(offset) <= error);
      if (rank >= 2) CHECK(error > 0.0);
    }
    CHECK(ranks[2]["workers"] == nlohmann::json::array({2, 3}));
  }
}

TEST_CASE("mpi, two hosts: a 3 s link outage is ridden out and recorded",
          "[engine][mpi][two-hosts]") {
  TwoHosts hosts;
  const TempDir dir;
  const fs::path out = dir / "run";
  // Async: the workers of rank 1, on the server's host, meet K = 1 alone while the link is down.
  const auto r =
      hosts.train(out, 2, 2, "--workers-per-rank 2 --rule async --delay exp:mean=20ms --time 8s",
                  "underway; sleep 1.5; " + kTool + " link " + hosts.name() + " down; sleep 3; " +
                      kTool + " link " + hosts.name() + " up");
  INFO(r.output);
  REQUIRE(exit_of(r) == 0);
  const auto summary = read_summary(out);
  CHECK(summary["stop_reason"] == "time");
  CHECK(summary["status"] == "complete");
  // Both ranks of host b went silent about as long as the link was down, and answered again.
  for (int rank : {2, 3}) {
    const auto& rk = summary["ranks"][static_cast<std::size_t>(rank)];
    INFO(rk.dump());
    CHECK(rk["silences"].get<int>() >= 1);
    CHECK(rk["longest_silence_s"].get<double>() > 2.0);
    CHECK(rk["answered"] == true);
  }
  CHECK(summary["ranks"][1]["silences"] == 0);
  // run.log names the silence's span: within it, updates went on, from host a's workers alone.
  const std::string text = text_of(out / "run.log");
  std::smatch m;
  REQUIRE(std::regex_search(text, m,
                            std::regex(R"(rank 2 \(host [^)]*\) was silent for [0-9.]+ s \(from )"
                                       R"(([0-9.]+) s to ([0-9.]+) s\))")));
  const double from = std::stod(m[1]) + 0.5;  // the link went down before the silence opened
  const double to = std::stod(m[2]) - 0.5;
  INFO("silence from " << from << " to " << to);
  REQUIRE(to - from > 1.0);
  const Run run = read_run(out);
  double last = -1.0;
  double longest_gap = 0.0;
  long during = 0;
  for (const auto& u : run.updates) {
    const double t = std::stod(u.at("wall_s"));
    if (last >= 0.0) longest_gap = std::max(longest_gap, t - last);
    last = t;
    if (t < from || t > to) continue;
    ++during;
    for (const auto& g : run.by_update.at(num(u, "iteration"))) CHECK(g.worker < 2);
  }
  CHECK(during > 10);
  CHECK(longest_gap < 1.0);  // no freeze: host a's workers kept the server busy throughout
}

TEST_CASE("mpi, two hosts: a link down past --stall-timeout ends the run as stalled",
          "[engine][mpi][two-hosts]") {
  TwoHosts hosts;
  const TempDir dir;
  const fs::path out = dir / "run";
  const std::string& name = hosts.name();
  // Every worker is on host b; the link stays down until the job has ended.
  const auto r = hosts.train(
      out, 1, 2,
      "--workers-per-rank 2 --rule async --delay exp:mean=20ms "
      "--time 60s --stall-timeout 3s",
      "underway; sleep 1; echo down=$(date +%s.%N); " + kTool + " link " + name + " down");
  INFO(r.output);
  CHECK(exit_of(r) != 0);
  const auto summary = read_summary(out);
  CHECK(summary["stop_reason"] == "stalled");
  CHECK(summary["status"] == "incomplete");
  CHECK(summary["stop_message"].get<std::string>().find("on rank 1 (host " + hosts.host('b') +
                                                        ")") != std::string::npos);
  CHECK(summary["ranks"][1]["answered"] == false);
  CHECK(r.output.find("stalesgd: error: the run stalled") != std::string::npos);
  // summary.json within the timeout plus the end's 2 s wait for the ranks (and slack), the job
  // over once mpirun finds host b lost (tools/mpirun.sh: within 8 s of silence) and rank 0
  // has ended: nothing hangs.
  const double down = printed(r, "down");
  INFO("summary.json " << modified_s(out / "summary.json") - down << " s and the job's end "
                       << printed(r, "ended") - down << " s after the link went down");
  CHECK(modified_s(out / "summary.json") - down < 3.0 + 2.0 + 5.0);
  CHECK(printed(r, "ended") - down < 30.0);
}

TEST_CASE("mpi, two hosts: a stopped remote rank is retired and the run goes on",
          "[engine][mpi][two-hosts]") {
  TwoHosts hosts;
  const TempDir dir;
  const fs::path out = dir / "run";
  const auto r = hosts.train(out, 2, 2,
                             "--workers-per-rank 2 --rule async --delay exp:mean=20ms --time 6s "
                             "--worker-timeout 1s",
                             "underway; sleep 1; kill -STOP $(pid_of_rank 3)");
  INFO(r.output);
  CHECK(exit_of(r) == 0);  // a run that goes on without failed workers ends as usual
  const auto summary = read_summary(out);
  CHECK(summary["stop_reason"] == "time");
  CHECK(summary["status"] == "complete");
  const auto& failures = summary["failures"];
  REQUIRE(failures.size() == 2);
  for (const auto& f : failures) {
    CHECK(f["how"] == "hang");
    CHECK(f["worker"].get<int>() >= 4);  // rank 3's workers, w4 and w5
  }
  CHECK(summary["ranks"][3]["answered"] == false);
  CHECK(summary["ranks"][2]["answered"] == true);
  CHECK(text_of(out / "run.log")
            .find("no answer to the end of the run from rank 3 (host " + hosts.host('b')) !=
        std::string::npos);
}

TEST_CASE("mpi, two hosts: a killed remote rank is named, and --resume continues the run",
          "[engine][mpi][two-hosts]") {
  TwoHosts hosts;
  const TempDir dir;
  const fs::path out = dir / "run";
  const auto r = hosts.train(out, 2, 2,
                             "--workers-per-rank 2 --rule async --delay exp:mean=20ms --time 8s "
                             "--checkpoint-every 0.5s",
                             "underway; sleep 1.5; kill -KILL $(pid_of_rank 3)");
  INFO(r.output);
  CHECK(exit_of(r) != 0);
  const auto summary = read_summary(out);
  // mpirun ends the job when a rank dies; rank 0 writes everything first and names it.
  CHECK(summary["stop_reason"] == "interrupted");
  CHECK(summary["status"] == "interrupted");
  CHECK(summary["stop_message"].get<std::string>().find("rank 3 (host " + hosts.host('b')) !=
        std::string::npos);
  CHECK(summary["ranks"][3]["answered"] == false);
  REQUIRE(fs::exists(out / "checkpoint.bin"));

  const auto resumed = run_mpi_shell(
      kTool + " mpirun " + hosts.name() + " --host " + hosts.host('a') + ":2," + hosts.host('b') +
      ":2 -np 4 -x TSAN_OPTIONS -x LSAN_OPTIONS -x ASAN_OPTIONS " STALESGD_CLI
      " train --engine mpi --no-progress --data-dir " +
      repo_data_dir().string() + " --resume " + out.string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const auto done = read_summary(out);
  CHECK(done["stop_reason"] == "time");
  CHECK(done["status"] == "complete");
  const Run run = read_run(out);
  long expected = 1;
  for (const auto& u : run.updates) CHECK(num(u, "iteration") == expected++);
  CHECK(done["iterations"].get<long>() == expected - 1);
}

TEST_CASE("mpi, two hosts: a host that cannot be reached is one line within seconds",
          "[engine][mpi][two-hosts]") {
  TwoHosts hosts;
  const std::string& name = hosts.name();
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_mpi_shell(
      "timeout 60 " + kTool + " mpirun " + name + " --host " + hosts.host('a') + ":1," + name +
      "-c:2 -np 3 " STALESGD_CLI " train --engine mpi --iterations 10 --no-progress");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.output << "\n" << took << " s");
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // not timeout's
  CHECK(line_count(r.output) == 1);
  CHECK(r.output.find("ssh: connect to host " + name + "-c port 22") != std::string::npos);
}

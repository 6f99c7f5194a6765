// check_virtual_budget (src/config/virtual_budget.cpp): a virtual-clock run whose clock nothing
// advances, bounded only by --time, an --eval-every that asks for more evaluations than a
// virtual run scores, and a --compute-time over the maximum are usage errors before anything is
// read or written; the limits themselves are accepted.
#include "config/virtual_budget.hpp"

#include <catch2/catch.hpp>

#include <fstream>

#include "stalesgd/config/resolved_run.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

TrainerOptions virtual_run() {
  TrainerOptions o;
  o.model.name = "softmax";
  o.rule = {"async", 0};
  o.workers = 2;
  o.clock = ClockKind::kVirtual;
  o.progress = false;
  return o;
}

std::string error_of(const TrainerOptions& o) {
  const auto r = ResolvedRun::resolve(o);
  if (r.ok()) FAIL("resolve accepted what it should refuse");
  return r.error().message;
}

}  // namespace

TEST_CASE(
    "virtual budget, CLI: a clock nothing advances, too many evaluations and too long a compute "
    "time are one line each, exit 2, and write nothing",
    "[config][cli][virtual]") {
  TempDir dir;
  const fs::path out = dir / "run";
  const std::string train =
      kCli + " train --model softmax --clock virtual --no-progress --out " + out.string() + " ";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--time 2s",
       "--clock virtual --time 2s: nothing advances the virtual clock (every delay 0, no "
       "--compute-time, server time or link), so the run would never reach its --time; give each "
       "gradient a time (e.g. --compute-time 10ms), a --delay, or --iterations N"},
      {"--time 2s --delay const:0s --workers 4",
       "--clock virtual --time 2s: nothing advances the virtual clock"},
      {"--time 2s --delay exp:mean=10ms --eval-every 1ns",
       "--eval-every 1ns asks for 2e+09 evaluations in --time 2s, over the 100000 a virtual-clock "
       "run scores (each at once and in full); raise --eval-every to at least 20us"},
      {"--iterations 20 --compute-time 1e9s",
       "--compute-time 1e+09s is over 3600s, the most one gradient may take on the virtual "
       "clock"},
      {"--time 2s --compute-time 5s",
       "--compute-time 5s is not shorter than --time 2s: no gradient would arrive"},
      {"--iterations 20 --compute-time 1s --eval-every 1us",
       "--eval-every 1us asks for 1e+06 evaluations in one gradient's --compute-time 1s"},
  };
  for (const auto& [args, says] : cases) {
    INFO(args);
    const auto r = run_shell(train + args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error: " + says));
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE(
    "virtual budget: what moves the clock lets a --time run through, and the limits themselves "
    "are accepted",
    "[config][virtual]") {
  auto o = virtual_run();
  o.time_s = 2.0;
  CHECK_THAT(error_of(o), Contains("nothing advances the virtual clock"));
  // Any one of them moves it: a delay, a compute time, the server's time, a link.
  for (const auto& set : std::vector<std::function<void(TrainerOptions&)>>{
           [](TrainerOptions& x) { x.delay = "exp:mean=10ms"; },
           [](TrainerOptions& x) { x.delay = "const:1ms"; },
           [](TrainerOptions& x) { x.compute_time_s = 0.001; },
           [](TrainerOptions& x) { x.server_time = "100us"; },
           [](TrainerOptions& x) { x.link = "latency=1ms,bandwidth=1Gbit"; },
       }) {
    auto moved = o;
    set(moved);
    CHECK(ResolvedRun::resolve(moved).ok());
  }
  // An --iterations budget is reached by updates alone; the real clock moves by itself.
  auto counted = o;
  counted.iterations = 10;
  CHECK(ResolvedRun::resolve(counted).ok());
  auto real = o;
  real.clock = ClockKind::kReal;
  CHECK(ResolvedRun::resolve(real).ok());
  real.eval_every_s = 1e-9;  // the real clock skips what it cannot score (docs/outputs.md)
  CHECK(ResolvedRun::resolve(real).ok());

  // kMaxVirtualEvaluations snapshots are accepted, one interval fewer refused.
  o.delay = "exp:mean=10ms";
  o.time_s = 100.0;
  o.eval_every_s = 100.0 / kMaxVirtualEvaluations;
  CHECK(ResolvedRun::resolve(o).ok());
  o.eval_every_s = 100.0 / (kMaxVirtualEvaluations + 1);
  CHECK_THAT(error_of(o), Contains("raise --eval-every to at least 1ms"));

  // An hour of compute is accepted, a little more refused; so is one as long as --time.
  auto slow = virtual_run();
  slow.iterations = 10;
  slow.eval_every_s = 1000.0;
  slow.compute_time_s = kMaxComputeTimeSeconds;
  CHECK(ResolvedRun::resolve(slow).ok());
  slow.compute_time_s = kMaxComputeTimeSeconds * 1.001;
  CHECK_THAT(error_of(slow), Contains("the most one gradient may take on the virtual clock"));
  slow.compute_time_s = 10.0;
  slow.time_s = 10.0;
  CHECK_THAT(error_of(slow), Contains("is not shorter than --time"));
  slow.time_s = 10.5;
  CHECK(ResolvedRun::resolve(slow).ok());
}

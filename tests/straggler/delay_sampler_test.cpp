// DelaySampler: per-worker seeded streams, overrides, time changes and trace replay, checked
// draw by draw against reference samplers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/straggler_test_util.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {
std::vector<double> stream(const StragglerProfile& p, int worker, std::uint64_t seed, int n,
                           double now_s = 0) {
  DelaySampler s(p, worker, seed);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(s.next(now_s));
  return out;
}
}  // namespace

TEST_CASE("same seed, same stream, and other workers and seeds, other streams",
          "[straggler][sampler]") {
  const auto p = profile_ok("exp:mean=10ms", 4);
  CHECK(stream(p, 2, 99, 1000) == stream(p, 2, 99, 1000));
  CHECK(stream(p, 2, 99, 1000) != stream(p, 3, 99, 1000));
  CHECK(stream(p, 2, 99, 1000) != stream(p, 2, 100, 1000));
  // The stream is the distribution sampled with the documented generator.
  Rng rng(derive_seed(99, SeedStream::kDelay, 2));
  const auto s = stream(p, 2, 99, 10);
  for (const double x : s) CHECK(x == p.iid()->sample(rng));
  // The worker's stream does not depend on how many workers the run has.
  CHECK(stream(profile_ok("exp:mean=10ms", 16), 2, 99, 100) == stream(p, 2, 99, 100));
}

TEST_CASE("wN=xF multiplies every draw of worker N", "[straggler][sampler]") {
  const auto base = profile_ok("exp:mean=10ms", 8);
  const auto slow = profile_ok("exp:mean=10ms;w3=x5", 8);
  const auto ref = stream(base, 3, 7, 100);
  const auto got = stream(slow, 3, 7, 100);
  for (int i = 0; i < 100; ++i) CHECK(got[i] == 5 * ref[i]);
  CHECK(stream(slow, 2, 7, 100) == stream(base, 2, 7, 100));  // other workers unchanged
}

TEST_CASE("wN=<spec> gives worker N its own distribution, and ranges cover several",
          "[straggler][sampler]") {
  const auto own = profile_ok("exp:mean=10ms;w3=const:50ms", 8);
  for (const double x : stream(own, 3, 1, 50)) CHECK(x == 0.05);
  const auto range = profile_ok("exp:mean=10ms;w0-3=const:1ms", 8);
  for (int w = 0; w <= 3; ++w) CHECK(stream(range, w, 1, 5) == std::vector<double>(5, 0.001));
  CHECK(stream(range, 4, 1, 5) == stream(profile_ok("exp:mean=10ms", 8), 4, 1, 5));
  const auto all = profile_ok("exp:mean=10ms;*=const:2ms", 3);
  for (int w = 0; w < 3; ++w) CHECK(stream(all, w, 1, 3) == std::vector<double>(3, 0.002));
}

TEST_CASE("time changes apply from their time on", "[straggler][sampler]") {
  const auto base = profile_ok("exp:mean=10ms", 8);
  const auto p = profile_ok("exp:mean=10ms;w2@30s=x10", 8);
  DelaySampler ref(base, 2, 5);
  DelaySampler s(p, 2, 5);
  CHECK(s.next(0) == ref.next(0));
  CHECK(s.next(29.999) == ref.next(29.999));
  CHECK(s.next(30) == 10 * ref.next(30));
  CHECK(s.next(100) == 10 * ref.next(100));
  CHECK(s.next(5) == ref.next(5));  // time going back is honoured too

  const auto all = profile_ok("exp:mean=10ms;*@60s=const:40ms", 4);
  DelaySampler w1(all, 1, 5);
  CHECK(w1.next(59.9) != 0.04);
  CHECK(w1.next(60) == 0.04);
  CHECK(w1.next(1e9) == 0.04);
}

TEST_CASE("clauses apply in the order written", "[straggler][sampler]") {
  // A later distribution clause replaces the distribution and resets the factor ...
  DelaySampler a(profile_ok("const:10ms;w3=x5;*@60s=const:1ms", 8), 3, 1);
  CHECK(a.next(0) == 5 * 0.01);
  CHECK(a.next(61) == 0.001);
  // ... while a factor written after it scales whatever distribution is in effect.
  DelaySampler b(profile_ok("const:10ms;*@60s=const:1ms;w3=x5", 8), 3, 1);
  CHECK(b.next(0) == 5 * 0.01);
  CHECK(b.next(61) == 5 * 0.001);
  // Factors replace each other rather than compound.
  DelaySampler c(profile_ok("const:10ms;w3=x5;w3@30s=x10", 8), 3, 1);
  CHECK(c.next(0) == 5 * 0.01);
  CHECK(c.next(31) == 10 * 0.01);
  // For the same worker and time, the later clause wins, whatever the times say.
  DelaySampler d(profile_ok("const:10ms;w3@10s=x2;w3@5s=x3", 8), 3, 1);
  CHECK(d.next(6) == 3 * 0.01);
  CHECK(d.next(11) == 3 * 0.01);
}

TEST_CASE("trace replay: cyclic rows, column w mod columns, factors, resumes",
          "[straggler][sampler]") {
  TempDir dir;
  std::ofstream(dir / "delays.csv") << "w0[ms],w1[ms]\n1,10\n2,20\n3,30\n";
  const auto p = profile_ok("trace:delays.csv", 4, dir.path());
  CHECK(stream(p, 0, 1, 7) == std::vector<double>{0.001, 0.002, 0.003, 0.001, 0.002, 0.003, 0.001});
  CHECK(stream(p, 1, 1, 4) == std::vector<double>{0.01, 0.02, 0.03, 0.01});
  CHECK(stream(p, 2, 1, 2) == std::vector<double>{0.001, 0.002});  // 2 mod 2 = column 0
  CHECK(stream(p, 3, 2, 2) == std::vector<double>{0.01, 0.02});    // no randomness: seed irrelevant

  const auto scaled = profile_ok("trace:delays.csv;w1=x2", 2, dir.path());
  CHECK(stream(scaled, 1, 1, 2) == std::vector<double>{0.02, 0.04});

  // A worker switching to a trace starts at its first row, and resumes it when it comes back.
  const auto later = profile_ok("const:1s;w0@10s=trace:delays.csv;w0@20s=x1", 2, dir.path());
  DelaySampler s(later, 0, 1);
  CHECK(s.next(0) == 1.0);
  CHECK(s.next(10) == 0.001);
  CHECK(s.next(11) == 0.002);
  CHECK(s.next(25) == 0.003);  // x1 from 20 s keeps the trace
  const auto back = profile_ok("const:1s;w0@10s=trace:delays.csv", 1, dir.path());
  DelaySampler r(back, 0, 1);
  CHECK(r.next(10) == 0.001);
  CHECK(r.next(0) == 1.0);
  CHECK(r.next(10) == 0.002);
}

TEST_CASE("sampler guards: bad worker throws, bad now_s is the start", "[straggler][sampler]") {
  const auto p = profile_ok("const:10ms;*@1s=const:20ms", 2);
  CHECK_THROWS_AS(DelaySampler(p, 2, 1), std::invalid_argument);
  CHECK_THROWS_AS(DelaySampler(p, -1, 1), std::invalid_argument);
  DelaySampler s(p, 0, 1);
  CHECK(s.next(std::numeric_limits<double>::quiet_NaN()) == 0.01);
  CHECK(s.next(-5) == 0.01);
  CHECK(s.next(std::numeric_limits<double>::infinity()) == 0.02);
  CHECK(s.worker() == 0);
}

TEST_CASE("a draw longer than the clocks hold is cut to kMaxDurationSeconds",
          "[straggler][sampler]") {
  // A factor (or a heavy tail) can take a draw past 1e9 s, which the real clock's nanoseconds
  // would wrap into no delay at all.
  DelaySampler s(profile_ok("const:1ms;w1=x1e13", 2), 1, 1);
  CHECK(s.next(0) == kMaxDurationSeconds);
  DelaySampler just(profile_ok("const:1ms;w1=x1e12", 2), 1, 1);
  CHECK(just.next(0) == 1e9);
  DelaySampler other(profile_ok("const:1ms;w1=x1e13", 2), 0, 1);
  CHECK(other.next(0) == 0.001);
  // Pareto with shape 0.5: one draw in a million passes 1e9 s; none may exceed it.
  DelaySampler tail(profile_ok("pareto:scale=1ms,shape=0.5", 1), 0, 3);
  double longest = 0;
  for (int i = 0; i < 10'000'000; ++i) longest = std::max(longest, tail.next(0));
  CHECK(longest == kMaxDurationSeconds);
}

TEST_CASE("a job of Q local steps takes the sum of Q consecutive draws", "[straggler][sampler]") {
  const auto p = profile_ok("exp:mean=10ms;w1=x3", 2);
  const auto jobs = p.with_draws_per_job(3);
  CHECK(jobs.draws_per_job() == 3);
  CHECK(p.draws_per_job() == 1);
  for (const int w : {0, 1}) {
    const auto draws = stream(p, w, 7, 30);
    const auto summed = stream(jobs, w, 7, 10);
    for (std::size_t j = 0; j < summed.size(); ++j) {
      CHECK(summed[j] == Approx(draws[3 * j] + draws[3 * j + 1] + draws[3 * j + 2]));
    }
  }
  // A job is no longer one draw of the spec: the closed forms and MindFlayer's chance step
  // aside; a constant sums exactly, and the timeout's bound scales.
  CHECK(jobs.iid() == nullptr);
  CHECK_FALSE(jobs.chance_within(0, 0.01).has_value());
  CHECK(jobs.quantile_bound(0.999) == Approx(3 * p.quantile_bound(0.999)));
  const auto fixed = profile_ok("const:2ms;w1=const:5ms", 2).with_draws_per_job(4);
  REQUIRE(fixed.fixed_times().has_value());
  CHECK(fixed.fixed_times()->at(0) == Approx(0.008));
  CHECK(fixed.fixed_times()->at(1) == Approx(0.020));
}

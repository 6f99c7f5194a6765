// EventSimulator driving a bare RoundProtocol on constant delays: update times, cuts and their
// void events, pad vs add, tie order, idle time, and repeatability for a seed.
#include "sim/event_simulator.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "stalesgd/rules/rule.hpp"

using namespace stalesgd;

namespace {

struct Event {
  char kind;  // 's' start, 'a' arrival, 'c' cut
  double t;
  int worker;
  bool operator==(const Event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
  return os << e.kind << e.worker << '@' << e.t;
}

// The bare rule under the protocol, as the theory's Monte Carlo drives it; records every event.
class Driver final : public EventSimulator::Callbacks {
 public:
  Driver(const std::string& rule, int workers, int k, std::uint64_t stop_after)
      : rule_(make(rule, workers, k)), protocol_(*rule_, workers), stop_after_(stop_after) {}

  std::span<const RoundProtocol::Start> begin() override { return protocol_.begin(); }
  bool before_event(double) override { return version_ < stop_after_; }
  void on_start(double t, int w) override { events.push_back({'s', t, w}); }
  Result<RoundProtocol::Step> on_arrival(double t, int w) override {
    events.push_back({'a', t, w});
    const auto step = protocol_.on_arrival(w, protocol_.version_of(w), version_);
    if (step.decision.accept && step.decision.apply) {
      ++version_;
      updates.push_back(t);
    }
    return step;
  }
  void on_cancel(double t, int w) override { events.push_back({'c', t, w}); }

  const RoundProtocol& protocol() const { return protocol_; }
  std::vector<Event> of_kind(char kind) const {
    std::vector<Event> out;
    for (const auto& e : events) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }

  std::vector<Event> events;
  std::vector<double> updates;

 private:
  static std::unique_ptr<Rule> make(const std::string& name, int workers, int k) {
    auto config = resolve_rule({name, k}, workers);
    if (!config) FAIL(config.error().message);
    return make_rule(*config);
  }
  std::unique_ptr<Rule> rule_;
  RoundProtocol protocol_;
  std::uint64_t stop_after_;
  std::uint64_t version_ = 0;
};

StragglerProfile profile(const std::string& spec, int workers) {
  auto p = StragglerProfile::parse(spec, workers);
  if (!p) FAIL(p.error().message);
  return std::move(p).value();
}

// Runs `driver` to its stop on `spec`; returns the simulator for its per-worker stats.
std::unique_ptr<EventSimulator> simulate(Driver& driver, const std::string& spec, int workers,
                                         std::uint64_t seed = 1, DelayMode mode = DelayMode::kPad,
                                         double compute_s = 0.0) {
  auto sim =
      std::make_unique<EventSimulator>(workers, profile(spec, workers), seed, mode, compute_s);
  const auto status = sim->run(driver);
  if (!status) FAIL(status.error().message);
  return sim;
}

constexpr double kEps = 1e-12;

}  // namespace

TEST_CASE("sync, P = 3, const:10ms: updates at 10, 20 and 30 ms", "[sim]") {
  Driver d("sync", 3, 0, 3);
  const auto sim = simulate(d, "const:10ms", 3);
  REQUIRE(d.updates.size() == 3);
  CHECK(d.updates[0] == Approx(0.010).margin(kEps));
  CHECK(d.updates[1] == Approx(0.020).margin(kEps));
  CHECK(d.updates[2] == Approx(0.030).margin(kEps));
  CHECK(d.of_kind('a').size() == 9);
  CHECK(d.of_kind('c').empty());
  for (int w = 0; w < 3; ++w) {
    const auto& st = sim->workers()[static_cast<std::size_t>(w)];
    CHECK(st.worker == w);
    CHECK(st.computed == 3);
    CHECK(st.busy_s == Approx(0.030).margin(kEps));
    CHECK(st.idle_s == Approx(0.0).margin(kEps));  // all arrive together: nobody waits
  }
}

TEST_CASE(
    "k-sync K = 1 with one fast worker: updates every 4 ms, the others are cut and "
    "never arrive",
    "[sim]") {
  Driver d("k-sync", 3, 1, 5);
  const auto sim = simulate(d, "const:10ms;w0=const:4ms", 3);
  REQUIRE(d.updates.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(d.updates[i] == Approx(0.004 * static_cast<double>(i + 1)).margin(kEps));
  }
  // Only worker 0 ever arrives: the 10 ms events of 1 and 2 were voided by each cut.
  for (const auto& a : d.of_kind('a')) CHECK(a.worker == 0);
  CHECK(d.of_kind('a').size() == 5);
  const auto cuts = d.of_kind('c');
  REQUIRE(cuts.size() == 10);
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    CHECK(cuts[i].worker == (i % 2 == 0 ? 1 : 2));
    CHECK(cuts[i].t == Approx(0.004 * static_cast<double>(i / 2 + 1)).margin(kEps));
  }
  CHECK(d.protocol().cancelled(1) == 5);
  CHECK(d.protocol().cancelled(2) == 5);
  CHECK(sim->workers()[1].computed == 0);
  CHECK(sim->workers()[2].computed == 0);
  CHECK(sim->workers()[0].computed == 5);
  // A cut worker was busy until the cut: 5 rounds of 4 ms.
  CHECK(sim->workers()[1].busy_s == Approx(0.020).margin(kEps));
}

TEST_CASE("pad takes max(compute, X), add takes compute + X", "[sim]") {
  struct Case {
    std::string delay;
    DelayMode mode;
    double per_minibatch;
  };
  const Case cases[] = {{"const:10ms", DelayMode::kPad, 0.010},
                        {"const:10ms", DelayMode::kAdd, 0.013},
                        {"const:1ms", DelayMode::kPad, 0.003},
                        {"const:1ms", DelayMode::kAdd, 0.004}};
  for (const auto& c : cases) {
    INFO(c.delay << ' ' << to_string(c.mode));
    Driver d("sync", 1, 0, 3);
    (void)simulate(d, c.delay, 1, 1, c.mode, 0.003);
    REQUIRE(d.updates.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(d.updates[i] == Approx(c.per_minibatch * static_cast<double>(i + 1)).margin(kEps));
    }
  }
}

TEST_CASE("simultaneous events arrive in scheduling order", "[sim]") {
  SECTION("the first minibatches were scheduled in worker order") {
    Driver d("async", 3, 0, 3);
    (void)simulate(d, "const:10ms", 3);
    const std::vector<Event> want{{'a', 0.010, 0}, {'a', 0.010, 1}, {'a', 0.010, 2}};
    CHECK(d.of_kind('a') == want);
  }
  SECTION("a minibatch scheduled earlier goes first, whatever its worker") {
    // Worker 1's 20 ms minibatch was scheduled at 0, worker 0's second at 10 ms: both end at 20.
    Driver d("async", 2, 0, 3);
    (void)simulate(d, "const:10ms;w1=const:20ms", 2);
    const auto a = d.of_kind('a');
    REQUIRE(a.size() == 3);
    CHECK(a[0].worker == 0);
    CHECK(a[0].t == Approx(0.010).margin(kEps));
    CHECK(a[1].worker == 1);
    CHECK(a[1].t == Approx(0.020).margin(kEps));
    CHECK(a[2].worker == 0);
    CHECK(a[2].t == Approx(0.020).margin(kEps));
  }
}

TEST_CASE("a k-async worker waiting for the update accrues idle time", "[sim]") {
  Driver d("k-async", 2, 2, 1);
  const auto sim = simulate(d, "const:10ms;w0=const:4ms", 2);
  REQUIRE(d.updates.size() == 1);
  CHECK(d.updates[0] == Approx(0.010).margin(kEps));
  // Worker 0 pushed at 4 ms and waited until the update at 10 ms.
  CHECK(sim->workers()[0].busy_s == Approx(0.004).margin(kEps));
  CHECK(sim->workers()[0].idle_s == Approx(0.006).margin(kEps));
  CHECK(sim->workers()[1].busy_s == Approx(0.010).margin(kEps));
  CHECK(sim->workers()[1].idle_s == Approx(0.0).margin(kEps));
  const auto starts = d.of_kind('s');
  REQUIRE(starts.size() == 4);
  CHECK(starts[2] == Event{'s', 0.010, 0});
  CHECK(starts[3] == Event{'s', 0.010, 1});
}

TEST_CASE("the same seed gives the same event sequence", "[sim]") {
  for (const std::string rule : {"k-sync", "k-async", "k-batch-sync"}) {
    INFO(rule);
    const auto sequence = [&](std::uint64_t seed) {
      Driver d(rule, 4, 2, 50);
      (void)simulate(d, "exp:mean=10ms", 4, seed);
      return d.events;
    };
    const auto a = sequence(7);
    REQUIRE(a.size() > 100);
    CHECK(sequence(7) == a);
    CHECK_FALSE(sequence(8) == a);  // the delays do come from the seed
  }
}

// predict_errors, the library call behind `theory --error` and stalesgd.theory(error=True): the
// K it sweeps, the default budgets, each budget's errors and best K from the rules' bounds, and
// the request's errors found before any data is read.
#include <algorithm>

#include <catch2/catch.hpp>

#include "stalesgd/theory/error_prediction.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using Catch::Matchers::Contains;

namespace {
ErrorRequest small_request() {
  ErrorRequest r;
  r.workers = 6;
  r.delay = "exp:mean=10ms";
  r.samples = 1000;
  r.model.l2 = 1e-3f;
  r.constants_samples = 1000;
  r.optimum_epochs = 2;
  return r;
}
}  // namespace

TEST_CASE("predict_errors sweeps K = 1, 2, 4, P and picks each budget's least bound",
          "[error][theory]") {
  auto p = predict_errors(small_request(), test::mnist());
  REQUIRE(p);
  std::vector<int> ks;
  for (const auto& e : p->rules) ks.push_back(e.rule.k);
  CHECK(ks == std::vector<int>{1, 2, 4, 6});
  CHECK(p->constants_samples == 1000);
  // No budgets given: 10, 100, 1000, 10000 x the fastest E[T].
  double fastest = p->rules[0].seconds_per_iteration;
  for (const auto& e : p->rules) fastest = std::min(fastest, e.seconds_per_iteration);
  REQUIRE(p->budgets.size() == 4);
  CHECK(p->budgets[0].seconds == Approx(10 * fastest));
  CHECK(p->budgets[3].seconds == Approx(10000 * fastest));
  for (const auto& b : p->budgets) {
    REQUIRE(b.errors.size() == p->rules.size());
    std::size_t least = 0;
    for (std::size_t i = 0; i < b.errors.size(); ++i) {
      const auto& e = p->rules[i];
      CHECK(b.errors[i] == error_at_time(e.bound, b.seconds, e.seconds_per_iteration));
      if (b.errors[i] < b.errors[least]) least = i;
    }
    CHECK(b.best_k == p->rules[least].rule.k);
  }
  // Exponential delays: k-sync's E[T] has a closed form at every K.
  for (const auto& e : p->rules) CHECK(e.runtime_method == "closed form");
}

TEST_CASE("predict_errors: a given K or budget is the only one", "[error][theory]") {
  auto r = small_request();
  r.rule = {"k-async", 3, {}};
  r.budgets = {0.5};
  r.p0 = 0.5;
  r.gamma = 0.25;
  auto p = predict_errors(r, test::mnist());
  REQUIRE(p);
  REQUIRE(p->rules.size() == 1);
  CHECK(p->rules[0].rule.k == 3);
  CHECK(p->rules[0].staleness.p0 == 0.5);
  CHECK(p->rules[0].bound.gamma_prime == Approx(1 - 0.5 * 0.25));
  REQUIRE(p->budgets.size() == 1);
  CHECK(p->budgets[0].best_k == 3);
}

TEST_CASE("check_error_request names the flag of a bad request before data is read",
          "[error][theory]") {
  const auto message = [](auto change) {
    auto r = small_request();
    change(r);
    const auto s = check_error_request(r);
    return s ? std::string() : s.error().message;
  };
  CHECK(message([](ErrorRequest&) {}).empty());
  CHECK_THAT(message([](ErrorRequest& r) { r.model.name = "mlp"; }),
             Contains("--model mlp is not convex"));
  CHECK_THAT(message([](ErrorRequest& r) { r.model.l2 = 0; }), Contains("--l2 0 leaves"));
  CHECK_THAT(message([](ErrorRequest& r) { r.delay.clear(); }), Contains("--delay is required"));
  CHECK_THAT(message([](ErrorRequest& r) { r.delay = "exp:mean=10ms;w3=x5"; }),
             Contains("needs i.i.d. delays"));
  CHECK_THAT(message([](ErrorRequest& r) { r.rule = {"k-sync", 7, {}}; }), Contains("7"));
  CHECK_THAT(message([](ErrorRequest& r) { r.budgets = {-1}; }), Contains("--budget -1"));
  CHECK_THAT(message([](ErrorRequest& r) { r.gamma = 2; }), Contains("--gamma must be in [0, 1]"));
}

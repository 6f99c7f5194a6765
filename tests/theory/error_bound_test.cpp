// The error bounds (Lemma 1, Theorem 3) and the error-versus-wallclock curve against values
// computed by hand.
#include <cmath>

#include <catch2/catch.hpp>

#include "stalesgd/theory/error_bound.hpp"

using namespace stalesgd;

namespace {
// c = 0.1, L = 2, sigma^2 = 4, F(w0) - F* = 1.
ErrorConstants constants() {
  return {0.1, 2.0, 4.0, 1.0};
}
}  // namespace

TEST_CASE("Lemma 1: floor eta L sigma^2 / (2cKm), rate 1 - eta c", "[error][theory]") {
  const ErrorBound b = k_sync_error_bound(constants(), 0.1, 2, 4);
  CHECK(b.theorem == "Lemma 1");
  CHECK(b.floor == Approx(0.1 * 2 * 4 / (2 * 0.1 * 2 * 4)));  // 0.5
  CHECK(b.rate == Approx(0.99));
  CHECK(b.gamma_prime == 1.0);
  CHECK(error_after(b, 0) == Approx(1.0));
  CHECK(error_after(b, 10) == Approx(0.5 + std::pow(0.99, 10) * 0.5));
  CHECK(error_after(b, 1e6) == Approx(0.5));
  CHECK(b.warnings.empty());
}

TEST_CASE("Theorem 3: c becomes gamma' c with gamma' = 1 - gamma + p0/2", "[error][theory]") {
  const ErrorBound b = k_async_error_bound(constants(), {0.5, 0.5}, 0.1, 2, 4);
  CHECK(b.theorem == "Theorem 3");
  CHECK(b.gamma_prime == Approx(0.75));
  CHECK(b.floor == Approx(0.8 / (2 * 0.1 * 0.75 * 8)));
  CHECK(b.rate == Approx(1 - 0.1 * 0.75 * 0.1));
  // gamma = p0 / 2 cancels: the K-sync numbers again.
  const ErrorBound same = k_async_error_bound(constants(), {0.5, 0.25}, 0.1, 2, 4);
  CHECK(same.floor == Approx(k_sync_error_bound(constants(), 0.1, 2, 4).floor));
}

TEST_CASE("error_bound picks the statement by rule, error_at_time takes J = t / E[T]",
          "[error][theory]") {
  const Staleness s{0.25, 0.1};
  CHECK(error_bound({RuleKind::kKSync, 8, 2}, constants(), s, 0.1, 4).theorem == "Lemma 1");
  CHECK(error_bound({RuleKind::kKBatchSync, 8, 2}, constants(), s, 0.1, 4).theorem == "Lemma 1");
  CHECK(error_bound({RuleKind::kSync, 8, 8}, constants(), s, 0.1, 4).theorem == "Lemma 1");
  const ErrorBound a = error_bound({RuleKind::kKAsync, 8, 2}, constants(), s, 0.1, 4);
  CHECK(a.theorem == "Theorem 3");
  CHECK(a.gamma_prime == Approx(1 - 0.1 + 0.125));
  CHECK(error_at_time(a, 1.0, 0.1) == Approx(error_after(a, 10)));
}

TEST_CASE("fresh probability K/P and the drift gamma, capped at 1", "[error][theory]") {
  CHECK(k_async_fresh_probability(1, 8) == Approx(0.125));
  CHECK(k_async_fresh_probability(8, 8) == Approx(1.0));
  CHECK(drift_gamma(0.1, 2.0, 1.0) == Approx(0.04));
  CHECK(drift_gamma(0.1, 2.0, 0.0) == 0.0);
  CHECK(drift_gamma(0.5, 2.0, 7.0) == 1.0);
}

TEST_CASE("the bound names the conditions the inputs break", "[error][theory]") {
  CHECK_FALSE(k_sync_error_bound(constants(), 0.6, 1, 1).warnings.empty());           // lr L > 1
  CHECK_FALSE(k_async_error_bound(constants(), {1, 0}, 0.3, 1, 1).warnings.empty());  // > 1/2
  // A floor above the initial gap: sigma^2 large.
  CHECK_FALSE(k_sync_error_bound({0.1, 2, 400, 1}, 0.1, 1, 1).warnings.empty());
}

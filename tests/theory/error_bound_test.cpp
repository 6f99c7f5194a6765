// The error bounds (Lemma 1, Theorem 3') and the error-versus-wallclock curve against values
// computed by hand; K-async with every gradient fresh is K-sync exactly.
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

TEST_CASE("Theorem 3': c becomes gamma' c with gamma' = 1 - (1 - p0) gamma", "[error][theory]") {
  const ErrorBound b = k_async_error_bound(constants(), {0.5, 0.5}, 0.1, 2, 4);
  CHECK(b.theorem == "Theorem 3'");
  CHECK(b.gamma_prime == Approx(0.75));
  CHECK(b.floor == Approx(0.8 / (2 * 0.1 * 0.75 * 8)));
  CHECK(b.rate == Approx(1 - 0.1 * 0.75 * 0.1));
  CHECK(b.warnings.empty());
  // Never above K-sync's: gamma' <= 1 for every p0 and gamma in [0, 1].
  for (double p0 : {0.0, 0.125, 0.5, 1.0}) {
    for (double gamma : {0.0, 0.3, 1.0}) {
      const ErrorBound a = k_async_error_bound(constants(), {p0, gamma}, 0.1, 2, 4);
      CHECK(a.gamma_prime <= 1.0);
      CHECK(a.floor >= k_sync_error_bound(constants(), 0.1, 2, 4).floor * (1 - 1e-12));
    }
  }
}

TEST_CASE("Theorem 3' at K = P, every gradient fresh, is Lemma 1 exactly", "[error][theory]") {
  // p0 = 1 (K-async with K = P is K-sync): the same floor and rate, whatever gamma.
  const ErrorBound sync = error_bound({"k-sync", 8, 8}, constants(), {}, 0.1, 4);
  for (double gamma : {0.0, 0.5, 1.0}) {
    const ErrorBound async = error_bound({"k-async", 8, 8}, constants(), {1.0, gamma}, 0.1, 4);
    CHECK(async.floor == sync.floor);
    CHECK(async.rate == sync.rate);
    CHECK(error_after(async, 123.5) == error_after(sync, 123.5));
  }
}

TEST_CASE("error_bound picks the statement by rule, error_at_time takes J = t / E[T]",
          "[error][theory]") {
  const Staleness s{0.25, 0.1};
  CHECK(error_bound({"k-sync", 8, 2}, constants(), s, 0.1, 4).theorem == "Lemma 1");
  CHECK(error_bound({"k-batch-sync", 8, 2}, constants(), s, 0.1, 4).theorem == "Lemma 1");
  CHECK(error_bound({"sync", 8, 8}, constants(), s, 0.1, 4).theorem == "Lemma 1");
  const ErrorBound a = error_bound({"k-async", 8, 2}, constants(), s, 0.1, 4);
  CHECK(a.theorem == "Theorem 3'");
  CHECK(a.gamma_prime == Approx(1 - (1 - 0.25) * 0.1));
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
  CHECK_FALSE(k_sync_error_bound(constants(), 0.6, 1, 1).warnings.empty());  // lr L > 1
  // Theorem 3' under Lemma 1's own condition: lr L = 0.6 is allowed, 1.2 is not.
  CHECK(k_async_error_bound(constants(), {1, 0}, 0.3, 1, 100).warnings.empty());  // floor 0.12
  CHECK_FALSE(k_async_error_bound(constants(), {1, 0}, 0.6, 1, 100).warnings.empty());
  CHECK_FALSE(k_async_error_bound(constants(), {0.5, 1.5}, 0.1, 1, 1).warnings.empty());
  // A floor above the initial gap: sigma^2 large.
  CHECK_FALSE(k_sync_error_bound({0.1, 2, 400, 1}, 0.1, 1, 1).warnings.empty());
}

// The standard normal cdf and quantile behind the lognormal family.
#include "straggler/normal.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace stalesgd::straggler;

TEST_CASE("normal quantile matches reference values", "[straggler][normal]") {
  CHECK(normal_quantile(0.5) == 0.0);
  CHECK(normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-15));
  CHECK(normal_quantile(0.9) == Approx(1.2815515655446004).epsilon(1e-15));
  CHECK(normal_quantile(0.01) == Approx(-2.3263478740408408).epsilon(1e-15));
  CHECK(normal_quantile(1e-10) == Approx(-6.361340902404056).epsilon(1e-14));
  CHECK(std::isinf(normal_quantile(0.0)));
  CHECK(std::isinf(normal_quantile(1.0)));
}

TEST_CASE("normal cdf inverts the quantile across the range", "[straggler][normal]") {
  for (double p = 1e-12; p < 1; p = p < 0.01 ? p * 3 : p + 0.0137) {
    INFO("p = " << p);
    CHECK(normal_cdf(normal_quantile(p)) == Approx(p).epsilon(1e-13));
    CHECK(normal_quantile(1 - p) == Approx(-normal_quantile(p)).epsilon(1e-6));
  }
}

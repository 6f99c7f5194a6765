#include "model/init.hpp"

#include <cmath>

namespace stalesgd::model {

void fill_uniform(float* w, std::size_t count, float limit, Rng& rng) {
  constexpr float kTwoPow24 = 16777216.0f;
  for (std::size_t i = 0; i < count; ++i) {
    const float u = static_cast<float>(rng() >> 40) / kTwoPow24;  // [0, 1), exact in float
    w[i] = limit * (2.0f * u - 1.0f);
  }
}

float he_limit(std::size_t fan_in) {
  return std::sqrt(6.0f / static_cast<float>(fan_in));
}

float glorot_limit(std::size_t fan_in, std::size_t fan_out) {
  return std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
}

}  // namespace stalesgd::model

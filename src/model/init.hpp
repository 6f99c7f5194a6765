// Deterministic parameter initialisation from raw Rng bits: the same seed gives the same
// parameters on every build (std:: distributions may differ between standard libraries; the
// mt19937_64 bit stream may not).
#pragma once

#include <cstddef>

#include "stalesgd/util/seed.hpp"

namespace stalesgd::model {

// w[i] ~ Uniform[-limit, limit): the top 24 bits of one draw give a float in [0, 1) exactly.
void fill_uniform(float* w, std::size_t count, float limit, Rng& rng);

// He et al. 2015 (layers followed by a ReLU): Var = 2 / fan_in, i.e. limit sqrt(6 / fan_in).
float he_limit(std::size_t fan_in);

// Glorot & Bengio 2010 (the linear output layer): Var = 2 / (fan_in + fan_out).
float glorot_limit(std::size_t fan_in, std::size_t fan_out);

}  // namespace stalesgd::model

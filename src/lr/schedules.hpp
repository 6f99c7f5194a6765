// The learning-rate rules behind make_learning_rate, one class per file.
#pragma once

#include <cstdint>
#include <memory>

#include "stalesgd/lr/learning_rate.hpp"

namespace stalesgd {

std::unique_ptr<LearningRate> make_fixed_rate(double base);
std::unique_ptr<LearningRate> make_step_decay(double base, std::uint64_t every, double factor);
std::unique_ptr<LearningRate> make_exponential_decay(double base, double decay);
std::unique_ptr<LearningRate> make_inverse_staleness(double base);
std::unique_ptr<LearningRate> make_staleness_distance(double lr_max, double c);
std::unique_ptr<LearningRate> make_delay_adaptive(double base, double c);

}  // namespace stalesgd

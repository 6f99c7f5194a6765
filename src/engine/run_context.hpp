// RunContext: what every engine shares for one run, built and validated once by train():
// the model, the learning-rate rule, the initial parameters, and the stop conditions.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/engine/trainer_options.hpp"
#include "stalesgd/lr/learning_rate.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct RunContext {
  const TrainerOptions& options;
  const Dataset& data;
  std::unique_ptr<Model> model;
  std::unique_ptr<LearningRate> lr;
  std::vector<float> initial;           // w_0
  const std::atomic<bool>* interrupt;   // set by a signal handler; may be null

  bool interrupted() const { return interrupt != nullptr && interrupt->load(std::memory_order_relaxed); }
  // The budget that ends the run at `iterations` done and `elapsed_s`, or "" to go on.
  std::string budget_reached(std::uint64_t iterations, double elapsed_s) const {
    if (options.iterations > 0 && iterations >= options.iterations) return "iterations";
    if (options.time_s > 0.0 && elapsed_s >= options.time_s) return "time";
    return {};
  }
};

// One line naming the iteration, the loss and the likely fix (the learning rate).
Error divergence_error(std::uint64_t iteration, double loss, int worker, double lr);

// Fills time_to_target_s from the evaluations.
void finish_record(const TrainerOptions& options, RunRecord& run);

// The engines; train() picks one.
Result<RunRecord> train_sequential(RunContext& ctx);
Result<RunRecord> train_threads(RunContext& ctx);
Result<RunRecord> train_virtual(RunContext& ctx);

}  // namespace stalesgd

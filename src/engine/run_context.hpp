// RunContext: what every engine shares for one run, built once by train(): the resolved run,
// the data, the model, the initial parameters and the interrupt flag.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "output/run_journal.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/progress.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/util/result.hpp"
#include "util/logging.hpp"

namespace stalesgd {

struct RunContext {
  const ResolvedRun& run;
  const TrainerOptions& options;  // run.options()
  const Dataset& data;
  std::unique_ptr<Model> model;
  std::vector<float> initial;           // w_0
  const std::atomic<bool>* interrupt;   // set by a signal handler; may be null
  RunJournal* journal = nullptr;        // --out: rows are appended as the run goes; may be null
  const std::string* resume = nullptr;  // --resume: the checkpoint's payload; may be null
  ProgressSink* progress = nullptr;     // how far the run is; may be null
  spdlog::logger* log = nullptr;        // the run's log (stderr and run.log); null: the default
  const logging::RunLog* run_log = nullptr;  // --out: run.log, whose failed write ends the run

  // --partition: each worker's indices into data.train (empty: every worker samples it all).
  std::vector<std::vector<std::uint32_t>> shards{};
  // Worker w's minibatch stream: its shard, or the whole training split.
  MinibatchSampler sampler(int w, std::uint64_t stream_seed) const;
  spdlog::logger& logger() const { return log != nullptr ? *log : *spdlog::default_logger_raw(); }

  bool interrupted() const {
    return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
  }
};

// A minibatch loss that says the run diverged (docs/cli.md): not finite, or above
// kDivergedLossFactor x ln C, a thousand times the cross-entropy of a uniform guess over the C
// classes, where a fresh model starts. A run on its way to infinity is stopped there, records
// kept, instead of "training" at a loss of 1e19.
inline constexpr double kDivergedLossFactor = 1000.0;
bool diverged(double loss, int classes);

// One line naming the iteration, the loss and the likely fix (the learning rate).
Error divergence_error(std::uint64_t iteration, double loss, int worker, double lr);

// The engines; train() picks one.
Result<RunRecord> train_sequential(RunContext& ctx);
Result<RunRecord> train_threads(RunContext& ctx);
Result<RunRecord> train_hogwild(RunContext& ctx);
Result<RunRecord> train_virtual(RunContext& ctx);

}  // namespace stalesgd

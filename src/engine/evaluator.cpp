#include "engine/evaluator.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include <fmt/format.h>
#include <tbb/task_arena.h>

#include "util/parallel.hpp"

namespace stalesgd {

Evaluator::Evaluator(const Model& model, const Dataset& data, EvaluatorOptions options)
    : model_(model),
      data_(data),
      options_(options),
      max_pending_(std::clamp<std::size_t>(
          kMaxPendingBytes / std::max<std::size_t>(1, model.num_params() * sizeof(float)), 2,
          kMaxPending)) {
  if (options_.background) {
    thread_ = std::thread([this] { run_background(); });
  } else if (!options_.parallel) {
    inline_ws_ = model_.make_workspace(options_.eval_batch);
  }
}

Evaluator::~Evaluator() {
  if (thread_.joinable()) {
    // Back to normal priority for the snapshot it may be evaluating: at SCHED_IDLE a busy
    // machine would hold up the end of the run (and past a SIGTERM's grace) for it.
    sched_param param{};
    pthread_setschedparam(thread_.native_handle(), SCHED_OTHER, &param);
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      queue_.clear();
    }
    cv_.notify_all();
    thread_.join();
  }
}

EvalRecord Evaluator::evaluate(const Pending& p, Workspace& ws) const {
  EvalRecord row;
  row.wall_s = p.wall_s;
  row.iteration = p.iteration;
  const auto test = model_.evaluate(p.params, data_.test, ws, options_.test_samples);
  const auto train = model_.evaluate(p.params, data_.train, ws, options_.train_samples);
  row.test_loss = test.loss;
  row.test_error = test.error;
  row.train_loss = train.loss;
  row.train_objective = train.loss + model_.l2_penalty(p.params);
  if (data_.val.count > 0) {
    const auto val = model_.evaluate(p.params, data_.val, ws, 0);
    row.val_loss = val.loss;
    row.val_error = val.error;
  }
  return row;
}

std::unique_ptr<Workspace> Evaluator::take_workspace() {
  {
    std::lock_guard lock(ws_mu_);
    if (!spare_ws_.empty()) {
      auto ws = std::move(spare_ws_.back());
      spare_ws_.pop_back();
      return ws;
    }
  }
  return model_.make_workspace(options_.eval_batch);
}

void Evaluator::give_back(std::unique_ptr<Workspace> ws) {
  std::lock_guard lock(ws_mu_);
  spare_ws_.push_back(std::move(ws));
}

EvalRecord Evaluator::evaluate_blocks(const Pending& p) {
  // Fixed blocks of eval_batch samples (a workspace's max batch, so each block is one chunk of
  // Model::evaluate_sums): the test samples, then the train samples, then the held-out ones.
  struct Block {
    const Split* split;
    std::size_t first;
    std::size_t count;
  };
  const auto samples = [](const Split& s, std::size_t max) {
    return max == 0 ? s.count : std::min(max, s.count);
  };
  const std::size_t test_total = samples(data_.test, options_.test_samples);
  const std::size_t train_total = samples(data_.train, options_.train_samples);
  const auto batch = static_cast<std::size_t>(options_.eval_batch);
  std::vector<Block> blocks;
  for (std::size_t first = 0; first < test_total; first += batch) {
    blocks.push_back({&data_.test, first, std::min(batch, test_total - first)});
  }
  const std::size_t test_blocks = blocks.size();
  for (std::size_t first = 0; first < train_total; first += batch) {
    blocks.push_back({&data_.train, first, std::min(batch, train_total - first)});
  }
  const std::size_t train_blocks = blocks.size() - test_blocks;
  for (std::size_t first = 0; first < data_.val.count; first += batch) {
    blocks.push_back({&data_.val, first, std::min(batch, data_.val.count - first)});
  }
  std::vector<EvalSums> sums(blocks.size());
  parallel_for_index(blocks.size(), [&](std::size_t i) {
    auto ws = take_workspace();
    sums[i] =
        model_.evaluate_sums(p.params, *blocks[i].split, blocks[i].first, blocks[i].count, *ws);
    give_back(std::move(ws));
  });
  // Added in block order from 0, as Model::evaluate adds its chunks: the same bits.
  EvalSums test, train, val;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EvalSums& to = i < test_blocks ? test : i < test_blocks + train_blocks ? train : val;
    to.loss += sums[i].loss;
    to.errors += sums[i].errors;
  }
  const auto mean = [](double x, std::size_t n) {
    return n == 0 ? 0.0 : x / static_cast<double>(n);
  };
  EvalRecord row;
  row.wall_s = p.wall_s;
  row.iteration = p.iteration;
  row.test_loss = mean(test.loss, test_total);
  row.test_error = mean(static_cast<double>(test.errors), test_total);
  row.train_loss = mean(train.loss, train_total);
  row.train_objective = row.train_loss + model_.l2_penalty(p.params);
  if (data_.val.count > 0) {
    row.val_loss = mean(val.loss, data_.val.count);
    row.val_error = mean(static_cast<double>(val.errors), data_.val.count);
  }
  return row;
}

void Evaluator::store(std::size_t index, const EvalRecord& row) {
  {
    std::lock_guard lock(mu_);
    results_[index] = row;
    done_[index] = true;
    if (!latest_ || *latest_ < index) latest_ = index;
  }
  if (options_.target_error > 0.0 && row.test_error <= options_.target_error) {
    target_reached_.store(true, std::memory_order_release);
  }
}

void Evaluator::submit(double wall_s, std::uint64_t iteration, std::span<const float> params,
                       bool final) {
  if (options_.background && !final) {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_pending_) {
      ++skipped_;
      return;
    }
  }
  Pending p{wall_s, iteration, {params.begin(), params.end()}, 0, final && options_.parallel};
  {
    std::lock_guard lock(mu_);
    p.index = results_.size();
    results_.emplace_back();
    done_.push_back(false);
    if (options_.background) {
      queue_.push_back(std::move(p));
    }
  }
  if (options_.background) {
    cv_.notify_one();
  } else if (options_.parallel) {
    store(p.index, evaluate_blocks(p));
  } else {
    store(p.index, evaluate(p, *inline_ws_));
  }
}

void Evaluator::fail(const char* what) {
  {
    std::lock_guard lock(mu_);
    if (!failure_.empty()) return;
    failure_ = fmt::format("internal error in the evaluator: {}", what);
  }
  failed_.store(true, std::memory_order_release);
}

std::string Evaluator::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void Evaluator::run_background() {
  // SCHED_IDLE: run only when no other thread wants the core, so training is not slowed.
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
  // An exception ends this thread, not the process: the supervisor sees failed() and ends the
  // run with the message (docs/architecture.md, "Threads, locks and atomics").
  try {
    auto ws = model_.make_workspace(options_.eval_batch);
    for (;;) {
      Pending p;
      {
        std::unique_lock lock(mu_);
        const auto done = [&] { return stopping_ || finishing_.load(std::memory_order_acquire); };
        cv_.wait(lock, [&] { return done() || (!queue_.empty() && !queue_.front().for_finish); });
        if (done()) return;
        p = std::move(queue_.front());
        queue_.pop_front();
      }
      store(p.index, evaluate(p, *ws));
    }
  } catch (const std::exception& e) {
    fail(e.what());
  } catch (...) {
    fail("an exception that is not a std::exception");
  }
}

std::vector<EvalRecord> Evaluator::ready(std::size_t from) const {
  std::lock_guard lock(mu_);
  std::vector<EvalRecord> rows;
  for (std::size_t i = from; i < results_.size() && done_[i]; ++i) rows.push_back(results_[i]);
  return rows;
}

void Evaluator::restore(const std::vector<EvalRecord>& rows, std::size_t skipped) {
  std::lock_guard lock(mu_);
  results_ = rows;
  done_.assign(rows.size(), true);
  if (!rows.empty()) latest_ = rows.size() - 1;
  skipped_ = skipped;
}

std::size_t Evaluator::skipped() const {
  std::lock_guard lock(mu_);
  return skipped_;
}

std::vector<EvalRecord> Evaluator::finish(const std::atomic<bool>* interrupt) {
  std::vector<Pending> rest;
  if (thread_.joinable()) {
    // No new snapshot for the background thread from here: once at normal priority it could
    // otherwise take the next one before the lock below is ours, and an interrupted run
    // would evaluate it (the snapshots are finish()'s now).
    finishing_.store(true, std::memory_order_release);
    // Back to normal priority for the snapshot it may be evaluating: at SCHED_IDLE a busy
    // machine would hold up the end of the run (and past a SIGTERM's grace) for it.
    sched_param param{};
    pthread_setschedparam(thread_.native_handle(), SCHED_OTHER, &param);
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      rest.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
    }
    cv_.notify_all();
    thread_.join();
  }
  // Training is over: the remaining snapshots may use every core.
  if (options_.parallel) {
    const auto interrupted = [&] {
      return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
    };
    // Each snapshot a task. Fewer snapshots than threads (the final one alone, most often):
    // each in blocks, so they still fill the cores. More: a snapshot per task in one piece,
    // which measured a little faster than blocks there (docs/performance.md, "oneTBB").
    const bool in_blocks =
        rest.size() < static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
    parallel_for_index(rest.size(), [&](std::size_t i) {
      if (failed()) return;  // a failure ends the evaluations (serially: the failing drain's)
      if (i + 1 < rest.size() && interrupted()) return;  // only the final snapshot is left
      try {
        if (in_blocks) {
          store(rest[i].index, evaluate_blocks(rest[i]));
        } else {
          auto ws = take_workspace();
          store(rest[i].index, evaluate(rest[i], *ws));
          give_back(std::move(ws));
        }
      } catch (const std::exception& e) {
        fail(e.what());
      } catch (...) {
        fail("an exception that is not a std::exception");
      }
    });
  } else {
    drain_on_threads(rest, interrupt);
  }
  std::lock_guard lock(mu_);
  // Rows not evaluated (skipped after a signal, or a failed evaluation) have none.
  std::vector<EvalRecord> rows;
  for (std::size_t i = 0; i < results_.size(); ++i) {
    if (done_[i]) rows.push_back(results_[i]);
  }
  return rows;
}

void Evaluator::drain_on_threads(std::vector<Pending>& rest, const std::atomic<bool>* interrupt) {
  const auto interrupted = [&] {
    return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
  };
  std::atomic<std::size_t> next{0};  // relaxed: only hands out indices; join() publishes results
  auto drain = [&] {
    try {
      auto ws = model_.make_workspace(options_.eval_batch);
      for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < rest.size();) {
        if (i + 1 < rest.size() && interrupted()) continue;  // only the final snapshot is left
        store(rest[i].index, evaluate(rest[i], *ws));
      }
    } catch (const std::exception& e) {
      fail(e.what());
    } catch (...) {
      fail("an exception that is not a std::exception");
    }
  };
  const std::size_t helpers =
      std::min<std::size_t>(rest.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < helpers; ++t) pool.emplace_back(drain);
  drain();
  for (auto& t : pool) t.join();
}

std::optional<EvalRecord> Evaluator::latest() const {
  std::lock_guard lock(mu_);
  if (!latest_) return std::nullopt;
  return results_[*latest_];
}

}  // namespace stalesgd

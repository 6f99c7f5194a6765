#include "engine/evaluator.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include <fmt/format.h>

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
  } else {
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
  Pending p{wall_s, iteration, {params.begin(), params.end()}, 0};
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
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
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
  // Training is over: the remaining snapshots may use every core. Plain threads rather than
  // tbb::parallel_for: TBB's runtime is not instrumented, so ThreadSanitizer would report its
  // internal hand-offs as races in every threaded run.
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
  std::lock_guard lock(mu_);
  // Rows not evaluated (skipped after a signal, or a failed evaluation) have none.
  std::vector<EvalRecord> rows;
  for (std::size_t i = 0; i < results_.size(); ++i) {
    if (done_[i]) rows.push_back(results_[i]);
  }
  return rows;
}

std::optional<EvalRecord> Evaluator::latest() const {
  std::lock_guard lock(mu_);
  if (!latest_) return std::nullopt;
  return results_[*latest_];
}

}  // namespace stalesgd

#include "engine/evaluator.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <tbb/task_arena.h>

#include "util/parallel.hpp"

namespace stalesgd {
namespace {

// Sizing aims an intermediate evaluation at half the catch-up thread's share of one interval:
// it then keeps up with room for the share's error (other load on the machine, a model whose
// cost varies), and takes half its share from training while behind.
constexpr double kSizingShare = 0.5;

std::size_t used(std::size_t asked, std::size_t count) {
  return asked == 0 ? count : std::min(asked, count);
}

}  // namespace

EvalPlan size_evaluation(EvalPlan full, std::size_t val, std::size_t batch, double sample_cost_s,
                         double budget_s) {
  const auto whole = static_cast<double>(full.test + full.train + val);
  if (sample_cost_s <= 0.0 || whole * sample_cost_s <= budget_s) return full;
  const double room = std::max(0.0, budget_s / sample_cost_s - static_cast<double>(val));
  const double fraction = room / static_cast<double>(full.test + full.train);
  const auto cut = [&](std::size_t n) {
    const auto b = std::max<std::size_t>(1, batch);
    // + 1e-9 of a sample: 0.3 s / 0.1 ms is 2999.99... in binary and means 3000.
    const auto samples = std::floor(fraction * static_cast<double>(n) + 1e-9);
    const auto blocks = static_cast<std::size_t>(samples) / b;
    return std::clamp(blocks * b, std::min(b, n), n);
  };
  return {cut(full.test), cut(full.train)};
}

Evaluator::Evaluator(const Model& model, const Dataset& data, EvaluatorOptions options)
    : model_(model),
      data_(data),
      options_(options),
      full_{used(options.test_samples, data.test.count),
            used(options.train_samples, data.train.count)},
      sized_(full_),
      clock_start_(Clock::now()),
      max_pending_(std::clamp<std::size_t>(
          kMaxPendingBytes / std::max<std::size_t>(1, model.num_params() * sizeof(float)), 2,
          kMaxPending)) {
  if (options_.background) {
    if (options_.sizing) {
      // Before the run clock starts, on this thread at normal priority. An exception is kept
      // as an evaluation's is: the run ends at once with its message.
      try {
        sample_cost_s_ =
            options_.sample_cost_s > 0.0 ? options_.sample_cost_s : measure_sample_cost();
      } catch (...) {
        fail_current();
      }
      const double budget_s = kSizingShare * options_.eval_every_s * options_.share;
      sized_ =
          size_evaluation(full_, data_.val.count, static_cast<std::size_t>(options_.eval_batch),
                          sample_cost_s_, budget_s);
    }
    idle_thread_ = std::thread([this] { run_background(Owner::kIdle); });
    if (options_.catch_up) {
      catch_up_thread_ = std::thread([this] { run_background(Owner::kCatchUp); });
    }
  } else if (!options_.parallel) {
    inline_ws_ = model_.make_workspace(options_.eval_batch);
  }
}

Evaluator::~Evaluator() {
  stop_threads();
}

void Evaluator::stop_threads() {
  if (idle_thread_.joinable()) {
    // Back to normal priority for the block it may be scoring: at SCHED_IDLE a busy machine
    // would hold up the end of the run (and past a SIGTERM's grace) for it. Only a thread with
    // CAP_SYS_NICE may leave SCHED_IDLE; without, the call fails and the block waits for a core.
    sched_param param{};
    pthread_setschedparam(idle_thread_.native_handle(), SCHED_OTHER, &param);
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (catch_up_thread_.joinable()) catch_up_thread_.join();
  if (idle_thread_.joinable()) idle_thread_.join();
}

double Evaluator::measure_sample_cost() const {
  const Split& split = data_.test.count > 0 ? data_.test : data_.train;
  const std::size_t n = std::min(static_cast<std::size_t>(options_.eval_batch), split.count);
  if (n == 0) return 0.0;
  std::vector<float> w(model_.num_params());
  model_.init_params(w, 1);
  auto ws = model_.make_workspace(options_.eval_batch);
  (void)model_.evaluate_sums(w, split, 0, n, *ws);  // warm-up: first-touch memory, caches
  // This thread's CPU time, not the wall clock's: the cost of the work, whatever else runs.
  const auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  const double before = cpu_now();
  (void)model_.evaluate_sums(w, split, 0, n, *ws);
  return (cpu_now() - before) / static_cast<double>(n);
}

void Evaluator::start_clock(Clock::time_point start) {
  std::lock_guard lock(mu_);
  clock_start_ = start;
}

double Evaluator::since_clock_locked() const {
  return std::chrono::duration<double>(Clock::now() - clock_start_).count();
}

std::vector<Evaluator::Block> Evaluator::blocks(const EvalPlan& plan) const {
  // Fixed blocks of eval_batch samples (a workspace's max batch, so each block is one chunk of
  // Model::evaluate_sums): the test samples, then the train samples, then the held-out ones.
  const auto batch = static_cast<std::size_t>(options_.eval_batch);
  std::vector<Block> out;
  const auto add = [&](const Split& split, std::size_t total, int part) {
    for (std::size_t first = 0; first < total; first += batch) {
      out.push_back({&split, first, std::min(batch, total - first), part});
    }
  };
  add(data_.test, plan.test, 0);
  add(data_.train, plan.train, 1);
  add(data_.val, data_.val.count, 2);
  return out;
}

EvalRecord Evaluator::row_of(const Job& job, const EvalPlan& plan,
                             const EvalSums (&sums)[3]) const {
  const auto mean = [](double x, std::size_t n) {
    return n == 0 ? 0.0 : x / static_cast<double>(n);
  };
  EvalRecord row;
  row.wall_s = job.wall_s;
  row.iteration = job.iteration;
  row.test_loss = mean(sums[0].loss, plan.test);
  row.test_error = mean(static_cast<double>(sums[0].errors), plan.test);
  row.train_loss = mean(sums[1].loss, plan.train);
  row.train_objective = row.train_loss + model_.l2_penalty(job.params);
  if (data_.val.count > 0) {
    row.val_loss = mean(sums[2].loss, data_.val.count);
    row.val_error = mean(static_cast<double>(sums[2].errors), data_.val.count);
  }
  row.test_samples = plan.test;
  row.train_samples = plan.train;
  return row;
}

EvalRecord Evaluator::evaluate(const Job& job, Workspace& ws) const {
  // Model::evaluate adds its chunks in order from 0, as row_of's callers add their blocks.
  const auto sums = [&](const Split& split, std::size_t n) {
    return n == 0 ? EvalSums{} : model_.evaluate_sums(job.params, split, 0, n, ws);
  };
  const EvalSums all[3] = {sums(data_.test, job.plan.test), sums(data_.train, job.plan.train),
                           sums(data_.val, data_.val.count)};
  return row_of(job, job.plan, all);
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

EvalRecord Evaluator::evaluate_blocks(const Job& job) {
  const std::vector<Block> all = blocks(job.plan);
  std::vector<EvalSums> sums(all.size());
  parallel_for_index(all.size(), [&](std::size_t i) {
    auto ws = take_workspace();
    sums[i] = model_.evaluate_sums(job.params, *all[i].split, all[i].first, all[i].count, *ws);
    give_back(std::move(ws));
  });
  // Added in block order from 0, as Model::evaluate adds its chunks: the same bits.
  EvalSums parts[3];
  for (std::size_t i = 0; i < all.size(); ++i) {
    EvalSums& to = parts[all[i].part];
    to.loss += sums[i].loss;
    to.errors += sums[i].errors;
  }
  return row_of(job, job.plan, parts);
}

void Evaluator::store_locked(std::size_t index, EvalRecord row) {
  // Inline evaluation costs no time on the run's clock (the virtual one): scored at once.
  row.scored_s = options_.background ? since_clock_locked() : row.wall_s;
  results_[index] = row;
  done_[index] = true;
  if (!latest_ || *latest_ < index) latest_ = index;
  if (options_.target_error > 0.0 && row.test_error <= options_.target_error) {
    target_reached_.store(true, std::memory_order_release);
  }
}

void Evaluator::store(std::size_t index, EvalRecord row) {
  std::lock_guard lock(mu_);
  store_locked(index, std::move(row));
}

void Evaluator::submit(double wall_s, std::uint64_t iteration, std::span<const float> params,
                       bool final) {
  if (options_.background && !final) {
    std::lock_guard lock(mu_);
    // Sized and still behind (a model whose smallest sample costs more than the share): a
    // short backlog, so that rows lag by one evaluation, not by 32, and the tail stays short.
    if (queue_.size() >= (sized_on_ ? std::min(max_pending_, kSizedPending) : max_pending_)) {
      ++skipped_;
      return;
    }
  }
  auto job = std::make_shared<Job>();
  job->wall_s = wall_s;
  job->iteration = iteration;
  job->params.assign(params.begin(), params.end());
  job->final = final;
  job->for_finish = final && options_.parallel;
  job->submitted = Clock::now();
  {
    std::lock_guard lock(mu_);
    job->plan = !final && sized_on_ ? sized_ : full_;
    job->index = results_.size();
    results_.emplace_back();
    done_.push_back(false);
    if (options_.background) queue_.push_back(job);
  }
  if (options_.background) {
    cv_.notify_all();  // both threads: the idle one to score it, the catch-up one to time it
    return;
  }
  // Inline (the virtual clock): a failure is kept as a background one is, and ends the
  // evaluations, the final one included; the run's supervisor stops on failed().
  if (failed()) return;
  try {
    store(job->index, options_.parallel ? evaluate_blocks(*job) : evaluate(*job, *inline_ws_));
  } catch (...) {
    fail_current();
  }
}

void Evaluator::fail_current() {
  CaughtFailure failure;
  try {
    throw;
  } catch (const ModelError& e) {
    failure = {fmt::format("evaluating a snapshot: {}", e.what()), e.detail(),
               FailureCause::kModel};
  } catch (...) {
    failure = caught_failure("the evaluator");
  }
  {
    std::lock_guard lock(mu_);
    if (!failure_.message.empty()) return;
    failure_ = std::move(failure);
  }
  failed_.store(true, std::memory_order_release);
}

std::string Evaluator::failure() const {
  std::lock_guard lock(mu_);
  return failure_.message;
}

bool Evaluator::model_failed() const {
  return failure_cause() == FailureCause::kModel;
}

FailureCause Evaluator::failure_cause() const {
  std::lock_guard lock(mu_);
  return failure_.cause;
}

std::string Evaluator::failure_detail() const {
  std::lock_guard lock(mu_);
  return failure_.detail;
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

EvaluatorStats Evaluator::stats() const {
  std::lock_guard lock(mu_);
  return {behind_, caught_up_, sized_on_, full_, sized_, sample_cost_s_};
}

std::optional<EvalRecord> Evaluator::latest() const {
  std::lock_guard lock(mu_);
  if (!latest_) return std::nullopt;
  return results_[*latest_];
}

}  // namespace stalesgd

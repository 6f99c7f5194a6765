// The real-thread engine's server side: the step for each push, the assignments, the server
// thread (--server thread) and what the supervisor's loop sees. Workers: thread_worker.cpp.
#include "engine/thread_engine.hpp"

#include <algorithm>

#include "output/checkpoint.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

ThreadEngine::ThreadEngine(RunContext& ctx)
    : ctx_(ctx),
      o_(ctx.options),
      stream_seed_(o_.seed),
      store_(ctx.initial, 2 * static_cast<std::size_t>(ctx.options.workers) + 4),
      core_(ctx, store_, run_),
      slots_(static_cast<std::size_t>(o_.workers)) {
  delays_of_.reserve(slots_.size());
  for (int w = 0; w < o_.workers; ++w) delays_of_.emplace_back(ctx.run.delays(), w, o_.seed);

  if (ctx.run.rule().synchronous()) {
    wake_ = std::make_unique<ServerTimers>(
        slots_, store_, core_.rule(), o_.delay_mode,
        [this](const std::string& what) { fail_thread("the wake timer", what); });
  } else {
    wake_ = std::make_unique<OwnTimers>(store_);
  }
}

ThreadEngine::~ThreadEngine() = default;

void ThreadEngine::request_stop(StopReason reason) {
  if (stop_reason_ == StopReason::kNone) stop_reason_ = reason;
  supervisor_cv_.notify_all();
}

void ThreadEngine::assign(int w, EngineClock::time_point at, bool cut) {
  const auto i = static_cast<std::size_t>(w);
  WorkerSlot& slot = slots_[i];
  bool notify = false;
  {
    std::lock_guard lock(slot.mu);
    // A worker that took its cut minibatch is computing or waiting out X: interrupt it. One
    // that has not is asleep since that one's start: the new minibatch replaces it.
    const bool pending = slot.has_assignment;
    const bool interrupt = cut && !pending;
    if (interrupt) slot.cancel.store(true, std::memory_order_relaxed);
    if (!pending) slot.busy_since = at;
    slot.assigned_at = at;
    // X is drawn at the assignment, as on the virtual clock, so that both engines consume each
    // worker's delay stream alike, cut minibatches included.
    slot.assigned_x = to_duration(delays_of_[i].next(since_start(at)));
    slot.due = at + slot.assigned_x;
    const bool cut_pending = pending && !slot.released;
    slot.has_assignment = true;
    ++slot.ticket;
    notify = wake_->on_assign(w, slot, cut_pending) || interrupt;
  }
  if (notify) slot.cv.notify_one();
}

void ThreadEngine::serve(int w, std::uint64_t ticket, float loss, EngineClock::time_point pushed_at,
                         const ParameterStore::Pin& pin) {
  const auto measured_at = pushed_at;
  pushed_at = last_push_ = std::max(pushed_at, last_push_);  // records stay in time order
  if (stop_reason_ != StopReason::kNone) return;             // the run is over
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  double duration_s = 0.0;  // from the minibatch's assignment (same ticket) to the push
  {
    // A minibatch leaves the protocol's "computing" only here, under the server lock: an
    // update either cut it before (and assigned a new ticket) or sees it arrive, never neither.
    std::lock_guard slot_lock(slot.mu);
    if (slot.ticket != ticket) return;
    duration_s = std::chrono::duration<double>(measured_at - slot.assigned_at).count();
  }
  wake_->on_delivered(w);
  auto outcome = core_.on_gradient(since_start(pushed_at), w, pin.version(), loss, duration_s,
                                   slot.grad, pin.params());
  if (!outcome) {
    run_.divergence = outcome.error().message;
    request_stop(StopReason::kDiverged);
    return;
  }
  for (const auto& s : outcome->step.start) assign(s.worker, pushed_at, s.cut);
  wake_->after_step();
  if (const auto reason = supervisor_->stop_due(since_start(pushed_at), store_.version());
      reason != StopReason::kNone) {
    request_stop(reason);
  }
}

void ThreadEngine::server_main() {
  try {
    for (;;) {
      Push push;
      pushes_.pop(push);
      if (push.worker < 0) return;
      std::lock_guard lock(server_mu_);
      if (push.crashed) {
        retire(push.worker, push.pushed_at, FailureKind::kCrash);
        continue;
      }
      serve(push.worker, push.ticket, push.loss, push.pushed_at, push.pin);
    }
  } catch (const std::exception& e) {
    fail_thread("the server thread", e.what());
  } catch (...) {
    fail_thread("the server thread", "an exception that is not a std::exception");
  }
}

void ThreadEngine::stop_workers() {
  for (auto& slot : slots_) {
    {
      std::lock_guard lock(slot.mu);
      slot.stop = true;
      slot.cancel.store(true, std::memory_order_relaxed);
    }
    slot.cv.notify_all();
  }
}

StopReason ThreadEngine::wait_until(Clock::time_point deadline) {
  std::unique_lock lock(server_mu_);
  supervisor_cv_.wait_until(lock, deadline, [&] { return stop_reason_ != StopReason::kNone; });
  return stop_reason_;
}

void ThreadEngine::inspect(const Look& look) {
  std::lock_guard lock(server_mu_);
  look(store_.version(), store_.current(), &run_);
}

StopReason ThreadEngine::stop(StopReason reason) {
  std::lock_guard lock(server_mu_);
  request_stop(reason);
  return stop_reason_;
}

void ThreadEngine::save(StateWriter& out, const Look& look) {
  std::lock_guard lock(server_mu_);
  look(store_.version(), store_.current(), &run_);
  out.tag("thread");
  core_.save_server(out);
  for (auto& slot : slots_) {
    std::lock_guard slot_lock(slot.mu);
    out.u64(slot.stats.computed);
    out.f64(slot.stats.busy_s);
    out.f64(slot.stats.idle_s);
  }
}

Result<double> ThreadEngine::resume(RunSupervisor& supervisor, const std::string& payload) {
  StateReader in(payload);
  const CheckpointHeader header = load_header(in);
  if (!in.ok()) return Error{"checkpoint: " + in.error()};
  run_ = supervisor.resume(header);
  if (in.tag("thread")) core_.load_server(in);
  for (auto& slot : slots_) {
    slot.stats.computed = in.u64();
    slot.stats.busy_s = in.f64();
    slot.stats.idle_s = in.f64();
  }
  if (in.ok() && !in.at_end()) in.fail("bytes left over after the last part");
  if (!in.ok()) return Error{"checkpoint: " + in.error()};
  core_.restart();
  stream_seed_ = mix64(o_.seed ^ mix64(store_.version()));
  delays_of_.clear();
  for (int w = 0; w < o_.workers; ++w) delays_of_.emplace_back(ctx_.run.delays(), w, stream_seed_);
  return header.t;
}

double ThreadEngine::mean_staleness() {
  std::lock_guard lock(server_mu_);
  return core_.mean_staleness();
}

Result<RunRecord> ThreadEngine::run() {
  RunSupervisor supervisor(ctx_, RunSupervisor::Evaluation::kBackground);
  supervisor_ = &supervisor;
  double resumed_at = 0.0;
  if (ctx_.resume != nullptr) {
    auto t = resume(supervisor, *ctx_.resume);
    if (!t) return t.error();
    resumed_at = *t;
  }
  run_.model = ctx_.model->describe();
  run_.num_params = ctx_.model->num_params();

  std::vector<std::thread> threads;
  threads.reserve(slots_.size());
  for (int w = 0; w < o_.workers; ++w) threads.emplace_back([this, w] { worker_main(w); });
  std::thread server;
  if (o_.server == ServerPlacement::kThread) server = std::thread([this] { server_main(); });

  {
    std::lock_guard lock(start_mu_);
    // A resumed run's clock goes on from the checkpoint's time.
    resumed_from_ = EngineClock::now();
    start_ = resumed_from_ - to_duration(resumed_at);
    started_ = true;
  }
  start_cv_.notify_all();
  {
    std::lock_guard lock(server_mu_);
    // Now, not start_: a resumed run's first minibatches take their X from here too.
    for (const auto& s : core_.begin()) assign(s.worker, resumed_from_, false);
    wake_->after_step();
  }

  std::pair<StopReason, double> ended;
  try {
    ended = supervisor.supervise(*this, start_);
  } catch (const std::exception& e) {
    // Every thread is still to be stopped and joined: end the run as any thread's exception.
    fail_thread("the supervisor", e.what());
    ended = {stop(StopReason::kFailed), since_start(EngineClock::now())};
  }
  auto [reason, wall_s] = ended;
  // The run is over: pushes are ignored from now on, so the record no longer changes.
  stop_workers();
  for (auto& t : threads) t.join();
  if (server.joinable()) {
    pushes_.push(Push{});  // the stop sentinel
    server.join();
  }
  wake_->stop();
  if (!thread_failure_.empty()) {  // every thread is joined: no lock needed
    reason = StopReason::kFailed;
    run_.stop_message = thread_failure_;
  }

  for (int w = 0; w < o_.workers; ++w) {
    WorkerRecord rec = slots_[static_cast<std::size_t>(w)].stats;
    core_.count(w, rec);
    run_.workers.push_back(rec);
  }
  run_.param_buffers = store_.buffers();
  return supervisor.finish(std::move(run_), reason, wall_s, store_.version(), store_.current());
}

Result<RunRecord> train_threads(RunContext& ctx) {
  ThreadEngine engine(ctx);
  return engine.run();
}

}  // namespace stalesgd

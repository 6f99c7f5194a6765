// LockedServer: the shared server's step, assignments, life cycle and what the supervisor's
// loop sees (the design: locked_server.hpp). Failed workers: locked_server_failures.cpp.
#include "engine/locked_server.hpp"

#include <algorithm>
#include <exception>

#include "stalesgd/util/seed.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

LockedServer::LockedServer(RunContext& ctx, ServerTransport& transport, std::size_t buffers,
                           std::string_view engine)
    : ctx_(ctx),
      o_(ctx.options),
      transport_(transport),
      engine_(engine),
      stream_seed_(ctx.options.seed),
      store_(ctx.initial, buffers),
      core_(ctx, store_, run_),
      ticket_(static_cast<std::size_t>(ctx.options.workers), 0),
      assigned_at_(static_cast<std::size_t>(ctx.options.workers)),
      x_(static_cast<std::size_t>(ctx.options.workers)),
      attempts_(static_cast<std::size_t>(ctx.options.workers)) {
  seed_delays(o_.seed);
}

void LockedServer::seed_delays(std::uint64_t seed) {
  delays_of_.clear();
  delays_of_.reserve(ticket_.size());
  for (int w = 0; w < o_.workers; ++w) delays_of_.emplace_back(ctx_.run.delays(), w, seed);
}

Result<double> LockedServer::prepare(RunSupervisor& supervisor) {
  supervisor_ = &supervisor;
  double resumed_at = 0.0;
  if (ctx_.resume != nullptr) {
    auto resumed = supervisor.resume(*ctx_.resume, engine_, [&](StateReader& in) {
      core_.load_server(in);
      transport_.load(in);
    });
    if (!resumed) return resumed.error();
    run_ = std::move(resumed->rows);
    resumed_at = resumed->t;
    core_.restart();
    stream_seed_ = mix64(o_.seed ^ mix64(store_.version()));
    seed_delays(stream_seed_);  // fresh delay streams from here
  }
  run_.model = ctx_.model->describe();
  run_.num_params = ctx_.model->num_params();
  return resumed_at;
}

void LockedServer::begin(Clock::time_point start, Clock::time_point now) {
  std::lock_guard lock(mu_);
  start_ = start;
  last_push_ = now;
  // `now`, not start: a resumed run's first minibatches take their X from here too.
  for (const auto& s : core_.begin()) assign(s.worker, now, false);
  transport_.after_step();
}

std::pair<StopReason, double> LockedServer::supervise() {
  try {
    return supervisor_->supervise(*this, start_);
  } catch (...) {
    // Every thread is still to be stopped and joined: end the run as any thread's exception.
    fail_thread(caught_failure("the supervisor"));
    return {stop(StopReason::kFailed), since_start(Clock::now())};
  }
}

void LockedServer::request_stop(StopReason reason) {
  if (stop_reason_ == StopReason::kNone) stop_reason_ = reason;
  supervisor_cv_.notify_all();
}

void LockedServer::assign(int w, Clock::time_point at, bool cut) {
  const auto i = ix(w);
  // X is drawn at the assignment, in every engine alike, so that each worker's delay stream
  // is consumed the same way, cut minibatches included.
  attempts_[i] = draw_attempts(delays_of_[i], since_start(at), core_.protocol().budget(w));
  x_[i] = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(attempts_[i].delay_s));
  assigned_at_[i] = at;
  transport_.assign({w, ++ticket_[i], at, x_[i], cut});
}

void LockedServer::carry_out(const ServerCore::Outcome& outcome, Clock::time_point at) {
  for (const auto& s : outcome.step.start) assign(s.worker, at, s.cut);
  transport_.after_step();
  if (const auto reason = supervisor_->stop_due(since_start(at), store_.version());
      reason != StopReason::kNone) {
    request_stop(reason);
  }
}

void LockedServer::serve(const Push& push) {
  const int w = push.worker;
  const auto at = last_push_ = std::max(push.at, last_push_);  // records stay in time order
  if (stopping()) return;                                      // the run is over
  // A minibatch leaves the protocol's "computing" only here, under the lock: an update either
  // cut it before (and gave a new ticket) or sees it arrive, never neither.
  if (push.ticket != ticket_[ix(w)]) return;
  transport_.delivered(w);
  // From the assignment to the push's arrival, as measured (before the clamp above); under a
  // time limit from the start of its last attempt.
  const Attempts& a = attempts_[ix(w)];
  const double duration_s =
      std::chrono::duration<double>(push.at - assigned_at_[ix(w)]).count() - a.offset_s;
  auto outcome = core_.on_gradient(since_start(at), w, push.version, push.loss, duration_s,
                                   push.grad, push.params, a.attempts, a.abandoned);
  if (!outcome) {
    run_.divergence = outcome.error().message;
    request_stop(StopReason::kDiverged);
    return;
  }
  carry_out(*outcome, at);
}

void LockedServer::fail_thread(const CaughtFailure& failure) {
  if (!failure.detail.empty()) ctx_.logger().debug("{}\n{}", failure.message, failure.detail);
  std::lock_guard lock(mu_);
  if (thread_failure_.empty()) {
    thread_failure_ = failure.message;
    failure_cause_ = failure.cause;
  }
  request_stop(StopReason::kFailed);
}

StopReason LockedServer::wait_until(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  supervisor_cv_.wait_until(lock, deadline, [&] { return stopping(); });
  return stop_reason_;
}

void LockedServer::inspect(const Look& look) {
  std::lock_guard lock(mu_);
  look(store_.version(), store_.current(), &run_);
}

StopReason LockedServer::stop(StopReason reason) {
  std::lock_guard lock(mu_);
  request_stop(reason);
  transport_.stopped();
  return stop_reason_;
}

double LockedServer::mean_staleness() {
  std::lock_guard lock(mu_);
  return core_.mean_staleness();
}

void LockedServer::save(StateWriter& out, const Look& look) {
  std::lock_guard lock(mu_);
  look(store_.version(), store_.current(), &run_);
  out.tag(engine_);
  core_.save_server(out);
  transport_.save(out);
}

Result<RunRecord> LockedServer::finish(StopReason reason, double wall_s,
                                       std::vector<WorkerRecord> measured) {
  std::lock_guard lock(mu_);  // every other thread is joined; taken for the contracts' sake
  if (!thread_failure_.empty()) {
    reason = StopReason::kFailed;
    run_.stop_message = thread_failure_;
    mark_cause(run_, failure_cause_);
  }
  for (int w = 0; w < o_.workers; ++w) {
    WorkerRecord rec = measured[ix(w)];
    core_.count(w, rec);
    run_.workers.push_back(rec);
  }
  run_.param_buffers = store_.buffers();
  return supervisor_->finish(std::move(run_), reason, wall_s, store_.version(), store_.current());
}

}  // namespace stalesgd

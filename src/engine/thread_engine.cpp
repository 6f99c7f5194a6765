// The real-thread engine as the LockedServer's transport: assignments into the worker slots,
// the server thread (--server thread) and the run's life cycle. Workers: thread_worker.cpp.
#include "engine/thread_engine.hpp"
#include "util/fault_point.hpp"
#include "util/state_stream.hpp"

#include <algorithm>

namespace stalesgd {

ThreadEngine::ThreadEngine(RunContext& ctx)
    : ctx_(ctx),
      o_(ctx.options),
      server_(ctx, *this, 2 * static_cast<std::size_t>(ctx.options.workers) + 4, "thread"),
      slots_(static_cast<std::size_t>(o_.workers)) {
  // A rule whose updates leave work in flight running (rennala's discard, malenia) needs each
  // worker's version pinned at its assignment, as the asynchronous rules' own timers do.
  if (server_.protocol().cuts_every_update()) {
    wake_ = std::make_unique<ServerTimers>(
        slots_, server_.store(), server_.protocol(), o_.delay_mode,
        [this](const CaughtFailure& failure) { server_.fail_thread(failure); });
  } else {
    wake_ = std::make_unique<OwnTimers>(server_.store());
  }
}

ThreadEngine::~ThreadEngine() = default;

void ThreadEngine::assign(const Assignment& a) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(a.worker)];
  bool notify = false;
  {
    std::lock_guard lock(slot.mu);
    // A worker that took its cut minibatch is computing or waiting out X: interrupt it. One
    // that has not is asleep since that one's start: the new minibatch replaces it.
    const bool pending = slot.has_assignment;
    const bool interrupt = a.cut && !pending;
    if (interrupt) slot.cancel.store(true, std::memory_order_relaxed);
    if (!pending) slot.busy_since = a.at;
    slot.assigned_at = a.at;
    slot.assigned_x = a.x;
    slot.due = a.at + a.x;
    const bool cut_pending = pending && !slot.released;
    slot.has_assignment = true;
    slot.ticket = a.ticket;
    notify = wake_->on_assign(a.worker, slot, cut_pending) || interrupt;
  }
  if (notify) slot.cv.notify_one();
}

void ThreadEngine::retired(int w) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  {
    // A new ticket: a push of its minibatch in flight, should one still come, is dropped.
    std::lock_guard slot_lock(slot.mu);
    ++slot.ticket;
    slot.has_assignment = false;
    slot.released = false;
    slot.assigned = ParameterStore::Pin{};
  }
  wake_->on_retired(w);
}

std::optional<ServerTransport::Clock::time_point> ThreadEngine::due(int w) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  std::lock_guard slot_lock(slot.mu);
  // A minibatch the server holds back (a synchronous rule's beyond the round's cut) is not
  // expected; any other is, by the end of X (or its late release) plus the worker's gradient
  // time.
  if (slot.has_assignment && !slot.released) return std::nullopt;
  return slot.due + to_duration(std::max(0.0, slot.lead_s));
}

void ThreadEngine::stopped() {
  for (auto& slot : slots_) {
    {
      std::lock_guard lock(slot.mu);
      slot.stop = true;
      slot.cancel.store(true, std::memory_order_relaxed);
    }
    slot.cv.notify_all();
  }
}

void ThreadEngine::save(StateWriter& out) {
  for (auto& slot : slots_) {
    std::lock_guard slot_lock(slot.mu);
    out.u64(slot.stats.computed);
    out.f64(slot.stats.busy_s);
    out.f64(slot.stats.idle_s);
  }
}

void ThreadEngine::load(StateReader& in) {
  for (auto& slot : slots_) {
    slot.stats.computed = in.u64();
    slot.stats.busy_s = in.f64();
    slot.stats.idle_s = in.f64();
  }
}

LockedServer::Push ThreadEngine::push_of(int w, std::uint64_t ticket, float loss,
                                         EngineClock::time_point at,
                                         const ParameterStore::Pin& pin) {
  // The server reads slot.grad while this worker waits for its next assignment, which only the
  // server can give.
  return {
      w, ticket, loss, at, pin.version(), pin.params(), slots_[static_cast<std::size_t>(w)].grad};
}

void ThreadEngine::server_main() {
  try {
    for (;;) {
      Push push;
      pushes_.pop(push);
      if (push.worker < 0) return;
      std::lock_guard lock(server_.mutex());
      if (push.crashed) {
        server_.retire(push.worker, push.pushed_at, FailureKind::kCrash);
        continue;
      }
      server_.serve(push_of(push.worker, push.ticket, push.loss, push.pushed_at, push.pin));
    }
  } catch (...) {
    server_.fail_thread(caught_failure("the server thread"));
  }
}

Result<RunRecord> ThreadEngine::run() {
  RunSupervisor supervisor(ctx_, RunSupervisor::Evaluation::kBackground);
  const auto resumed_at = server_.prepare(supervisor);
  if (!resumed_at) return resumed_at.error();

  std::vector<std::thread> threads;
  threads.reserve(slots_.size());
  std::thread server;
  try {
    for (int w = 0; w < o_.workers; ++w) {
      fault_point("thread");
      threads.emplace_back([this, w] { worker_main(w); });
    }
    if (o_.server == ServerPlacement::kThread) server = std::thread([this] { server_main(); });
  } catch (...) {
    // A thread the system would not start: the run ends failed before its first update, the
    // threads started so far stopped and joined below like any run's.
    server_.fail_thread(caught_failure("starting the worker threads"));
  }

  {
    std::lock_guard lock(start_mu_);
    // A resumed run's clock goes on from the checkpoint's time.
    resumed_from_ = EngineClock::now();
    start_ = resumed_from_ - to_duration(*resumed_at);
    started_ = true;
  }
  start_cv_.notify_all();
  server_.begin(start_, resumed_from_);

  // The run is over when this returns: stopped() told every worker, pushes are dropped from now
  // on, so the record no longer changes.
  const auto [reason, wall_s] = server_.supervise();
  for (auto& t : threads) t.join();
  if (server.joinable()) {
    pushes_.push(Push{});  // the stop sentinel
    server.join();
  }
  wake_->stop();

  std::vector<WorkerRecord> measured;
  for (auto& slot : slots_) measured.push_back(slot.stats);
  return server_.finish(reason, wall_s, std::move(measured));
}

Result<RunRecord> train_threads(RunContext& ctx) {
  ThreadEngine engine(ctx);
  return engine.run();
}

}  // namespace stalesgd

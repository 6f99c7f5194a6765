// The real-thread engine's failed workers and failed threads (docs/rules.md, "Failed workers"):
// a worker made to crash or hang, the server retiring a failed worker, the supervisor's watch
// for hung ones and its account of who is stuck, and an exception in any thread.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/thread_engine.hpp"

namespace stalesgd {

void ThreadEngine::fail_worker(int w, FailureKind how, EngineClock::time_point at) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  slot.pin.release();  // a failed worker holds no version
  if (how == FailureKind::kHang) {
    // It stops responding: no gradient, no word to the server, until the run ends.
    std::unique_lock lock(slot.mu);
    slot.cv.wait(lock, [&] { return slot.stop; });
    return;
  }
  // A crash: the thread ends (the process does not), and the server hears of it at once, as
  // it would from a dropped connection.
  if (o_.server == ServerPlacement::kThread) {
    pushes_.push(Push{w, 0, 0.0f, at, {}, true});
    return;
  }
  std::lock_guard lock(server_mu_);
  retire(w, at, FailureKind::kCrash);
}

void ThreadEngine::retire(int w, EngineClock::time_point at, FailureKind how) {
  at = last_push_ = std::max(at, last_push_);  // records stay in time order
  if (stop_reason_ != StopReason::kNone || core_.protocol().retired(w)) return;
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
  auto outcome = core_.retire(since_start(at), w, how);
  if (!outcome) {
    run_.stop_message = outcome.error().message;
    request_stop(StopReason::kWorkersFailed);
    return;
  }
  for (const auto& s : outcome->step.start) assign(s.worker, at, s.cut);
  wake_->after_step();
  if (const auto reason = supervisor_->stop_due(since_start(at), store_.version());
      reason != StopReason::kNone) {
    request_stop(reason);
  }
}

void ThreadEngine::watch(Clock::time_point now) {
  const auto timeout = to_duration(o_.worker_timeout_s);
  std::lock_guard lock(server_mu_);
  for (int w = 0; w < o_.workers && stop_reason_ == StopReason::kNone; ++w) {
    if (!core_.protocol().computing(w)) continue;  // waiting, or retired
    WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
    EngineClock::time_point due;
    {
      std::lock_guard slot_lock(slot.mu);
      // A minibatch the server holds back (a synchronous rule's beyond the round's cut) is
      // not expected; any other is, by the end of X (or its late release) plus the worker's
      // gradient time.
      if (slot.has_assignment && !slot.released) continue;
      due = slot.due + to_duration(std::max(0.0, slot.lead_s));
    }
    if (now - due >= timeout) retire(w, now, FailureKind::kHang);
  }
}

std::string ThreadEngine::stuck() {
  const auto now = EngineClock::now();
  std::lock_guard lock(server_mu_);
  struct Busy {
    int worker;
    EngineClock::time_point assigned_at;
    EngineClock::time_point due;
  };
  std::vector<Busy> busy;
  int waiting = 0;
  for (int w = 0; w < o_.workers; ++w) {
    if (core_.protocol().retired(w)) continue;
    if (!core_.protocol().computing(w)) {
      ++waiting;
      continue;
    }
    WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
    std::lock_guard slot_lock(slot.mu);
    busy.push_back({w, slot.assigned_at, slot.assigned_at + slot.assigned_x});
  }
  std::sort(busy.begin(), busy.end(),
            [](const Busy& a, const Busy& b) { return a.assigned_at < b.assigned_at; });
  const auto seconds = [](EngineClock::duration d) {
    return std::chrono::duration<double>(d).count();
  };
  std::string out = busy.empty() ? "no worker has a minibatch in flight" : "the server waits for ";
  for (std::size_t i = 0; i < busy.size() && i < 4; ++i) {
    const Busy& b = busy[i];
    if (i > 0) out += ", ";
    out += fmt::format("w{} (minibatch assigned {:.1f} s ago, {} {:.1f} s)", b.worker,
                       seconds(now - b.assigned_at), now < b.due ? "due in" : "past its end by",
                       std::abs(seconds(b.due - now)));
  }
  if (busy.size() > 4) out += fmt::format(" and {} more", busy.size() - 4);
  if (waiting > 0)
    out += fmt::format("; {} of {} workers wait for the update", waiting, o_.workers);
  return out;
}

void ThreadEngine::fail_thread(std::string_view thread, std::string_view what) {
  std::lock_guard lock(server_mu_);
  if (thread_failure_.empty())
    thread_failure_ = fmt::format("internal error in {}: {}", thread, what);
  request_stop(StopReason::kFailed);
}

}  // namespace stalesgd

// HogwildEngine's failed workers: a planned crash or hang, and the supervisor's search for
// hung workers (docs/rules.md, "Failed workers").
#include <fmt/format.h>

#include "engine/hogwild_engine.hpp"

namespace stalesgd {

void HogwildEngine::fail_worker(Worker& me, FailureKind how) {
  if (how == FailureKind::kHang) {
    // It stops responding, its minibatch's end stays where it was: watch() finds it.
    std::unique_lock lock(stop_mu_);
    stop_cv_.wait(lock, [&] { return reason_ != StopReason::kNone; });
    return;
  }
  me.due_ns.store(kNoDue, std::memory_order_relaxed);
  {
    std::lock_guard lock(me.mu);
    // A resumed run's worker that had crashed before the checkpoint keeps its first time.
    if (!me.stats.failed) me.stats.failed_at_s = since_start(Clock::now());
    me.stats.failed = true;
    me.stats.failure = to_string(how);
  }
  lose_worker();
}

void HogwildEngine::watch(Clock::time_point now) {
  const auto timeout = static_cast<std::int64_t>(o_.worker_timeout_s * 1e9);
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    const std::int64_t due = workers_[w]->due_ns.load(std::memory_order_relaxed);
    if (hang_found_s_[w] >= 0.0 || due == kNoDue || ns(now) - due < timeout) continue;
    hang_found_s_[w] = since_start(now);
    lose_worker();
  }
}

std::string HogwildEngine::stuck() {
  const std::int64_t now = ns(Clock::now());
  std::string out;
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    const std::int64_t due = workers_[w]->due_ns.load(std::memory_order_relaxed);
    if (due == kNoDue || now <= due) continue;
    out += fmt::format("{}w{} (its minibatch ended {:.1f} s ago)", out.empty() ? "" : ", ", w,
                       static_cast<double>(now - due) * 1e-9);
  }
  return out.empty() ? out : "no update from " + out;
}

}  // namespace stalesgd

// LockedServer's failed workers (docs/rules.md, "Failed workers"): retiring one, the
// supervisor's watch for hung ones and its account of who the server waits for.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "engine/locked_server.hpp"

namespace stalesgd {

void LockedServer::retire(int w, Clock::time_point at, FailureKind how) {
  at = last_push_ = std::max(at, last_push_);  // records stay in time order
  if (stopping() || core_.protocol().retired(w)) return;
  ++ticket_[ix(w)];  // a push of its minibatch in flight, should one still come, is dropped
  transport_.retired(w);
  auto outcome = core_.retire(since_start(at), w, how);
  if (!outcome) {
    run_.stop_message = outcome.error().message;
    request_stop(StopReason::kWorkersFailed);
    return;
  }
  carry_out(*outcome, at);
}

void LockedServer::watch(Clock::time_point now) {
  const auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o_.worker_timeout_s));
  std::lock_guard lock(mu_);
  for (int w = 0; w < o_.workers && !stopping(); ++w) {
    if (!core_.protocol().computing(w)) continue;  // waiting, or retired
    const auto due = transport_.due(w);            // nullopt: held back, not expected
    if (due && now - *due >= timeout) retire(w, now, FailureKind::kHang);
  }
}

std::string LockedServer::stuck() {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  struct Busy {
    int worker;
    Clock::time_point assigned_at;
    Clock::time_point due;
  };
  std::vector<Busy> busy;
  int waiting = 0;
  for (int w = 0; w < o_.workers; ++w) {
    if (core_.protocol().retired(w)) continue;
    if (!core_.protocol().computing(w)) {
      ++waiting;
      continue;
    }
    busy.push_back({w, assigned_at_[ix(w)], assigned_at_[ix(w)] + x_[ix(w)]});
  }
  std::sort(busy.begin(), busy.end(),
            [](const Busy& a, const Busy& b) { return a.assigned_at < b.assigned_at; });
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::string out = busy.empty() ? "no worker has a minibatch in flight" : "the server waits for ";
  for (std::size_t i = 0; i < busy.size() && i < 4; ++i) {
    const Busy& b = busy[i];
    if (i > 0) out += ", ";
    out += fmt::format("w{}{} (minibatch assigned {:.1f} s ago, {} {:.1f} s)", b.worker,
                       transport_.where(b.worker), seconds(now - b.assigned_at),
                       now < b.due ? "due in" : "past its end by", std::abs(seconds(b.due - now)));
  }
  if (busy.size() > 4) out += fmt::format(" and {} more", busy.size() - 4);
  if (waiting > 0)
    out += fmt::format("; {} of {} workers wait for the update", waiting, o_.workers);
  return out;
}

}  // namespace stalesgd

// StallWatchdog: ends a real-clock run that makes no progress. If the server's version has not
// changed for --stall-timeout, the run stops with a message naming who the server waits for,
// instead of hanging (docs/rules.md, "Failed workers"). The RunSupervisor's loop feeds it.
//
// Thread safety: not thread-safe; the supervisor's thread alone uses it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace stalesgd {

class StallWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  // timeout_s 0: off. The run starts at `start` with version 0.
  StallWatchdog(double timeout_s, Clock::time_point start);

  // The server is at `version` at `now`; true once it has stayed there for the timeout.
  bool stalled(Clock::time_point now, std::uint64_t version);
  // The stop's one line: how long nothing happened, where the server is, and `stuck` (the
  // engine's account of the workers it waits for; may be empty).
  std::string message(const std::string& stuck) const;

 private:
  double timeout_s_;
  std::uint64_t version_ = 0;
  Clock::time_point since_;  // when version_ was first seen
  double quiet_s_ = 0.0;     // how long it had not changed when stalled() last said true
};

}  // namespace stalesgd

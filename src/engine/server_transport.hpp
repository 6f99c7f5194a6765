// ServerTransport: what an engine with a server (threads, MPI ranks) does to carry out the
// LockedServer's decisions: hand a worker its next minibatch, interrupt a cut one, tell every
// worker the run is over, and say when a worker's gradient is due. The server decides; the
// transport only moves (docs/architecture.md, "One server, two transports").
//
// Thread safety: every method is called by the LockedServer under its lock (REQUIRES(server
// lock)); an implementation may take its own locks below it (the thread engine a worker slot's).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "util/state_stream.hpp"

namespace stalesgd {

class ServerTransport {
 public:
  using Clock = std::chrono::steady_clock;

  // Worker `worker`'s next minibatch, decided by the server at `at`, with delay `x` drawn there.
  struct Assignment {
    int worker = 0;
    std::uint64_t ticket = 0;  // numbers the worker's minibatches from 1; a push carries it back
    Clock::time_point at;
    Clock::duration x{};
    bool cut = false;  // it replaces one in flight that an update cut: interrupt that one
  };

  virtual ~ServerTransport() = default;
  virtual void assign(const Assignment& a) = 0;
  // Every assignment of one server step is made.
  virtual void after_step() {}
  // Worker w's minibatch reached the server.
  virtual void delivered(int /*w*/) {}
  // Worker w failed: it gets nothing more; forget its minibatch in flight.
  virtual void retired(int w) = 0;
  // When worker w's gradient should have reached the server at the latest, the
  // --worker-timeout aside; nullopt while it is not expected (held back by the server).
  virtual std::optional<Clock::time_point> due(int w) = 0;
  // The run is over: tell every worker; no assignment follows.
  virtual void stopped() = 0;
  // Where worker w runs, for messages: "" for a thread, " on rank 2 (host b)" for a rank.
  virtual std::string where(int /*w*/) const { return {}; }
  // The transport's part of a checkpoint, after the server's.
  virtual void save(StateWriter& /*out*/) {}
  virtual void load(StateReader& /*in*/) {}
};

}  // namespace stalesgd

// Stale-synchronous parallel (Ho et al. 2013, "More effective distributed ML via a stale
// synchronous parallel parameter server"; docs/rules.md, "SSP"): the server applies every
// gradient as it arrives (K = 1, as async), but a worker may start a minibatch only while it has
// pushed at most s more gradients than the slowest live worker; otherwise the protocol holds it
// idle until the slowest catches up. So at every update the pusher's count is at most s + 1
// above the slowest live worker's; s = 0 is lock-step, a large s is async.
#pragma once

#include <cstdint>
#include <vector>

#include "stalesgd/rules/rule.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class Ssp final : public Rule {
 public:
  Ssp(int workers, std::int64_t staleness_bound);
  std::string_view name() const override { return "ssp"; }
  bool synchronous() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  Decision on_retire(int worker, int live) override;
  bool may_start(int worker) const override;
  // The counts and who is live: a resumed run keeps its workers' distance from the slowest.
  void save_state(RuleState& out) const override;
  void load_state(RuleState& in) override;

  std::uint64_t pushed(int worker) const { return pushed_[static_cast<std::size_t>(worker)]; }
  // The slowest live worker's count.
  std::uint64_t slowest() const { return slowest_; }

 private:
  void find_slowest();

  std::uint64_t bound_;
  std::vector<std::uint64_t> pushed_;  // gradients each worker delivered, since the run began
  std::vector<bool> live_;             // not failed
  std::uint64_t slowest_ = 0;          // min of pushed_ over the live workers
};

}  // namespace stalesgd

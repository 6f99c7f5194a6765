// k-batch-sync: all workers start on w_j; the first K minibatch gradients, from any workers (a
// fast worker may give several, each on w_j), make the update; work in flight is cancelled and
// every worker restarts on w_{j+1}. Staleness is always 0. Dutta et al. 2018, §3 (K-batch-sync).
// Rennala SGD (rennala.cpp) is the same machine without the cancelling.
#pragma once

#include <string>
#include <utility>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class KBatchSync final : public Rule {
 public:
  KBatchSync(int workers, int k, std::string name = "k-batch-sync", bool cancel = true)
      : Rule(workers, k), name_(std::move(name)), cancel_(cancel) {}
  std::string_view name() const override { return name_; }
  bool synchronous() const override { return true; }
  Decision on_gradient(const Arrival& arrival) override;
  bool cuts_in_flight() const override { return cancel_; }

 private:
  std::string name_;
  bool cancel_;  // cut the work in flight at an update
};

}  // namespace stalesgd

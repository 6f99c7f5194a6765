#include "rules/k_batch_sync.hpp"

namespace stalesgd {

Decision KBatchSync::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kContinue;  // another minibatch on the same w_j
  if (a.computed_on != a.current) {
    d.accept = false;  // computed on an earlier version: cancelled work that raced the update
    return d;
  }
  if (++pending_ >= k_) {
    d.apply = true;
    d.cancel_in_flight = true;
    pending_ = 0;
  }
  return d;
}

}  // namespace stalesgd

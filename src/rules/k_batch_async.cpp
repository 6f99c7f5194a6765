#include "rules/k_batch_async.hpp"

namespace stalesgd {

Decision KBatchAsync::on_gradient(const Arrival&) {
  Decision d;
  d.next = AfterPush::kContinue;
  if (++pending_ >= k_) {
    d.apply = true;
    pending_ = 0;
  }
  return d;
}

}  // namespace stalesgd

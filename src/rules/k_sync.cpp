#include "rules/k_sync.hpp"

#include <stdexcept>
#include <utility>

namespace stalesgd {

KSync::KSync(int workers, int k, std::string name)
    : Rule(workers, k), name_(std::move(name)), seen_(static_cast<std::size_t>(workers), false) {}

Decision KSync::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kWait;
  // A gradient from an earlier round slipped through just before its cancellation: discard.
  if (a.computed_on != a.current) {
    d.accept = false;
    return d;
  }
  if (seen_[static_cast<std::size_t>(a.worker)]) {
    // The pusher waits for the update, so a second gradient in one round is an engine bug.
    throw std::logic_error("k-sync: worker " + std::to_string(a.worker) +
                           " pushed twice in one round");
  }
  seen_[static_cast<std::size_t>(a.worker)] = true;
  if (++pending_ >= k_) {
    d.apply = true;
    d.cancel_in_flight = true;
    pending_ = 0;
    seen_.assign(seen_.size(), false);
  }
  return d;
}

}  // namespace stalesgd

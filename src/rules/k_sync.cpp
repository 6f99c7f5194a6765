#include "rules/k_sync.hpp"

#include <stdexcept>
#include <utility>

namespace stalesgd {

KSync::KSync(int workers, int k, std::string name, bool k_is_live)
    : Rule(workers, k),
      name_(std::move(name)),
      k_is_live_(k_is_live),
      live_(workers),
      seen_(static_cast<std::size_t>(workers), false) {}

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
    if (k_is_live_) {  // the rounds after failures (on_retire)
      k_ = live_;
      failed_in_round_ = 0;
    }
  }
  return d;
}

// sync waits for every live worker (docs/rules.md, "Failed workers"): K becomes the live count,
// plus, for the round under way, the failed workers whose gradient it already holds (they
// count, and every live worker is still awaited). A round that holds a gradient from each is
// complete now.
Decision KSync::on_retire(int worker, int live) {
  Decision d;
  if (!k_is_live_) return d;
  live_ = live;
  if (seen_[static_cast<std::size_t>(worker)]) ++failed_in_round_;
  k_ = live_ + failed_in_round_;
  if (pending_ > 0 && pending_ >= k_) {
    d.apply = true;
    d.cancel_in_flight = true;
    pending_ = 0;
    seen_.assign(seen_.size(), false);
    k_ = live_;
    failed_in_round_ = 0;
  }
  return d;
}

void KSync::save(StateWriter& out) const {
  Rule::save(out);
  out.values(std::vector<std::uint8_t>(seen_.begin(), seen_.end()));
}

void KSync::load(StateReader& in) {
  Rule::load(in);
  const auto seen = in.values<std::uint8_t>(static_cast<std::int64_t>(seen_.size()));
  if (in.ok()) seen_.assign(seen.begin(), seen.end());
}

void KSync::clear_round() {
  Rule::clear_round();
  seen_.assign(seen_.size(), false);
}

}  // namespace stalesgd

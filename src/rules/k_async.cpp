#include "rules/k_async.hpp"

#include <stdexcept>
#include <utility>

namespace stalesgd {

KAsync::KAsync(int workers, int k, std::string name)
    : Rule(workers, k), name_(std::move(name)), seen_(static_cast<std::size_t>(workers), false) {}

Decision KAsync::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kWait;
  if (seen_[static_cast<std::size_t>(a.worker)]) {
    throw std::logic_error("k-async: worker " + std::to_string(a.worker) +
                           " pushed twice in one round");
  }
  seen_[static_cast<std::size_t>(a.worker)] = true;
  if (++pending_ >= k_) {
    d.apply = true;
    pending_ = 0;
    seen_.assign(seen_.size(), false);
  }
  return d;
}

void KAsync::save(StateWriter& out) const {
  Rule::save(out);
  out.values(std::vector<std::uint8_t>(seen_.begin(), seen_.end()));
}

void KAsync::load(StateReader& in) {
  Rule::load(in);
  const auto seen = in.values<std::uint8_t>(static_cast<std::int64_t>(seen_.size()));
  if (in.ok()) seen_.assign(seen.begin(), seen.end());
}

void KAsync::clear_round() {
  Rule::clear_round();
  seen_.assign(seen_.size(), false);
}

}  // namespace stalesgd

// Rule: the state every rule shares (K and the round's count), saved in checkpoints.
#include "stalesgd/rules/rule.hpp"
#include "util/state_stream.hpp"

#include <algorithm>

namespace stalesgd {

void Rule::save(StateWriter& out) const {
  out.tag("rule");
  out.i64(k_);
  out.i64(pending_);
}

void Rule::load(StateReader& in) {
  if (!in.tag("rule")) return;
  const std::int64_t k = in.i64();
  const std::int64_t pending = in.i64();
  if (!in.ok()) return;
  // K is at most P, or the K the rule was made with (rennala's and malenia's S may exceed P).
  if (k < 1 || k > std::max(workers_, k_) || pending < 0 || pending > most_pending()) {
    in.fail("K or the round's count out of range for this rule");
    return;
  }
  k_ = static_cast<int>(k);
  pending_ = static_cast<int>(pending);
}

}  // namespace stalesgd

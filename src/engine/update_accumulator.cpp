// UpdateAccumulator: the round sum and the update w - sum / K, in Eigen.
#include "engine/update_accumulator.hpp"
#include "util/state_stream.hpp"

#include <Eigen/Core>

namespace stalesgd {
namespace {
using Vec = Eigen::Map<Eigen::VectorXf>;
using ConstVec = Eigen::Map<const Eigen::VectorXf>;

// The trained head of a vector of n entries whose last `state` are state.
Eigen::Index head(std::size_t n, std::size_t state) {
  return static_cast<Eigen::Index>(n - state);
}
Eigen::Index tail(std::size_t state) {
  return static_cast<Eigen::Index>(state);
}
}  // namespace

void UpdateAccumulator::add(std::span<const float> g, float lr) {
  Vec sum(sum_.data(), static_cast<Eigen::Index>(sum_.size()));
  ConstVec grad(g.data(), static_cast<Eigen::Index>(g.size()));
  const auto h = head(g.size(), state_);
  const auto t = tail(state_);
  if (count_ == 0) {
    sum.head(h).noalias() = lr * grad.head(h);
    sum.tail(t) = grad.tail(t);
  } else {
    sum.head(h).noalias() += lr * grad.head(h);
    sum.tail(t) += grad.tail(t);
  }
  ++count_;
}

void UpdateAccumulator::apply_single(std::span<const float> w, std::span<const float> g, float lr,
                                     std::span<float> out, std::size_t state) {
  ConstVec cur(w.data(), static_cast<Eigen::Index>(w.size()));
  ConstVec grad(g.data(), static_cast<Eigen::Index>(g.size()));
  Vec next(out.data(), static_cast<Eigen::Index>(out.size()));
  const auto h = head(w.size(), state);
  const auto t = tail(state);
  next.head(h) = cur.head(h) - lr * grad.head(h);
  next.tail(t) = cur.tail(t) - grad.tail(t);
}

void UpdateAccumulator::add_and_apply(std::span<const float> g, float lr, std::span<const float> w,
                                      std::span<float> out, double divisor) {
  if (divisor > 0.0 && divisor != count_ + 1) {  // a rule's own divisor: not the fused mean
    add(g, lr);
    apply(w, out, divisor);
    return;
  }
  if (count_ == 0) {
    // sum_ still holds the last round's (add() overwrites it lazily): it must not be read.
    apply_single(w, g, lr, out, state_);
    return;
  }
  ConstVec sum(sum_.data(), static_cast<Eigen::Index>(sum_.size()));
  ConstVec grad(g.data(), static_cast<Eigen::Index>(g.size()));
  ConstVec cur(w.data(), static_cast<Eigen::Index>(w.size()));
  Vec next(out.data(), static_cast<Eigen::Index>(out.size()));
  const float inv = 1.0f / static_cast<float>(count_ + 1);
  const auto h = head(w.size(), state_);
  const auto t = tail(state_);
  next.head(h) = cur.head(h) - (sum.head(h) + lr * grad.head(h)) * inv;
  next.tail(t) = cur.tail(t) - (sum.tail(t) + grad.tail(t)) * inv;
  count_ = 0;
}

void UpdateAccumulator::save(StateWriter& out) const {
  out.tag("accumulator");
  out.i64(count_);
  if (count_ > 0) out.values(sum_);
}

void UpdateAccumulator::load(StateReader& in) {
  if (!in.tag("accumulator")) return;
  const std::int64_t count = in.i64();
  if (count < 0 || count > (std::int64_t{1} << 30)) in.fail("a round count out of range");
  if (!in.ok()) return;
  count_ = static_cast<int>(count);
  if (count_ > 0) {
    auto sum = in.values<float>(static_cast<std::int64_t>(sum_.size()));
    if (in.ok()) sum_ = std::move(sum);
  }
}

void UpdateAccumulator::apply(std::span<const float> w, std::span<float> out, double divisor) {
  ConstVec sum(sum_.data(), static_cast<Eigen::Index>(sum_.size()));
  ConstVec cur(w.data(), static_cast<Eigen::Index>(w.size()));
  Vec next(out.data(), static_cast<Eigen::Index>(out.size()));
  if (count_ == 0) {  // a round that kept no gradient (mindflayer): a zero step
    next = cur;
    return;
  }
  const float mean = 1.0f / static_cast<float>(count_);
  // Another divisor than the count only where a rule asks for one: the mean stays bit for bit.
  const float inv = divisor > 0.0 && divisor != count_ ? static_cast<float>(1.0 / divisor) : mean;
  const auto h = head(w.size(), state_);
  const auto t = tail(state_);
  next.head(h) = cur.head(h) - sum.head(h) * inv;
  next.tail(t) = cur.tail(t) - sum.tail(t) * mean;
  count_ = 0;
}

}  // namespace stalesgd

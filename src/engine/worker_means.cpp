// WorkerMeans: per-worker sums and the mean of means, in Eigen (why: worker_means.hpp).
#include "engine/worker_means.hpp"

#include <Eigen/Core>

namespace stalesgd {
namespace {
using Vec = Eigen::Map<Eigen::VectorXf>;
using ConstVec = Eigen::Map<const Eigen::VectorXf>;
}  // namespace

WorkerMeans::WorkerMeans(int workers, std::size_t n, std::size_t state)
    : n_(n), state_(state), sums_(static_cast<std::size_t>(workers)), counts_(sums_.size(), 0) {}

void WorkerMeans::add(int worker, std::span<const float> g, float lr) {
  const auto w = static_cast<std::size_t>(worker);
  if (sums_[w].size() != n_) sums_[w].assign(n_, 0.0f);
  Vec sum(sums_[w].data(), static_cast<Eigen::Index>(n_));
  ConstVec grad(g.data(), static_cast<Eigen::Index>(n_));
  const auto h = static_cast<Eigen::Index>(n_ - state_);
  const auto t = static_cast<Eigen::Index>(state_);
  if (counts_[w] == 0) {
    sum.head(h).noalias() = lr * grad.head(h);
    sum.tail(t) = grad.tail(t);
  } else {
    sum.head(h).noalias() += lr * grad.head(h);
    sum.tail(t) += grad.tail(t);
  }
  ++counts_[w];
}

void WorkerMeans::apply(std::span<const float> w, std::span<float> out) {
  Vec next(out.data(), static_cast<Eigen::Index>(n_));
  next = ConstVec(w.data(), static_cast<Eigen::Index>(n_));
  int contributed = 0;
  for (const int c : counts_) contributed += c > 0;
  const float each = 1.0f / static_cast<float>(contributed);
  for (std::size_t i = 0; i < sums_.size(); ++i) {
    if (counts_[i] == 0) continue;
    next -= ConstVec(sums_[i].data(), static_cast<Eigen::Index>(n_)) *
            (each / static_cast<float>(counts_[i]));
  }
  clear();
}

void WorkerMeans::clear() {
  counts_.assign(counts_.size(), 0);
}

void WorkerMeans::save(StateWriter& out) const {
  out.tag("worker-means");
  for (std::size_t i = 0; i < sums_.size(); ++i) {
    out.i64(counts_[i]);
    if (counts_[i] > 0) out.values(sums_[i]);
  }
}

void WorkerMeans::load(StateReader& in) {
  if (!in.tag("worker-means")) return;
  for (std::size_t i = 0; i < sums_.size() && in.ok(); ++i) {
    const std::int64_t c = in.i64();
    if (c < 0 || c > (std::int64_t{1} << 30)) in.fail("a worker's round count out of range");
    if (!in.ok()) return;
    counts_[i] = static_cast<int>(c);
    if (c > 0) {
      auto sum = in.values<float>(static_cast<std::int64_t>(n_));
      if (in.ok()) sums_[i] = std::move(sum);
    }
  }
}

}  // namespace stalesgd

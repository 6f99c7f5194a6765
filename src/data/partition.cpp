// The data partitions of --partition (why and what: stalesgd/data/partition.hpp). Every draw
// takes the generator's raw bits (uniform01), so a seed gives the same shards on every standard
// library.
#include "stalesgd/data/partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "stalesgd/util/seed.hpp"
#include "util/uniform01.hpp"

namespace stalesgd {
namespace {

void shuffle(std::vector<std::uint32_t>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    std::swap(v[i - 1], v[static_cast<std::size_t>(rng() % i)]);
  }
}

// Deals `order` into `workers` contiguous runs whose sizes differ by at most one.
std::vector<std::vector<std::uint32_t>> deal(const std::vector<std::uint32_t>& order, int workers) {
  std::vector<std::vector<std::uint32_t>> shards(static_cast<std::size_t>(workers));
  const std::size_t n = order.size();
  for (std::size_t w = 0; w < shards.size(); ++w) {
    const std::size_t from = n * w / shards.size(), to = n * (w + 1) / shards.size();
    shards[w].assign(order.begin() + static_cast<std::ptrdiff_t>(from),
                     order.begin() + static_cast<std::ptrdiff_t>(to));
  }
  return shards;
}

double standard_normal(Rng& rng) {  // Box-Muller
  return std::sqrt(-2.0 * std::log(uniform01(rng))) * std::cos(2.0 * M_PI * uniform01(rng));
}

// Gamma(a, 1) by Marsaglia and Tsang (2000); for a < 1, Gamma(a + 1) U^(1/a).
double gamma(double a, Rng& rng) {
  if (a < 1.0) return gamma(a + 1.0, rng) * std::pow(uniform01(rng), 1.0 / a);
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng);
    const double v = std::pow(1.0 + c * x, 3.0);
    if (v <= 0.0) continue;
    if (std::log(uniform01(rng)) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

std::vector<std::vector<std::uint32_t>> dirichlet(const Split& split, double alpha, int workers,
                                                  Rng& rng) {
  std::vector<std::vector<std::uint32_t>> shards(static_cast<std::size_t>(workers));
  const int classes =
      split.count == 0 ? 0 : *std::max_element(split.labels.begin(), split.labels.end()) + 1;
  for (int c = 0; c < classes; ++c) {
    std::vector<std::uint32_t> members;
    for (std::uint32_t i = 0; i < split.count; ++i) {
      if (split.labels[i] == c) members.push_back(i);
    }
    shuffle(members, rng);
    std::vector<double> share(shards.size());
    for (double& s : share) s = gamma(alpha, rng);
    const double total = std::accumulate(share.begin(), share.end(), 0.0);
    double cumulative = 0.0;
    std::size_t from = 0;
    for (std::size_t w = 0; w < shards.size(); ++w) {
      cumulative += share[w];
      const std::size_t to =
          w + 1 == shards.size()
              ? members.size()
              : std::min(members.size(), static_cast<std::size_t>(
                                             std::llround(cumulative / total * members.size())));
      shards[w].insert(shards[w].end(), members.begin() + static_cast<std::ptrdiff_t>(from),
                       members.begin() + static_cast<std::ptrdiff_t>(std::max(from, to)));
      from = std::max(from, to);
    }
  }
  return shards;
}

}  // namespace

Result<PartitionSpec> parse_partition(std::string_view text) {
  PartitionSpec spec;
  if (text == "none") return spec;
  if (text == "iid") return PartitionSpec{PartitionSpec::Kind::kIid};
  if (text == "by-class") return PartitionSpec{PartitionSpec::Kind::kByClass};
  if (text.starts_with("dirichlet:")) {
    const std::string a(text.substr(10));
    char* end = nullptr;
    const double alpha = std::strtod(a.c_str(), &end);
    if (a.empty() || end != a.c_str() + a.size() || !std::isfinite(alpha) || !(alpha > 0.0)) {
      return Error{fmt::format(
          "--partition '{}': the Dirichlet parameter A must be a number > 0, e.g. dirichlet:0.5",
          text)};
    }
    return PartitionSpec{PartitionSpec::Kind::kDirichlet, alpha};
  }
  return Error{
      fmt::format("--partition '{}' is not none, iid, by-class or dirichlet:A (A > 0)", text)};
}

Result<std::vector<std::vector<std::uint32_t>>> partition_split(const Split& split,
                                                                const PartitionSpec& spec,
                                                                int workers, std::uint64_t seed) {
  if (spec.kind == PartitionSpec::Kind::kNone) return std::vector<std::vector<std::uint32_t>>{};
  Rng rng(seed);
  std::vector<std::uint32_t> order(split.count);
  std::iota(order.begin(), order.end(), 0u);
  std::vector<std::vector<std::uint32_t>> shards;
  if (spec.kind == PartitionSpec::Kind::kDirichlet) {
    shards = dirichlet(split, spec.alpha, workers, rng);
  } else {
    shuffle(order, rng);
    if (spec.kind == PartitionSpec::Kind::kByClass) {
      std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return split.labels[a] < split.labels[b];
      });
    }
    shards = deal(order, workers);
  }
  for (std::size_t w = 0; w < shards.size(); ++w) {
    if (shards[w].empty()) {
      return Error{fmt::format(
          "--partition leaves worker {} no training sample ({} samples over {} workers); use "
          "fewer workers or a larger Dirichlet parameter",
          w, split.count, workers)};
    }
    std::sort(shards[w].begin(), shards[w].end());
  }
  return shards;
}

std::vector<std::vector<std::size_t>> shard_class_counts(
    const Split& split, const std::vector<std::vector<std::uint32_t>>& shards, int num_classes) {
  std::vector<std::vector<std::size_t>> counts(shards.size(),
                                               std::vector<std::size_t>(num_classes, 0));
  for (std::size_t w = 0; w < shards.size(); ++w) {
    for (const std::uint32_t i : shards[w]) ++counts[w][split.labels[i]];
  }
  return counts;
}

}  // namespace stalesgd

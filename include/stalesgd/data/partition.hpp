// Heterogeneous data (docs/rules.md, "Partitions"): --partition gives each worker its own shard
// of the training split, which it alone samples. `none` (the default) is the paper's setting:
// every worker samples the whole split. `iid` deals a seeded permutation into P equal shards;
// `by-class` deals the split sorted by label, so each worker holds about C/P classes;
// `dirichlet:A` gives each worker, class by class, a share drawn from Dirichlet(A, ..., A)
// (Hsu et al. 2019): small A gives each worker few classes, large A approaches iid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct PartitionSpec {
  enum class Kind { kNone, kIid, kByClass, kDirichlet };
  Kind kind = Kind::kNone;
  double alpha = 0.0;  // dirichlet's A > 0
};

// "none", "iid", "by-class" or "dirichlet:A"; the message names what is wrong.
Result<PartitionSpec> parse_partition(std::string_view text);

// Each worker's sample indices into `split` (ascending), from `seed` (derive_seed(run seed,
// SeedStream::kPartition)); empty for `none`. An Error naming the worker when a shard is empty
// (more workers than samples, or a Dirichlet draw that gave one nothing).
Result<std::vector<std::vector<std::uint32_t>>> partition_split(const Split& split,
                                                                const PartitionSpec& spec,
                                                                int workers, std::uint64_t seed);

// Each worker's sample count per class (num_classes columns), for summary.json.
std::vector<std::vector<std::size_t>> shard_class_counts(
    const Split& split, const std::vector<std::vector<std::uint32_t>>& shards, int num_classes);

}  // namespace stalesgd

// --partition (stalesgd/data/partition.hpp): the shards of each kind on the real MNIST training
// split, their seeding, the sampler that keeps to a shard, and the bad specs.
#include "stalesgd/data/partition.hpp"

#include <algorithm>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "stalesgd/data/sampler.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

std::vector<std::vector<std::uint32_t>> shards_of(const std::string& spec, int workers,
                                                  std::uint64_t seed = 7) {
  auto p = parse_partition(spec);
  REQUIRE(p.ok());
  auto s = partition_split(mnist().train, *p, workers, seed);
  REQUIRE(s.ok());
  return std::move(s).value();
}

// Every training sample in exactly one shard.
void check_disjoint_cover(const std::vector<std::vector<std::uint32_t>>& shards) {
  std::vector<int> seen(mnist().train.count, 0);
  for (const auto& s : shards) {
    for (const auto i : s) ++seen[i];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

// The largest class's share of each worker's samples, averaged over the workers.
double mean_top_share(const std::vector<std::vector<std::uint32_t>>& shards) {
  const auto counts = shard_class_counts(mnist().train, shards, 10);
  double sum = 0.0;
  for (std::size_t w = 0; w < counts.size(); ++w) {
    sum += static_cast<double>(*std::max_element(counts[w].begin(), counts[w].end())) /
           static_cast<double>(shards[w].size());
  }
  return sum / static_cast<double>(counts.size());
}

}  // namespace

TEST_CASE("partition: none, iid and by-class shards of MNIST", "[data][partition]") {
  CHECK(shards_of("none", 4).empty());
  const auto iid = shards_of("iid", 7);
  REQUIRE(iid.size() == 7);
  check_disjoint_cover(iid);
  for (const auto& s : iid) CHECK((s.size() == 60000 / 7 || s.size() == 60000 / 7 + 1));
  CHECK(mean_top_share(iid) < 0.15);  // about a tenth of each class
  CHECK(shards_of("iid", 7) == iid);  // seeded
  CHECK(shards_of("iid", 7, 8) != iid);
  // 10 workers of sorted labels: each holds one class, all but a few boundary samples.
  const auto by_class = shards_of("by-class", 10);
  check_disjoint_cover(by_class);
  CHECK(mean_top_share(by_class) > 0.85);
}

TEST_CASE("partition: Dirichlet shares, skewed for a small A and even for a large one",
          "[data][partition]") {
  const auto skewed = shards_of("dirichlet:0.1", 8);
  const auto even = shards_of("dirichlet:100", 8);
  check_disjoint_cover(skewed);
  check_disjoint_cover(even);
  CHECK(mean_top_share(skewed) > 0.5);
  CHECK(mean_top_share(even) < 0.2);
  CHECK(shards_of("dirichlet:0.1", 8) == skewed);
}

TEST_CASE("partition: a worker's sampler draws only from its shard", "[data][partition]") {
  const auto by_class = shards_of("by-class", 10);
  const std::set<std::uint32_t> mine(by_class[3].begin(), by_class[3].end());
  std::set<int> labels;
  for (const auto i : mine) labels.insert(mnist().train.labels[i]);
  MinibatchSampler sampler(mnist().train, 32, 99, by_class[3]);
  for (int b = 0; b < 400; ++b) {  // past an epoch of the shard
    const Batch batch = sampler.next();
    for (int i = 0; i < batch.size; ++i) CHECK(labels.count(batch.labels[i]) == 1);
  }
  CHECK(labels.size() <= 2);
}

TEST_CASE("partition: bad specs and a worker left without data are one line", "[data][partition]") {
  for (const std::string bad :
       {"dirichlet:0", "dirichlet:-1", "dirichlet:x", "dirichlet:", "shards"}) {
    INFO(bad);
    CHECK_THAT(parse_partition(bad).error().message, Contains("--partition '" + bad + "'"));
  }
  Split tiny;
  tiny.shape = mnist().train.shape;
  tiny.count = 3;
  tiny.features.assign(3 * tiny.dim(), 0.0f);
  tiny.labels = {0, 1, 2};
  auto r = partition_split(tiny, {PartitionSpec::Kind::kIid}, 4, 1);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Contains("leaves worker 0 no training sample"));
}

TEST_CASE("partition CLI: summary.json records the shards and bad input exits 2",
          "[data][partition][cli]") {
  TempDir dir;
  auto r = run_cli({"train", "--clock", "virtual", "--workers", "4", "--rule", "async",
                    "--partition", "by-class", "--iterations", "50", "--eval-every", "1000s",
                    "--no-progress", "--out", (dir / "run").string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto s = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
  CHECK(s["config"]["partition"] == "by-class");
  REQUIRE(s["partition"]["workers"].size() == 4);
  std::size_t total = 0;
  for (const auto& w : s["partition"]["workers"]) total += w["samples"].get<std::size_t>();
  CHECK(total == 60000);
  for (const auto& [flags, expected] : std::vector<std::pair<std::string, std::string>>{
           {"dirichlet:0", "the Dirichlet parameter A must be a number > 0"},
           {"halves", "is not none, iid, by-class or dirichlet:A"}}) {
    auto bad = run_cli({"train", "--partition", flags, "--iterations", "5", "--no-progress"});
    CHECK(bad.exit_code == 2);
    CHECK(line_count(bad.output) == 1);
    CHECK_THAT(bad.output, Contains(expected));
  }
  // A Dirichlet draw with A = 0.001 over 512 workers gives each class to a few of them: most
  // are left with none.
  auto empty = run_cli({"train", "--partition", "dirichlet:0.001", "--workers", "512", "--clock",
                        "virtual", "--iterations", "5", "--no-progress"});
  CHECK(empty.exit_code == 2);
  CHECK(line_count(empty.output) == 1);
  CHECK_THAT(empty.output, Contains("no training sample"));
}

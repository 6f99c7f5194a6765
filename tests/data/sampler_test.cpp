// MinibatchSampler (stalesgd/data/sampler.hpp): each minibatch's seed, which a stochastic
// model's Dropout draws from, is its stream's and its draw's, and a checkpoint keeps it.
#include "stalesgd/data/sampler.hpp"

#include <catch2/catch.hpp>
#include <set>

#include "stalesgd/util/seed.hpp"
#include "support/fixtures.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;

TEST_CASE("sampler: a minibatch's seed is its stream's and its draw's", "[data]") {
  const Split& train = test::mnist().train;
  MinibatchSampler a(train, 8, derive_seed(1, SeedStream::kSampler, 0));
  MinibatchSampler b(train, 8, derive_seed(1, SeedStream::kSampler, 0));
  MinibatchSampler other(train, 8, derive_seed(1, SeedStream::kSampler, 1));
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t s = a.next().seed;
    CHECK(b.next().seed == s);
    CHECK(other.next().seed != s);
    seen.insert(s);
  }
  CHECK(seen.size() == 100);

  // A checkpoint after 100 draws: the restored sampler draws the 101st seed.
  StateWriter out;
  a.save(out);
  MinibatchSampler restored(train, 8, derive_seed(1, SeedStream::kSampler, 0));
  StateReader in(out.bytes());
  restored.load(in);
  REQUIRE(in.ok());
  CHECK(restored.next().seed == a.next().seed);
}

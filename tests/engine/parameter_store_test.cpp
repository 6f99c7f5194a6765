// ParameterStore: versions count publishes, a pinned buffer is never written until released,
// the buffers stay within readers + 2, and lock-free readers racing a writer only ever see
// whole, published versions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/parameter_store.hpp"

using namespace stalesgd;

namespace {

// The server's step in these tests: the next version's buffer holds its version number.
void publish_filled(ParameterStore& store) {
  const auto next = store.begin_update();
  std::fill(next.begin(), next.end(), static_cast<float>(store.version() + 1));
  store.publish();
}

bool all_equal(std::span<const float> v, float x) {
  return std::all_of(v.begin(), v.end(), [x](float y) { return y == x; });
}

}  // namespace

TEST_CASE("ParameterStore starts at version 0 and each publish makes the written buffer current",
          "[engine][parameter_store]") {
  const std::vector<float> initial{1.0f, 2.0f, 3.0f};
  ParameterStore store(initial);
  CHECK(store.version() == 0);
  CHECK(store.buffers() == 1);
  CHECK(std::ranges::equal(store.current(), initial));
  {
    const auto pin = store.acquire();
    CHECK(pin.version() == 0);
    CHECK(std::ranges::equal(pin.params(), initial));
  }
  for (std::uint64_t v = 1; v <= 5; ++v) {
    const auto next = store.begin_update();
    REQUIRE(next.size() == initial.size());
    for (std::size_t i = 0; i < next.size(); ++i) next[i] = initial[i] + static_cast<float>(v);
    store.publish();
    CHECK(store.version() == v);
    const auto pin = store.acquire();
    CHECK(pin.version() == v);
    CHECK(pin.params().data() == store.current().data());
    for (std::size_t i = 0; i < initial.size(); ++i) {
      CHECK(pin.params()[i] == initial[i] + static_cast<float>(v));
    }
  }
  // No pins between updates: the current and the one being written suffice.
  CHECK(store.buffers() == 2);
  CHECK_THROWS_AS(store.publish(), std::logic_error);
}

TEST_CASE("ParameterStore never hands out a pinned buffer for writing and reuses it once released",
          "[engine][parameter_store]") {
  ParameterStore store(std::vector<float>(64, 0.0f));
  auto pin0 = store.acquire();
  const float* buf0 = pin0.params().data();

  const auto next1 = store.begin_update();
  CHECK(next1.data() != buf0);
  std::fill(next1.begin(), next1.end(), 1.0f);
  store.publish();

  // Version 0 pinned, version 1 current: the next version needs a third buffer.
  const auto next2 = store.begin_update();
  CHECK(next2.data() != buf0);
  CHECK(next2.data() != next1.data());
  std::fill(next2.begin(), next2.end(), 2.0f);
  store.publish();
  CHECK(store.buffers() == 3);
  CHECK(pin0.version() == 0);
  CHECK(all_equal(pin0.params(), 0.0f));

  // A moved pin still holds the buffer; the moved-from one releases nothing.
  ParameterStore::Pin moved = std::move(pin0);
  pin0.release();
  CHECK(moved.params().data() == buf0);
  const auto next3 = store.begin_update();
  CHECK(next3.data() != buf0);
  std::fill(next3.begin(), next3.end(), 3.0f);
  store.publish();

  moved.release();
  const auto next4 = store.begin_update();
  CHECK(next4.data() == buf0);  // first free buffer: the released one
  store.publish();
  CHECK(store.buffers() == 3);
}

TEST_CASE("ParameterStore throws when every one of its max_slots buffers is pinned",
          "[engine][parameter_store]") {
  CHECK_THROWS_AS(ParameterStore(std::vector<float>(4, 0.0f), 1), std::invalid_argument);
  ParameterStore store(std::vector<float>(4, 0.0f), 3);
  const auto pin0 = store.acquire();
  publish_filled(store);
  const auto pin1 = store.acquire();
  publish_filled(store);  // the third and last buffer
  CHECK(store.buffers() == 3);
  CHECK_THROWS_AS(store.begin_update(), std::length_error);
}

TEST_CASE("ParameterStore holds at most readers + 2 buffers when each reader pins one version",
          "[engine][parameter_store]") {
  const int readers = GENERATE(1, 3, 16);
  INFO("readers " << readers);
  // max_slots = readers + 2: begin_update() throws if the store ever needs more.
  ParameterStore store(std::vector<float>(16, 0.0f), static_cast<std::size_t>(readers) + 2);
  const auto bound = static_cast<std::size_t>(readers) + 2;
  // An empty Pin (default or reset to one) has empty params.
  std::vector<ParameterStore::Pin> pins(static_cast<std::size_t>(readers));
  // The worst case first: each reader pins a different version, then one more update.
  for (auto& pin : pins) {
    pin = store.acquire();
    publish_filled(store);
  }
  publish_filled(store);
  CHECK(store.buffers() == bound);
  // Then random pinning and unpinning: the buffers in use are recycled, never added to.
  std::mt19937 rng(42 + static_cast<unsigned>(readers));
  std::bernoulli_distribution repin(0.3), unpin(0.1);
  for (int update = 0; update < 2000; ++update) {
    for (auto& pin : pins) {
      if (repin(rng)) {
        pin.release();  // a reader releases before it pins again
        pin = store.acquire();
      } else if (unpin(rng)) {
        pin = ParameterStore::Pin{};
      }
    }
    publish_filled(store);
    REQUIRE(store.buffers() <= bound);
    for (const auto& pin : pins) {
      // A held pin still reads its own version, however many updates came since.
      REQUIRE(all_equal(pin.params(), static_cast<float>(pin.version())));
    }
  }
}

TEST_CASE("ParameterStore readers racing the writer only see whole published versions",
          "[engine][parameter_store][concurrency]") {
  const int readers = GENERATE(1, 2, 8);
  INFO("readers " << readers);
  constexpr std::uint64_t kVersions = 100000;
  constexpr std::size_t kParams = 256;
  // readers + 2 buffers must do, whatever the interleaving: an acquire() that backs off
  // counts as that reader's one pin.
  ParameterStore store(std::vector<float>(kParams, 0.0f), static_cast<std::size_t>(readers) + 2);
  std::atomic<bool> done{false};  // relaxed would do (join orders the rest); seq_cst is simpler
  std::atomic<int> torn{0};       // whole buffers that did not hold their pin's version
  std::atomic<int> backwards{0};  // acquires that returned an older version than the last one
  std::atomic<int> started{0};    // readers that hold their first pin: the writer waits for all
  std::vector<std::uint64_t> acquires(static_cast<std::size_t>(readers), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < readers; ++r) {
    threads.emplace_back([&, r] {
      std::uint64_t last = 0;
      std::uint64_t n = 0;
      while (!done.load()) {
        const auto pin = store.acquire();
        if (++n == 1) started.fetch_add(1);
        if (pin.version() < last) backwards.fetch_add(1);
        last = pin.version();
        if (!all_equal(pin.params(), static_cast<float>(pin.version()))) torn.fetch_add(1);
        if (n % 4 == 0) {
          // Hold the pin across a reschedule, so the writer must work around it, and check
          // the buffer was not written meanwhile.
          std::this_thread::yield();
          if (!all_equal(pin.params(), static_cast<float>(pin.version()))) torn.fetch_add(1);
        }
      }
      acquires[static_cast<std::size_t>(r)] = n;
    });
  }
  // Every reader races the writer from its first update on, however the threads are scheduled.
  while (started.load() < readers) std::this_thread::yield();
  bool overflow = false;  // readers + 2 buffers were not enough
  try {
    for (std::uint64_t v = 1; v <= kVersions; ++v) {
      publish_filled(store);
      if (v % 64 == 0) std::this_thread::yield();  // let the readers in on a machine of few cores
    }
  } catch (const std::length_error&) {
    overflow = true;
  }
  done.store(true);
  for (auto& t : threads) t.join();

  REQUIRE_FALSE(overflow);
  CHECK(torn.load() == 0);
  CHECK(backwards.load() == 0);
  for (const auto n : acquires) CHECK(n > 0);
  CHECK(store.version() == kVersions);
  CHECK(store.buffers() <= static_cast<std::size_t>(readers) + 2);
  const auto last = store.acquire();
  CHECK(last.version() == kVersions);
  CHECK(all_equal(last.params(), static_cast<float>(kVersions)));
}

// memory_room and thread_room: the limits a run is checked against, and the one-line refusals
// naming them. The limits themselves (ulimit -v) are set in the CLI tests' child processes
// (tests/engine/resource_limits_cli_test.cpp).
#include "util/memory.hpp"

#include <limits>

#include <catch2/catch.hpp>

#include "util/thread_room.hpp"

using namespace stalesgd;
using Catch::Matchers::Contains;

TEST_CASE("memory_room names a limit, and check_memory refuses only what cannot fit",
          "[util][memory]") {
  const MemoryRoom room = memory_room();
  REQUIRE_FALSE(room.limit.empty());  // at least the machine's own memory is known
  CHECK(room.bytes > 0);
  CHECK(check_memory(1 << 20, "a megabyte", "no fix needed").ok());
  const auto s = check_memory(std::uint64_t{1} << 62, "data.npz: 4 EB of features", "save fewer");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Contains("data.npz: 4 EB of features: 4.61e+09 GB needed, but "
                                         "this process may allocate only ") &&
                                    Contains(room.limit) && Contains("; save fewer"));
}

TEST_CASE("byte_size_text", "[util][memory]") {
  CHECK(byte_size_text(3.1e9) == "3.1 GB");
  CHECK(byte_size_text(420e6) == "420 MB");
  CHECK(byte_size_text(12e3) == "12 kB");
}

TEST_CASE("thread_room names a limit, and check_threads refuses only what cannot start",
          "[util][threads]") {
  const ThreadRoom room = thread_room();
  REQUIRE_FALSE(room.limit.empty());  // at least the kernel's threads-max is known
  CHECK(room.threads > 0);
  CHECK(thread_stack_bytes() > 0);
  CHECK(check_threads(2, "two threads", "no fix needed").ok());
  const auto s = check_threads(std::numeric_limits<std::uint64_t>::max() / 2,
                               "--workers 1000000000000", "use fewer");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Contains("--workers 1000000000000: ") &&
                                    Contains("threads needed, but the system allows only") &&
                                    Contains("; use fewer"));
}

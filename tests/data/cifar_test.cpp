// CIFAR-10 binary loader on generated files in the official format.
#include "data/cifar.hpp"

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("CIFAR loader concatenates batches channel-first", "[data][cifar]") {
  TempDir dir;
  write_bytes(dir / "a.bin", cifar_records({3, 0}));
  write_bytes(dir / "b.bin", cifar_records({9}));
  auto split = load_cifar_split({dir / "a.bin", dir / "b.bin"}, "fix");
  REQUIRE(split.ok());
  CHECK(split->count == 3);
  CHECK(split->shape == kCifarShape);
  CHECK(split->labels == std::vector<std::uint8_t>{3, 0, 9});
  // record 1 of a.bin, green channel (offset 1024), pixel 0: (1 + 1024) % 256 = 1
  CHECK(split->sample(1)[1024] == Approx(1.0f / 255.0f));
  CHECK(split->sample(2)[5] == Approx(5.0f / 255.0f));
}

TEST_CASE("CIFAR loader rejects sizes that are not a multiple of 3073", "[data][cifar]") {
  TempDir dir;
  auto bytes = cifar_records({1, 2});
  bytes.pop_back();
  write_bytes(dir / "bad.bin", bytes);
  auto r = load_cifar_split({dir / "bad.bin"}, "fetch it again");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Contains("bad.bin") && Contains("6145 bytes") && Contains("3073") &&
                                    Contains("fetch it again"));
}

TEST_CASE("CIFAR loader rejects empty files, bad labels and missing files", "[data][cifar]") {
  TempDir dir;
  write_bytes(dir / "empty.bin", {});
  CHECK_THAT(load_cifar_split({dir / "empty.bin"}, "fix").error().message, Contains("0 bytes"));
  write_bytes(dir / "label.bin", cifar_records({1, 10}));
  CHECK_THAT(load_cifar_split({dir / "label.bin"}, "fix").error().message,
             Contains("label 10 of record 1"));
  CHECK_THAT(load_cifar_split({dir / "none.bin"}, "fix").error().message,
             Contains("none.bin: file not found"));
}

// Found by fuzz/cifar_reader.cpp (docs/reliability.md): the same use after free as the IDX
// loader's, in the gzip layer both read through (file_bytes.cpp).
TEST_CASE("CIFAR loader: a .bin with corrupt deflate data is one Error", "[data][cifar][fuzz]") {
  TempDir dir;
  auto bytes = read_bytes([&] {
    write_gzip(dir / "ok.gz", cifar_records({1, 2}));
    return dir / "ok.gz";
  }());
  // Keep the gzip header, garble the deflate stream after its first bytes.
  for (std::size_t i = 14; i < bytes.size() - 8; ++i) bytes[i] ^= 0x5a;
  write_bytes(dir / "data_batch_1.bin", bytes);
  auto r = load_cifar_split({dir / "data_batch_1.bin"}, "fetch it again");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Contains("data_batch_1.bin: corrupt compressed data (") &&
                                    Contains("); fetch it again"));
}

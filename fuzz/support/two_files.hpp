// The input layout of the harnesses that feed a reader two files (IDX images and labels, two
// CIFAR batches): byte 0 holds flags, bytes 1-2 the first file's length (big-endian, clipped
// to what is left), then the first file, then the second (the rest). fuzz/corpus/make_seeds.py
// writes seeds in this layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace stalesgd::fuzz {

struct TwoFiles {
  std::uint8_t flags = 0;
  std::span<const std::uint8_t> first;
  std::span<const std::uint8_t> second;
};

inline TwoFiles split_two_files(const std::uint8_t* data, std::size_t size) {
  TwoFiles out;
  std::span<const std::uint8_t> rest(data, size);
  if (rest.empty()) return out;
  out.flags = rest[0];
  rest = rest.subspan(1);
  std::size_t first = 0;
  if (rest.size() >= 2) {
    first = (std::size_t{rest[0]} << 8) | rest[1];
    rest = rest.subspan(2);
  }
  if (first > rest.size()) first = rest.size();
  out.first = rest.first(first);
  out.second = rest.subspan(first);
  return out;
}

}  // namespace stalesgd::fuzz

// Fuzzes the IDX reader of MNIST and Fashion-MNIST with its gzip layer (src/data/idx.cpp,
// file_bytes.cpp). Input: support/two_files.hpp's layout, the images file then the labels file.
// Flag bit 0: load both through load_idx_split from memory files, so that a gzip-compressed
// input is inflated by the real path (zlib's gzopen); else parse_idx_split on the bytes as they
// are. Bit 1: expect 2x3 images (the seeds' size; the catalog expects 28x28), else any size.
// Property: an Error is one line; a Split is consistent (sizes, labels and pixels in range).
#include <cmath>

#include "data/idx.hpp"
#include "support/check.hpp"
#include "support/mem_file.hpp"
#include "support/two_files.hpp"

using namespace stalesgd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::TwoFiles in = fuzz::split_two_files(data, size);
  IdxExpect expect;
  expect.num_classes = 10;
  expect.fix = "fetch it again";
  if (in.flags & 2) expect.shape = ImageShape{1, 2, 3};

  auto split = [&]() -> Result<Split> {
    if (in.flags & 1) {
      static fuzz::MemFile images;
      static fuzz::MemFile labels;
      return load_idx_split(images.write(in.first), labels.write(in.second), expect);
    }
    return parse_idx_split(in.first, in.second, "images", "labels", expect);
  }();
  if (!split) {
    FUZZ_CHECK(fuzz::one_line(split.error().message));
    return 0;
  }
  const Split& s = *split;
  FUZZ_CHECK(s.shape.channels == 1 && s.shape.height > 0 && s.shape.width > 0);
  FUZZ_CHECK(!expect.shape || s.shape == *expect.shape);
  FUZZ_CHECK(s.count > 0 && s.labels.size() == s.count);
  const std::size_t dim = std::size_t(s.shape.height) * std::size_t(s.shape.width);
  FUZZ_CHECK(s.features.size() / dim == s.count && s.features.size() % dim == 0);
  for (const std::uint8_t label : s.labels) FUZZ_CHECK(label < expect.num_classes);
  for (const float f : s.features) FUZZ_CHECK(f >= 0.0f && f <= 1.0f);
  return 0;
}

// Fuzzes the CIFAR-10 binary reader (src/data/cifar.cpp, with file_bytes.cpp's gzip layer).
// Input: support/two_files.hpp's layout, two batch files (the second left out when empty).
// Flag bit 0: load them through load_cifar_split from memory files (gzip input inflated by the
// real path); else append_cifar_batch on the bytes as they are.
// Property: an Error is one line; a Split holds whole records with labels and pixels in range.
#include "data/cifar.hpp"
#include "support/check.hpp"
#include "support/mem_file.hpp"
#include "support/two_files.hpp"

using namespace stalesgd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::TwoFiles in = fuzz::split_two_files(data, size);
  const bool two = !in.second.empty();
  const std::string fix = "fetch it again";

  auto split = [&]() -> Result<Split> {
    if (in.flags & 1) {
      static fuzz::MemFile first;
      static fuzz::MemFile second;
      std::vector<std::filesystem::path> files{first.write(in.first)};
      if (two) files.push_back(second.write(in.second));
      return load_cifar_split(files, fix);
    }
    Split s;
    s.shape = kCifarShape;
    if (auto st = append_cifar_batch(in.first, "a.bin", fix, s); !st) return st.error();
    if (two) {
      if (auto st = append_cifar_batch(in.second, "b.bin", fix, s); !st) return st.error();
    }
    return s;
  }();
  if (!split) {
    FUZZ_CHECK(fuzz::one_line(split.error().message));
    return 0;
  }
  const Split& s = *split;
  FUZZ_CHECK(s.shape == kCifarShape);
  FUZZ_CHECK(s.count > 0 && s.labels.size() == s.count);
  FUZZ_CHECK(s.features.size() == s.count * kCifarShape.dim());
  for (const std::uint8_t label : s.labels) FUZZ_CHECK(label < 10);
  for (const float f : s.features) FUZZ_CHECK(f >= 0.0f && f <= 1.0f);
  return 0;
}

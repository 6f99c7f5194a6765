// Fuzzes the .npz reader (src/data/npz.cpp, npy.cpp, zip_archive.cpp): the zip directory with
// its zip64 records, stored and deflated entries, .npy headers, dtypes, shapes and labels.
// Input: a flags byte, then the .npz file. Flag bit 0: load it through load_npz_dataset from a
// memory file (the real path, read_file_bytes included); else parse_npz_dataset on the bytes.
// Bit 1: also read its NpzInfo (x headers, labels and keys only), which must agree with the
// Dataset. Property: an Error is one line; a Dataset is consistent (counts, shapes, labels below
// num_classes in 2..256, finite features, a 16-digit digest).
#include <cmath>
#include <optional>

#include "data/npz.hpp"
#include "support/check.hpp"
#include "support/mem_file.hpp"

using namespace stalesgd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const std::span<const std::uint8_t> file(data + 1, size - 1);
  static fuzz::MemFile mem;
  auto ds = (flags & 1) ? load_npz_dataset(mem.write(file), "npz:fuzz")
                        : parse_npz_dataset(file, "fuzz.npz", "npz:fuzz");
  std::optional<Result<NpzInfo>> info;
  if (flags & 2) {
    info.emplace((flags & 1) ? read_npz_info(mem.path()) : parse_npz_info(file, "fuzz.npz"));
  }
  if (info && !*info) FUZZ_CHECK(fuzz::one_line(info->error().message));
  if (!ds) {
    FUZZ_CHECK(fuzz::one_line(ds.error().message));
    return 0;
  }
  const Dataset& d = *ds;
  FUZZ_CHECK(d.num_classes >= 2 && d.num_classes <= 256);
  FUZZ_CHECK(d.digest.size() == 16 && d.name == "npz:fuzz");
  FUZZ_CHECK(d.train.shape == d.test.shape && d.train.shape.dim() > 0);
  for (const Split* s : {&d.train, &d.test}) {
    FUZZ_CHECK(s->count > 0 && s->labels.size() == s->count);
    FUZZ_CHECK(s->features.size() == s->count * s->dim());
    for (const std::uint8_t label : s->labels) FUZZ_CHECK(label < d.num_classes);
    for (const float f : s->features) FUZZ_CHECK(std::isfinite(f));
  }
  // What the catalog reads without the features is what the whole load found.
  if (info) {
    FUZZ_CHECK(info->ok());
    FUZZ_CHECK((*info)->shape == d.train.shape && (*info)->num_classes == d.num_classes);
  }
  return 0;
}

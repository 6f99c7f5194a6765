// Test fixtures for .npz data sets, written byte by byte so that the tests need no Python: .npy
// arrays (any header a test wants) and zip archives, stored or deflated with zlib, with numpy's
// zip64 records on request.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace stalesgd::test {

using Bytes = std::vector<std::uint8_t>;

// An .npy file: magic, version `major`.0, the header dict (`descr` quoted, or as it is when it
// is a list: a structured dtype), then `data` as given.
Bytes npy_bytes(const std::string& descr, const std::vector<std::uint64_t>& shape,
                const Bytes& data, int major = 1, bool fortran = false);

// An .npy of `values` (host order: the machines the suite runs on are little-endian).
template <class T>
Bytes npy(const std::string& descr, const std::vector<std::uint64_t>& shape,
          const std::vector<T>& values, int major = 1) {
  Bytes data(values.size() * sizeof(T));
  if (!data.empty()) std::memcpy(data.data(), values.data(), data.size());
  return npy_bytes(descr, shape, data, major);
}

struct ZipMember {
  std::string name;  // "x_train.npy"
  Bytes bytes;
};

struct ZipOptions {
  bool deflate = false;  // method 8 (numpy.savez_compressed), else stored (numpy.savez)
  // Sizes and offsets as 0xffffffff with a zip64 extra field in both headers, and the zip64
  // end records, as numpy writes arrays over 4 GiB.
  bool zip64 = false;
};

Bytes zip_bytes(const std::vector<ZipMember>& members, const ZipOptions& options = {});

// A small valid data set: x_train uint8 (6, 2, 3) with pixel p of sample i = 10 i + p,
// y_train {0, 1, 2, 0, 1, 2} as int64; x_test (3, 2, 3) = 100 + 10 i + p, y_test {2, 1, 0}.
std::vector<ZipMember> small_npz_members();

// Replaces (or appends) the member called `name`.
void set_member(std::vector<ZipMember>& members, const std::string& name, Bytes bytes);

void write_npz(const std::filesystem::path& path, const std::vector<ZipMember>& members,
               const ZipOptions& options = {});

}  // namespace stalesgd::test

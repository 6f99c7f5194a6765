// read_file_bytes: a whole file through zlib, which inflates gzip and passes plain files through.
#include "data/file_bytes.hpp"

#include <zlib.h>

#include <fmt/format.h>

namespace stalesgd {

Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                                  const std::string& fix) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error{fmt::format("{}: file not found; {}", path.string(), fix)};
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Error{fmt::format("{}: cannot open for reading; check its permissions or {}",
                             path.string(), fix)};
  }
  gzbuffer(file, 1 << 20);
  std::vector<std::uint8_t> bytes;
  // A plain file's size is known; a .gz grows as it inflates.
  bytes.reserve(static_cast<std::size_t>(std::filesystem::file_size(path, ec)));
  constexpr unsigned kChunk = 1 << 20;
  for (;;) {
    const std::size_t old = bytes.size();
    bytes.resize(old + kChunk);
    const int n = gzread(file, bytes.data() + old, kChunk);
    if (n < 0) {
      int errnum = 0;
      // gzerror's text lives in the gzFile: copy it before gzclose frees it (a fuzzer finding,
      // docs/reliability.md).
      const std::string what = gzerror(file, &errnum);
      gzclose(file);
      return Error{fmt::format("{}: corrupt compressed data ({}); {}", path.string(), what, fix)};
    }
    bytes.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  // gzread stops silently at a truncated gzip stream; gzclose_r reports it.
  const int close_status = gzclose(file);
  if (close_status != Z_OK && close_status != Z_BUF_ERROR) {
    return Error{fmt::format("{}: corrupt compressed data; {}", path.string(), fix)};
  }
  if (close_status == Z_BUF_ERROR) {
    return Error{fmt::format("{}: truncated gzip stream; {}", path.string(), fix)};
  }
  return bytes;
}

}  // namespace stalesgd

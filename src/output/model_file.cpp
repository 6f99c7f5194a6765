// .npy model files (output/model_file.hpp): format 1.0, '<f4', C order, shape (N,).
#include "output/model_file.hpp"

#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "data/npy.hpp"
#include "util/atomic_file.hpp"
#include "util/memory.hpp"
#include "util/regular_file.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

// An .npy header is at most 64 KiB (format 1.0 stores its length in 16 bits), plus the magic.
constexpr std::uint64_t kNpyHeaderMost = 65536 + 10;

Status write_model_file(const fs::path& path, std::span<const float> params) {
  // The header dict, padded with spaces to a 64-byte boundary and ended by '\n' (NumPy's rule).
  std::string dict =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", params.size());
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  const auto len = static_cast<std::uint16_t>(dict.size());
  bytes += static_cast<char>(len & 0xff);
  bytes += static_cast<char>(len >> 8);
  bytes += dict;
  const std::size_t at = bytes.size();
  bytes.resize(at + params.size_bytes());
  std::memcpy(bytes.data() + at, params.data(), params.size_bytes());  // x86-64: little-endian
  return write_file_atomically(path, bytes);
}

Result<std::vector<float>> read_model_file(const fs::path& path, std::size_t count) {
  // A model file holds a header and at most 8 bytes (float64) per parameter: a larger file, or
  // a device or FIFO (/dev/zero, a pipe), is refused before it is read.
  const std::uint64_t most =
      count == kAnyCount ? memory_bytes() : kNpyHeaderMost + 8 * static_cast<std::uint64_t>(count);
  const std::string what = fmt::format("--model-file {}", path.string());
  auto read = read_user_file(path, what, "give the .npy file `stalesgd train --save-model` wrote",
                             most == 0 ? UINT64_MAX : most);
  if (!read) return read.error();
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(read->data()),
                                            read->size());
  auto array = parse_npy(bytes, /*whole=*/true);
  if (!array)
    return Error{fmt::format("--model-file {}: {}", path.string(), array.error().message)};
  if (array->type != NpyType::kF4 && array->type != NpyType::kF8) {
    return Error{fmt::format("--model-file {}: holds {}, not float32 parameters", path.string(),
                             npy_dtype_text(*array))};
  }
  if (count == kAnyCount) {
    count = array->elements;
  } else if (array->elements != count) {
    return Error{fmt::format(
        "--model-file {}: holds {} parameters, the model {}; give the --model and --hidden "
        "of the run that saved it",
        path.string(), array->elements, count)};
  }
  std::vector<float> params(count);
  if (array->type == NpyType::kF4) {
    std::memcpy(params.data(), array->data.data(), count * sizeof(float));
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      double v = 0.0;
      std::memcpy(&v, array->data.data() + i * sizeof(double), sizeof(double));
      params[i] = static_cast<float>(v);
    }
  }
  return params;
}

Status check_model_path(const fs::path& path, std::string_view flag) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  // A folder that does not exist yet is made, parents too, as --out's is.
  if (!fs::exists(fs::symlink_status(dir, ec)) && !fs::create_directories(dir, ec) && ec) {
    return Error{fmt::format("{} {}: cannot create {}: {}; give another path", flag, path.string(),
                             dir.string(), ec.message())};
  }
  if (!fs::is_directory(dir, ec) || access(dir.c_str(), W_OK) != 0) {
    return Error{fmt::format("{} {}: {} is not a folder this user can write in; give another path",
                             flag, path.string(), dir.string())};
  }
  return {};
}

}  // namespace stalesgd

// IDX format (LeCun et al.): big-endian header {0x00, 0x00, type=0x08 (ubyte), ndims}, then one
// uint32 per dimension, then the data. Images are 3-D (count, rows, cols); labels 1-D (count).
#include "data/idx.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/file_bytes.hpp"
#include "util/crc32.hpp"
#include "util/tsan_hide.hpp"

namespace stalesgd {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;
constexpr std::uint32_t kLabelsMagic = 0x00000801;

// Pixels to floats in [0, 1], hidden from ThreadSanitizer: the buffer is the calling thread's
// until it is shared (a thread start or a lock orders these writes before every read), and TSan
// checking each of MNIST's 94 million accesses cost seconds of CPU in every process of the
// suite's TSan run.
void to_unit_floats(const std::uint8_t* pixels, std::size_t n, std::vector<float>& out) {
  const tsan::HiddenScope hidden;
  out.resize(n);
  constexpr float kScale = 1.0f / 255.0f;
  for (std::size_t i = 0; i < n; ++i) out[i] = pixels[i] * kScale;
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// Path as given, or path + ".gz" when only the compressed file exists.
std::filesystem::path resolve(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return path;
  std::filesystem::path gz = path;
  gz += ".gz";
  if (std::filesystem::exists(gz, ec)) return gz;
  return path;
}

struct IdxHeader {
  std::vector<std::uint32_t> dims;
  std::size_t data_offset = 0;
};

Result<IdxHeader> parse_header(std::span<const std::uint8_t> bytes, std::uint32_t magic,
                               const std::filesystem::path& path, const std::string& fix) {
  const std::size_t ndims = magic & 0xff;
  const std::size_t header = 4 + 4 * ndims;
  if (bytes.size() < 4) {
    return Error{fmt::format("{}: truncated: {} bytes, too short for an IDX header; {}",
                             path.string(), bytes.size(), fix)};
  }
  const std::uint32_t got = read_be32(bytes.data());
  if (got != magic) {
    return Error{
        fmt::format("{}: wrong magic number 0x{:08x} (expected 0x{:08x}, an IDX {} file); {}",
                    path.string(), got, magic, magic == kImagesMagic ? "images" : "labels", fix)};
  }
  if (bytes.size() < header) {
    return Error{fmt::format("{}: truncated inside the IDX header ({} bytes); {}", path.string(),
                             bytes.size(), fix)};
  }
  IdxHeader h;
  h.data_offset = header;
  for (std::size_t d = 0; d < ndims; ++d) h.dims.push_back(read_be32(bytes.data() + 4 + 4 * d));
  const std::size_t have = bytes.size() - header;
  // The dimensions' product can pass 64 bits (4 x 2^31 x 2^31 wrapped to 0, and an empty file
  // passed for 4 images of 2^31 x 2^31 pixels; docs/reliability.md): no file holds that much.
  const bool any_zero = std::find(h.dims.begin(), h.dims.end(), 0u) != h.dims.end();
  std::size_t expected = any_zero ? 0 : 1;
  for (const std::uint32_t d : h.dims) {
    if (!any_zero && expected > std::numeric_limits<std::size_t>::max() / d) {
      return Error{fmt::format("{}: truncated: header promises {} bytes of data, file holds {}; {}",
                               path.string(), fmt::join(h.dims, " x "), have, fix)};
    }
    expected *= d;
  }
  if (have < expected) {
    return Error{fmt::format("{}: truncated: header promises {} bytes of data, file holds {}; {}",
                             path.string(), expected, have, fix)};
  }
  if (have > expected) {
    return Error{fmt::format("{}: {} unexpected bytes after the data the header describes; {}",
                             path.string(), have - expected, fix)};
  }
  return h;
}

}  // namespace

Result<Split> load_idx_split(const std::filesystem::path& images_path,
                             const std::filesystem::path& labels_path, const IdxExpect& expect,
                             std::uint32_t* crc) {
  const auto images_file = resolve(images_path);
  const auto labels_file = resolve(labels_path);
  auto images = read_file_bytes(images_file, expect.fix);
  if (!images) return images.error();
  auto labels = read_file_bytes(labels_file, expect.fix);
  if (!labels) return labels.error();
  if (crc != nullptr) {
    *crc = crc32_of(std::span<const std::uint8_t>(*images), *crc);
    *crc = crc32_of(std::span<const std::uint8_t>(*labels), *crc);
  }
  return parse_idx_split(*images, *labels, images_file, labels_file, expect);
}

Result<Split> parse_idx_split(std::span<const std::uint8_t> images,
                              std::span<const std::uint8_t> labels,
                              const std::filesystem::path& images_file,
                              const std::filesystem::path& labels_file, const IdxExpect& expect) {
  auto ih = parse_header(images, kImagesMagic, images_file, expect.fix);
  if (!ih) return ih.error();
  auto lh = parse_header(labels, kLabelsMagic, labels_file, expect.fix);
  if (!lh) return lh.error();

  const std::size_t count = ih->dims[0];
  const ImageShape shape{1, static_cast<int>(ih->dims[1]), static_cast<int>(ih->dims[2])};
  if (lh->dims[0] != count) {
    return Error{
        fmt::format("{} holds {} images but {} holds {} labels; the two files must come "
                    "from the same split, {}",
                    images_file.string(), count, labels_file.string(), lh->dims[0], expect.fix)};
  }
  if (expect.shape && !(*expect.shape == shape)) {
    return Error{fmt::format("{}: images are {}x{}, expected {}x{}; {}", images_file.string(),
                             shape.height, shape.width, expect.shape->height, expect.shape->width,
                             expect.fix)};
  }
  if (count == 0 || shape.dim() == 0) {
    return Error{fmt::format("{}: holds no images; {}", images_file.string(), expect.fix)};
  }

  Split split;
  split.shape = shape;
  split.count = count;
  split.labels.assign(labels.begin() + static_cast<std::ptrdiff_t>(lh->data_offset), labels.end());
  for (std::size_t i = 0; i < count; ++i) {
    if (split.labels[i] >= expect.num_classes) {
      return Error{fmt::format("{}: label {} of sample {} is out of range [0, {}); {}",
                               labels_file.string(), int{split.labels[i]}, i, expect.num_classes,
                               expect.fix)};
    }
  }
  const std::uint8_t* pixels = images.data() + ih->data_offset;
  to_unit_floats(pixels, count * shape.dim(), split.features);
  return split;
}

}  // namespace stalesgd

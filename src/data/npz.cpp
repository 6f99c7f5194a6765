// An .npz file into a Dataset: the zip's entries (zip_archive.cpp) parsed as .npy arrays
// (npy.cpp), checked against one another and for data that looks wrong (npz_checks.cpp), and
// their features and labels converted.
#include "data/npz.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "data/file_bytes.hpp"
#include "data/npy.hpp"
#include "data/npz_checks.hpp"
#include "data/zip_archive.hpp"
#include "util/memory.hpp"
#include "util/printable.hpp"
#include "util/tsan_hide.hpp"

namespace stalesgd {
namespace {

constexpr const char* kSavez =
    "numpy.savez(PATH, x_train=..., y_train=..., x_test=..., y_test=...)";
// Enough of an entry for any .npy header parse_npy accepts (1 MiB after its 12-byte preamble).
constexpr std::uint64_t kHeaderPrefix = (1 << 20) + 12;

// The arrays of an .npz, viewing `keep`'s bytes; x_train and x_test as headers alone when read
// for NpzInfo.
struct Arrays {
  // Moved, never copied: by_name views keep's buffers and entries points into directory.
  Arrays() = default;
  Arrays(Arrays&&) = default;
  Arrays(const Arrays&) = delete;
  Arrays& operator=(const Arrays&) = delete;

  std::vector<ZipData> keep;
  std::map<std::string, NpyArray> by_name;
  std::map<std::string, const ZipEntry*> entries;
  std::vector<ZipEntry> directory;
  ImageShape shape;
  NpzKeys keys;
  NpzClasses classes;
  const NpyArray& operator[](const std::string& name) const { return by_name.at(name); }
};

// "x_train, y_train, notes.txt": what the file holds, for messages.
std::string contents(const std::vector<ZipEntry>& directory) {
  std::string out;
  for (std::size_t i = 0; i < directory.size() && i < 12; ++i) {
    std::string_view n = directory[i].name;
    if (n.ends_with(".npy")) n.remove_suffix(4);
    out += (i ? ", " : "") + printable(n);
  }
  if (directory.size() > 12) out += fmt::format(" and {} more", directory.size() - 12);
  return out.empty() ? "nothing" : out;
}

// x's sample shape, from (N, D), (N, H, W) or (N, C, H, W).
Result<ImageShape> sample_shape(const NpyArray& x, const std::string& file, const char* name) {
  const auto& s = x.shape;
  if (s.size() < 2 || s.size() > 4) {
    return Error{
        fmt::format("{}: {} has shape {}; samples must be vectors (N, D), images (N, H, W) or "
                    "channels-first images (N, C, H, W): reshape it",
                    file, name, npy_shape_text(s))};
  }
  for (std::size_t d = 1; d < s.size(); ++d) {
    if (s[d] == 0 || s[d] > (1u << 24)) {
      return Error{fmt::format("{}: {} has shape {}; each sample dimension must be 1 to 2^24", file,
                               name, npy_shape_text(s))};
    }
  }
  const auto at = [&](std::size_t d) { return static_cast<int>(s[d]); };
  if (s.size() == 2) return ImageShape{1, 1, at(1)};
  if (s.size() == 3) return ImageShape{1, at(1), at(2)};
  return ImageShape{at(1), at(2), at(3)};
}

Status check_x(const NpyArray& x, const std::string& file, const char* name) {
  if (!x.type || (npy_is_integer(*x.type) && *x.type != NpyType::kU1)) {
    return Error{fmt::format(
        "{}: {} has {}; features must be uint8 pixels (0..255, scaled to [0, 1]) or float32 or "
        "float64 values (taken as is): save {}.astype('float32')",
        file, name, npy_dtype_text(x), name)};
  }
  return {};
}

Status check_y(const NpyArray& y, std::uint64_t n, const std::string& file, const char* name,
               const char* x_name) {
  if (!y.type || !npy_is_integer(*y.type)) {
    return Error{
        fmt::format("{}: {} has {}; labels must be integers 0 .. C-1: save {}.astype('int64')",
                    file, name, npy_dtype_text(y), name)};
  }
  if (y.shape.empty() || y.shape.size() > 2 || (y.shape.size() == 2 && y.shape[1] != 1)) {
    return Error{fmt::format(
        "{}: {} has shape {}; labels must be one integer per sample, shape (N,) (from one-hot "
        "rows: {}.argmax(1))",
        file, name, npy_shape_text(y.shape), name)};
  }
  if (y.shape[0] != n) {
    return Error{
        fmt::format("{}: {} holds {} samples but {} holds {} labels; they must be equally "
                    "long, one label per sample",
                    file, x_name, n, name, y.shape[0])};
  }
  return {};
}

Result<Arrays> open_arrays(std::span<const std::uint8_t> bytes, const std::string& file,
                           bool headers_only) {
  Arrays a;
  auto directory = read_zip_directory(bytes, file);
  if (!directory) return directory.error();
  a.directory = std::move(directory).value();
  for (const auto& e : a.directory) {
    if (e.name.ends_with(".npy")) a.entries.emplace(e.name.substr(0, e.name.size() - 4), &e);
  }
  if (a.entries.empty()) {
    return Error{
        fmt::format("{}: a zip archive but not an .npz: it holds no .npy arrays ({}); "
                    "write it with {}",
                    file, contents(a.directory), kSavez)};
  }
  std::vector<const char*> names = {"x_train", "y_train", "x_test", "y_test"};
  names.insert(names.end(), std::begin(kNpzKeyNames), std::end(kNpzKeyNames));
  a.keep.reserve(names.size());
  for (const char* name : names) {
    const auto it = a.entries.find(name);
    if (it == a.entries.end()) {
      if (name[0] != 'x' && name[0] != 'y') continue;  // a key the file need not have
      return Error{fmt::format(
          "{}: no array '{}' (the file holds {}); an npz data set needs x_train, y_train, "
          "x_test and y_test: {}",
          file, name, contents(a.directory), kSavez)};
    }
    const bool header = headers_only && name[0] == 'x';
    auto data = read_zip_entry(bytes, *it->second, file, header ? kHeaderPrefix : UINT64_MAX);
    if (!data) return data.error();
    a.keep.push_back(std::move(data).value());
    auto array = parse_npy(a.keep.back().bytes(), !header);
    if (!array) return Error{fmt::format("{}: {} {}", file, name, array.error().message)};
    a.by_name.emplace(name, std::move(array).value());
  }
  for (const char* x : {"x_train", "x_test"}) {
    if (auto s = check_x(a[x], file, x); !s) return s.error();
  }
  auto train_shape = sample_shape(a["x_train"], file, "x_train");
  if (!train_shape) return train_shape.error();
  auto test_shape = sample_shape(a["x_test"], file, "x_test");
  if (!test_shape) return test_shape.error();
  a.shape = *train_shape;
  if (!(*train_shape == *test_shape)) {
    return Error{fmt::format(
        "{}: x_train's samples are {}x{}x{} (shape {}) but x_test's {}x{}x{} (shape {}); both "
        "splits need the same sample shape",
        file, train_shape->channels, train_shape->height, train_shape->width,
        npy_shape_text(a["x_train"].shape), test_shape->channels, test_shape->height,
        test_shape->width, npy_shape_text(a["x_test"].shape))};
  }
  for (const char* x : {"x_train", "x_test"}) {
    if (a[x].shape[0] == 0) {
      return Error{fmt::format(
          "{}: {} holds no samples (shape {}); a data set needs at least one training and one "
          "test sample",
          file, x, npy_shape_text(a[x].shape))};
    }
  }
  if (auto s = check_y(a["y_train"], a["x_train"].shape[0], file, "y_train", "x_train"); !s) {
    return s.error();
  }
  if (auto s = check_y(a["y_test"], a["x_test"].shape[0], file, "y_test", "x_test"); !s) {
    return s.error();
  }
  auto keys = read_npz_keys(a.by_name, file);
  if (!keys) return keys.error();
  a.keys = *keys;
  if (auto s = check_npz_headers(a["x_train"], a["x_test"], a.keys, file); !s) return s.error();
  auto classes = count_npz_classes(a["y_train"], a["y_test"], a.keys, file);
  if (!classes) return classes.error();
  a.classes = std::move(classes).value();
  return a;
}

// Features to floats: uint8 multiplied by `scale` (1/255, or 1/pixel_max), floats as they are.
// Hidden from ThreadSanitizer as idx.cpp's: the buffer is this thread's until the Dataset is
// shared.
Result<Split> to_split(const NpyArray& x, const NpyArray& y, const ImageShape& shape, float scale,
                       const std::string& file, const char* name) {
  Split split;
  split.shape = shape;
  split.count = x.shape[0];
  const std::size_t n = x.elements;
  const tsan::HiddenScope hidden;
  split.features.resize(n);
  const std::uint8_t* p = x.data.data();
  float* out = split.features.data();
  if (*x.type == NpyType::kU1) {
    for (std::size_t i = 0; i < n; ++i) out[i] = p[i] * scale;
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      double v;
      if (*x.type == NpyType::kF4) {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        v = f;
      } else {
        std::memcpy(&v, p + 8 * i, 8);
      }
      out[i] = static_cast<float>(v);
      if (!std::isfinite(out[i])) {
        return Error{fmt::format(
            "{}: {} holds {} at sample {}, element {}{}; features must be finite: replace or "
            "drop them (numpy.nan_to_num, or scale the data)",
            file, name, v, i / shape.dim(), i % shape.dim(),
            std::isfinite(v) ? ", beyond float32's range" : "")};
      }
    }
  }
  split.labels.resize(split.count);
  for (std::size_t i = 0; i < split.count; ++i) {
    split.labels[i] = static_cast<std::uint8_t>(npy_integer(y, i));
  }
  return split;
}

std::uint32_t crc_of(const Arrays& a, std::initializer_list<const char*> names) {
  uLong crc = 0;
  for (const char* name : names) {
    const auto it = a.entries.find(name);
    if (it == a.entries.end()) continue;
    crc = crc32_combine(crc, it->second->crc, static_cast<z_off_t>(it->second->size));
  }
  return static_cast<std::uint32_t>(crc);
}

// What the whole load holds at once, from the headers: each deflated array inflated, and the
// features as float32 with one byte per label; refused before any of it is allocated.
Status check_npz_memory(const Arrays& heads, const std::string& file) {
  std::uint64_t need = 0;
  for (const char* name : {"x_train", "y_train", "x_test", "y_test"}) {
    const ZipEntry& e = *heads.entries.at(name);
    if (e.method != 0) need += e.size;
  }
  const std::uint64_t samples = heads["x_train"].shape[0] + heads["x_test"].shape[0];
  need += (heads["x_train"].elements + heads["x_test"].elements) * sizeof(float) + samples;
  return check_memory(
      need,
      fmt::format("{}: {} samples of {}x{}x{} as float32{}", file, samples, heads.shape.channels,
                  heads.shape.height, heads.shape.width,
                  std::any_of(heads.entries.begin(), heads.entries.end(),
                              [](const auto& e) { return e.second->method != 0; })
                      ? " and its arrays inflated"
                      : ""),
      "save fewer samples (numpy.savez(PATH, x_train=x_train[:N], y_train=y_train[:N], ...)), "
      "or run where more memory is allowed");
}

constexpr const char* kMissingFix =
    "give the path of an .npz file, relative to the current directory";

}  // namespace

Result<Dataset> parse_npz_dataset(std::span<const std::uint8_t> bytes,
                                  const std::filesystem::path& file, const std::string& name) {
  {
    auto heads = open_arrays(bytes, file.string(), true);
    if (!heads) return heads.error();
    if (auto s = check_npz_memory(*heads, file.string()); !s) return s.error();
  }
  auto a = open_arrays(bytes, file.string(), false);
  if (!a) return a.error();
  if (auto s = check_npz_pixels((*a)["x_train"], (*a)["x_test"], a->keys, file.string()); !s) {
    return s.error();
  }
  Dataset ds;
  ds.name = name;
  ds.num_classes = a->classes.count;
  const float scale = npz_pixel_scale(a->keys);
  auto train =
      to_split((*a)["x_train"], (*a)["y_train"], a->shape, scale, file.string(), "x_train");
  if (!train) return train.error();
  auto test = to_split((*a)["x_test"], (*a)["y_test"], a->shape, scale, file.string(), "x_test");
  if (!test) return test.error();
  ds.train = std::move(train).value();
  ds.test = std::move(test).value();
  ds.digest =
      fmt::format("{:08x}{:08x}", crc_of(*a, {"x_train", "y_train"}),
                  crc_of(*a, {"x_test", "y_test", "num_classes", "pixel_max", "channels_first"}));
  return ds;
}

Result<Dataset> load_npz_dataset(const std::filesystem::path& file, const std::string& name) {
  auto bytes = read_file_bytes(file, kMissingFix);
  if (!bytes) return bytes.error();
  return parse_npz_dataset(*bytes, file, name);
}

Result<NpzInfo> parse_npz_info(std::span<const std::uint8_t> bytes,
                               const std::filesystem::path& file) {
  auto a = open_arrays(bytes, file.string(), true);
  if (!a) return a.error();
  return NpzInfo{.shape = a->shape,
                 .num_classes = a->classes.count,
                 .scale = npz_scale_text((*a)["x_train"], (*a)["x_test"], a->keys),
                 .layout = npz_layout_text((*a)["x_train"], a->keys),
                 .classes = std::move(a->classes.how)};
}

Result<NpzInfo> read_npz_info(const std::filesystem::path& file) {
  auto bytes = read_file_bytes(file, kMissingFix);
  if (!bytes) return bytes.error();
  return parse_npz_info(*bytes, file);
}

}  // namespace stalesgd

// An .npz file into a Dataset: the zip's entries (zip_archive.cpp) parsed as .npy arrays
// (npy.cpp), checked against one another, and their features and labels converted.
#include "data/npz.hpp"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "data/file_bytes.hpp"
#include "data/npy.hpp"
#include "data/zip_archive.hpp"
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
  int num_classes = 0;
  const NpyArray& operator[](const std::string& name) const { return by_name.at(name); }
};

// "x_train, y_train, notes.txt": what the file holds, for messages.
std::string contents(const std::vector<ZipEntry>& directory) {
  std::string out;
  for (std::size_t i = 0; i < directory.size() && i < 12; ++i) {
    std::string_view n = directory[i].name;
    if (n.ends_with(".npy")) n.remove_suffix(4);
    out += (i ? ", " : "") + printable_name(n);
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

// num_classes if the file has it, else the largest label + 1; every label must be below it.
Result<int> count_classes(const Arrays& a, const std::string& file) {
  std::optional<std::int64_t> given;
  if (auto it = a.by_name.find("num_classes"); it != a.by_name.end()) {
    const NpyArray& c = it->second;
    if (!c.type || !npy_is_integer(*c.type) || c.elements != 1 || c.shape.size() > 1) {
      return Error{
          fmt::format("{}: num_classes has shape {} and {}; it must be one integer: "
                      "numpy.savez(..., num_classes=10)",
                      file, npy_shape_text(c.shape), npy_dtype_text(c))};
    }
    given = npy_integer(c, 0);
    if (*given < 2 || *given > 256) {
      return Error{fmt::format(
          "{}: num_classes = {} is out of range; stalesgd trains 2 to 256 classes (labels are "
          "stored as bytes)",
          file, npy_integer_text(c, 0))};
    }
  }
  const std::int64_t limit = given.value_or(256);
  std::int64_t largest = -1;
  for (const char* name : {"y_train", "y_test"}) {
    const NpyArray& y = a[name];
    for (std::size_t i = 0; i < y.elements; ++i) {
      const std::int64_t v = npy_integer(y, i);
      if (v >= 0 && v < limit) {
        largest = std::max(largest, v);
        continue;
      }
      const std::string value = npy_integer_text(y, i);
      if (given) {
        return Error{fmt::format(
            "{}: {}[{}] = {} is out of range [0, {}) (num_classes = {}); labels must be 0 .. "
            "num_classes-1: fix the label or num_classes",
            file, name, i, value, limit, limit)};
      }
      return Error{fmt::format(
          "{}: {}[{}] = {} is {}; labels must be 0 .. C-1 with at most 256 classes: fix the "
          "labels (or store num_classes)",
          file, name, i, value, v < 0 ? "negative" : "over 255")};
    }
  }
  if (given) return static_cast<int>(*given);
  if (largest < 1) {
    return Error{fmt::format(
        "{}: every label is {}, one class; a data set needs at least 2 classes: fix the labels "
        "or store num_classes",
        file, largest)};
  }
  return static_cast<int>(largest + 1);
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
  a.keep.reserve(5);
  for (const char* name : {"x_train", "y_train", "x_test", "y_test", "num_classes"}) {
    const auto it = a.entries.find(name);
    if (it == a.entries.end()) {
      if (std::string_view(name) == "num_classes") continue;
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
  auto classes = count_classes(a, file);
  if (!classes) return classes.error();
  a.num_classes = *classes;
  return a;
}

// Features to floats: uint8 scaled to [0, 1], floats as they are. Hidden from ThreadSanitizer
// as idx.cpp's: the buffer is this thread's until the Dataset is shared.
Result<Split> to_split(const NpyArray& x, const NpyArray& y, const ImageShape& shape,
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
    constexpr float kScale = 1.0f / 255.0f;
    for (std::size_t i = 0; i < n; ++i) out[i] = p[i] * kScale;
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

constexpr const char* kMissingFix =
    "give the path of an .npz file, relative to the current directory";

}  // namespace

Result<Dataset> parse_npz_dataset(std::span<const std::uint8_t> bytes,
                                  const std::filesystem::path& file, const std::string& name) {
  auto a = open_arrays(bytes, file.string(), false);
  if (!a) return a.error();
  Dataset ds;
  ds.name = name;
  ds.num_classes = a->num_classes;
  auto train = to_split((*a)["x_train"], (*a)["y_train"], a->shape, file.string(), "x_train");
  if (!train) return train.error();
  auto test = to_split((*a)["x_test"], (*a)["y_test"], a->shape, file.string(), "x_test");
  if (!test) return test.error();
  ds.train = std::move(train).value();
  ds.test = std::move(test).value();
  ds.digest = fmt::format("{:08x}{:08x}", crc_of(*a, {"x_train", "y_train"}),
                          crc_of(*a, {"x_test", "y_test", "num_classes"}));
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
  return NpzInfo{a->shape, a->num_classes};
}

Result<NpzInfo> read_npz_info(const std::filesystem::path& file) {
  auto bytes = read_file_bytes(file, kMissingFix);
  if (!bytes) return bytes.error();
  return parse_npz_info(*bytes, file);
}

}  // namespace stalesgd

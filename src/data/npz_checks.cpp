// The checks of npz_checks.hpp: each looks at the headers, the labels or the uint8 values, and
// names what it saw with the fix.
#include "data/npz_checks.hpp"

#include <algorithm>
#include <bitset>
#include <vector>

#include <fmt/format.h>

namespace stalesgd {
namespace {

struct KeySpec {
  const char* name;
  std::optional<std::int64_t> NpzKeys::*field;
  std::int64_t lo, hi;
  const char* example;
  const char* range;  // what the value must be, after "is out of range; "
};
constexpr KeySpec kKeys[] = {
    {"num_classes", &NpzKeys::num_classes, 2, 256, "num_classes=10",
     "stalesgd trains 2 to 256 classes (labels are stored as bytes)"},
    {"pixel_max", &NpzKeys::pixel_max, 1, 255, "pixel_max=16",
     "it is the largest value uint8 features mean, 1 to 255"},
    {"channels_first", &NpzKeys::channels_first, 1, 1, "channels_first=1",
     "it must be 1, to keep a 4-D x as (N, C, H, W) (channels-last images are turned with "
     "x.transpose(0, 3, 1, 2))"},
};

bool is_u8(const NpyArray& x) {
  return x.type == NpyType::kU1;
}

const char* type_name(const NpyArray& x) {
  return is_u8(x) ? "uint8" : x.type == NpyType::kF4 ? "float32" : "float64";
}

// "x_train and x_test" or the one of them that `pick` takes.
std::vector<const char*> splits_where(const NpyArray& x_train, const NpyArray& x_test,
                                      bool (*pick)(const NpyArray&)) {
  std::vector<const char*> out;
  if (pick(x_train)) out.push_back("x_train");
  if (pick(x_test)) out.push_back("x_test");
  return out;
}

std::string names_text(const std::vector<const char*>& names) {
  return names.size() == 2 ? fmt::format("{} and {} are", names[0], names[1])
                           : fmt::format("{} is", names[0]);
}

// "3", "3 or 5", "3, 5 or 7", "3, 5, 7, 8 or 6 others".
std::string either(const std::vector<int>& v) {
  constexpr std::size_t kShown = 4;
  std::string out;
  const std::size_t shown = std::min(v.size(), kShown);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += i + 1 == v.size() ? " or " : ", ";
    out += std::to_string(v[i]);
  }
  if (v.size() > kShown) out += fmt::format(" or {} others", v.size() - kShown);
  return out;
}

std::string range_text(int lo, int hi) {
  return fmt::format("{} .. {}", lo, hi);
}

}  // namespace

Result<NpzKeys> read_npz_keys(const std::map<std::string, NpyArray>& arrays,
                              const std::string& file) {
  NpzKeys keys;
  for (const auto& k : kKeys) {
    const auto it = arrays.find(k.name);
    if (it == arrays.end()) continue;
    const NpyArray& c = it->second;
    if (!c.type || !npy_is_integer(*c.type) || c.elements != 1 || c.shape.size() > 1) {
      return Error{
          fmt::format("{}: {} has shape {} and {}; it must be one integer: numpy.savez(..., {})",
                      file, k.name, npy_shape_text(c.shape), npy_dtype_text(c), k.example)};
    }
    const std::int64_t v = npy_integer(c, 0);
    if (v < k.lo || v > k.hi) {
      return Error{fmt::format("{}: {} = {} is out of range; {}", file, k.name,
                               npy_integer_text(c, 0), k.range)};
    }
    keys.*k.field = v;
  }
  return keys;
}

Status check_npz_headers(const NpyArray& x_train, const NpyArray& x_test, const NpzKeys& keys,
                         const std::string& file) {
  if (keys.pixel_max && !is_u8(x_train) && !is_u8(x_test)) {
    return Error{fmt::format(
        "{}: pixel_max = {} is stored, but x_train is {} and x_test {}, taken as they are; "
        "pixel_max scales uint8 features only: drop it",
        file, *keys.pixel_max, type_name(x_train), type_name(x_test))};
  }
  const auto& s = x_train.shape;
  if (keys.channels_first && s.size() != 4) {
    return Error{fmt::format(
        "{}: channels_first = 1 is stored, but x_train has shape {}, not (N, C, H, W); it "
        "applies to a 4-D x only: drop it",
        file, npy_shape_text(s))};
  }
  if (keys.channels_first || s.size() != 4) return {};
  const std::uint64_t last = s[3];
  if ((last == 1 || last == 3 || last == 4) && s[1] > last) {
    return Error{fmt::format(
        "{}: x_train has shape {}, which stalesgd reads channels first (N, C, H, W), as {} "
        "channels of {}x{}; a last axis of {} looks like channels-last images (N, H, W, C): "
        "save numpy.savez(PATH, x_train=x_train.transpose(0, 3, 1, 2), "
        "x_test=x_test.transpose(0, 3, 1, 2), ...), or store channels_first=1 if it is {} "
        "channels of {}x{}",
        file, npy_shape_text(s), s[1], s[2], s[3], last, s[1], s[2], s[3])};
  }
  return {};
}

Result<NpzClasses> count_npz_classes(const NpyArray& y_train, const NpyArray& y_test,
                                     const NpzKeys& keys, const std::string& file) {
  const std::optional<std::int64_t> given = keys.num_classes;
  const std::int64_t limit = given.value_or(256);
  std::bitset<256> seen;
  for (const auto& [y, name] : {std::pair{&y_train, "y_train"}, std::pair{&y_test, "y_test"}}) {
    for (std::size_t i = 0; i < y->elements; ++i) {
      const std::int64_t v = npy_integer(*y, i);
      if (v >= 0 && v < limit) {
        seen.set(static_cast<std::size_t>(v));
        continue;
      }
      const std::string value = npy_integer_text(*y, i);
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
  int smallest = 0, largest = 255;
  while (!seen[static_cast<std::size_t>(smallest)]) ++smallest;  // both splits are non-empty
  while (!seen[static_cast<std::size_t>(largest)]) --largest;
  const std::string labels = range_text(smallest, largest);
  if (given) {
    return NpzClasses{static_cast<int>(*given),
                      fmt::format("num_classes = {}; labels {}", *given, labels)};
  }
  if (smallest == largest) {
    return Error{fmt::format(
        "{}: every label is {}, one class; a data set needs at least 2 classes: fix the labels "
        "or store num_classes",
        file, largest)};
  }
  const int classes = largest + 1;
  std::vector<int> missing;
  for (int c = smallest + 1; c < largest; ++c) {
    if (!seen[static_cast<std::size_t>(c)]) missing.push_back(c);
  }
  if (smallest > 0 && missing.empty()) {
    const std::string empty = smallest == 1 ? "class 0" : "classes " + range_text(0, smallest - 1);
    return Error{fmt::format(
        "{}: the smallest label is {} (y_train and y_test hold {}), so {} would be empty and "
        "stalesgd would train {} classes: save numpy.savez(PATH, ..., y_train=y_train - {}, "
        "y_test=y_test - {}), or store num_classes={} if {} {} meant to be empty",
        file, smallest, labels, empty, classes, smallest, smallest, classes, empty,
        smallest == 1 ? "is" : "are")};
  }
  for (int c = smallest; c-- > 0;) missing.insert(missing.begin(), c);
  if (!missing.empty()) {
    const std::string empty = missing.size() == 1
                                  ? fmt::format("class {} of {}", missing[0], classes)
                                  : fmt::format("{} of the {} classes", missing.size(), classes);
    return Error{fmt::format(
        "{}: no label is {} (y_train and y_test hold {}), so {} would be empty: renumber the "
        "labels, numpy.savez(PATH, ..., "
        "y_train=numpy.searchsorted(numpy.union1d(y_train, y_test), y_train), "
        "y_test=numpy.searchsorted(numpy.union1d(y_train, y_test), y_test)), or store "
        "num_classes={} if {} meant to be empty",
        file, either(missing), labels, empty, classes, missing.size() == 1 ? "it is" : "they are")};
  }
  return NpzClasses{classes, fmt::format("the largest label + 1; labels {}", labels)};
}

Status check_npz_pixels(const NpyArray& x_train, const NpyArray& x_test, const NpzKeys& keys,
                        const std::string& file) {
  const auto u8 = splits_where(x_train, x_test, is_u8);
  if (u8.empty()) return {};
  int largest = 0;
  for (const NpyArray* x : {&x_train, &x_test}) {
    if (is_u8(*x)) largest = std::max<int>(largest, *std::ranges::max_element(x->data));
  }
  if (keys.pixel_max) {
    const auto pixel_max = static_cast<int>(*keys.pixel_max);
    if (largest <= pixel_max) return {};
    for (const auto& [x, name] : {std::pair{&x_train, "x_train"}, std::pair{&x_test, "x_test"}}) {
      if (!is_u8(*x)) continue;
      const auto at = std::ranges::find_if(x->data, [&](std::uint8_t v) { return v > pixel_max; });
      if (at == x->data.end()) continue;
      const auto i = static_cast<std::size_t>(at - x->data.begin());
      const std::size_t dim = x->elements / x->shape[0];
      return Error{fmt::format(
          "{}: {} holds {} at sample {}, element {}, over pixel_max = {}, so it would read as "
          "{:.3g}: store pixel_max={}, the largest value of {} (or drop pixel_max to scale by "
          "1/255)",
          file, name, int{*at}, i / dim, i % dim, pixel_max, static_cast<double>(*at) / pixel_max,
          largest, u8.size() == 2 ? "x_train and x_test" : u8[0])};
    }
  }
  if (keys.pixel_max || largest >= kDarkPixels) return {};
  const int m = std::max(largest, 1);
  std::string fixed;
  for (const char* name : u8)
    fixed += fmt::format("{}=({} / {}).astype('float32'), ", name, name, m);
  return Error{fmt::format(
      "{}: {} uint8 with maximum {}; stalesgd scales uint8 by 1/255, so every feature would be "
      "at most {}/255 = {:.2g}: save numpy.savez(PATH, {}...), or store pixel_max={} to scale "
      "by 1/{} (pixel_max=255 keeps 1/255)",
      file, names_text(u8), largest, largest, largest / 255.0, fixed, m, m)};
}

float npz_pixel_scale(const NpzKeys& keys) {
  return 1.0f / static_cast<float>(keys.pixel_max.value_or(255));
}

std::string npz_scale_text(const NpyArray& x_train, const NpyArray& x_test, const NpzKeys& keys) {
  const auto one = [&](const NpyArray& x) {
    if (!is_u8(x)) return fmt::format("{} as stored", type_name(x));
    if (!keys.pixel_max) return std::string("uint8 scaled by 1/255");
    return fmt::format("uint8 scaled by 1/{} (pixel_max = {})", *keys.pixel_max, *keys.pixel_max);
  };
  const std::string train = one(x_train), test = one(x_test);
  if (train == test) return train;
  return fmt::format("x_train {}, x_test {}", train, test);
}

std::string npz_layout_text(const NpyArray& x_train, const NpzKeys& keys) {
  const auto& s = x_train.shape;
  std::string axes = "(N";
  for (std::size_t d = 1; d < s.size(); ++d) axes += fmt::format(", {}", s[d]);
  const char* how = s.size() == 2         ? "vectors"
                    : s.size() == 3       ? "images of one channel"
                    : keys.channels_first ? "channels first (channels_first = 1)"
                                          : "channels first";
  return fmt::format("{}): {}", axes, how);
}

}  // namespace stalesgd

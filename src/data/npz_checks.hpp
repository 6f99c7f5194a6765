// An .npz that reads but looks wrong is refused (data/README.md, "Your own data: .npz"): uint8
// features far below 255, labels that start above 0 or skip a class, a 4-D x that looks
// channels-last. Small integer arrays saved beside the data say that it is meant, and travel
// with it: pixel_max, num_classes, channels_first. Each refusal is one line naming the file,
// the array, what was seen, why it matters, and the NumPy line or the key that fixes it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "data/npy.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// The keys a file may hold beside x and y, each one integer; empty when absent.
struct NpzKeys {
  std::optional<std::int64_t> num_classes;     // 2 .. 256: the classes, whatever the labels
  std::optional<std::int64_t> pixel_max;       // 1 .. 255: uint8 features are scaled by 1/it
  std::optional<std::int64_t> channels_first;  // 1: a 4-D x is (N, C, H, W) whatever its axes
};

// The names of the keys, in the order the data set's digest takes them (after y_test).
inline constexpr const char* kNpzKeyNames[] = {"num_classes", "pixel_max", "channels_first"};

// Uint8 features whose largest value over both splits is below this are refused without
// pixel_max: a quarter of 255, where no image that means 0..255 ends.
inline constexpr int kDarkPixels = 64;

// The keys of `arrays` (by name, as parsed), each checked for shape, dtype and range.
Result<NpzKeys> read_npz_keys(const std::map<std::string, NpyArray>& arrays,
                              const std::string& file);

// From the headers: pixel_max only with a uint8 x; channels_first only with a 4-D x; a 4-D x
// whose last axis is 1, 3 or 4 and smaller than its second (channels-last) only with
// channels_first.
Status check_npz_headers(const NpyArray& x_train, const NpyArray& x_test, const NpzKeys& keys,
                         const std::string& file);

// The classes and how they were found ("the largest label + 1; labels 0 .. 9", "num_classes =
// 11; labels 1 .. 10"): num_classes if stored (every
// label below it), else the largest label + 1 over both splits, refused when the smallest label
// is above 0 or a class below the largest has no label.
struct NpzClasses {
  int count = 0;
  std::string how;
};
Result<NpzClasses> count_npz_classes(const NpyArray& y_train, const NpyArray& y_test,
                                     const NpzKeys& keys, const std::string& file);

// From the values (the whole load only): uint8 features whose largest value is below
// kDarkPixels without pixel_max, or above pixel_max.
Status check_npz_pixels(const NpyArray& x_train, const NpyArray& x_test, const NpzKeys& keys,
                        const std::string& file);

// What uint8 features are multiplied by: 1/pixel_max, else 1/255.
float npz_pixel_scale(const NpzKeys& keys);

// How the features are read, in words: "uint8 scaled by 1/16 (pixel_max = 16)", "float32 as
// stored"; and x's layout: "(N, 8, 8): images of one channel", "(N, 3, 32, 32): channels
// first".
std::string npz_scale_text(const NpyArray& x_train, const NpyArray& x_test, const NpzKeys& keys);
std::string npz_layout_text(const NpyArray& x_train, const NpzKeys& keys);

}  // namespace stalesgd

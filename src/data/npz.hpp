// Data sets from NumPy .npz files (--dataset npz:PATH, as numpy.savez or savez_compressed write
// them): the arrays x_train, y_train, x_test and y_test of the Keras mnist.npz layout, and
// optionally the scalar integers num_classes, pixel_max and channels_first (npz_checks.hpp).
// Every problem is one line naming the file, the array and the fix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// x of shape (N, D) is read as 1x1xD samples, (N, H, W) as 1xHxW, (N, C, H, W) as CxHxW
// (channels first, as PyTorch); uint8 pixels are scaled by 1/255 (1/pixel_max), float32 and
// float64 values taken as they are (they must be finite). y holds one integer label per sample,
// shape (N,) or (N, 1). The classes are num_classes if the file has it, else the largest label
// + 1 over both splits; 2 to 256. What looks wrong is refused (npz_checks.hpp).
struct NpzInfo {
  ImageShape shape;
  int num_classes = 0;
  // What the reader decided, in words, for `stalesgd data info`.
  std::string scale;   // "uint8 scaled by 1/16 (pixel_max = 16)", "float32 as stored"
  std::string layout;  // "(N, 8, 8): images of one channel"
  std::string
      classes;  // "the largest label + 1; labels 0 .. 9", "num_classes = 11; labels 1 .. 10"
};

// Reads `file` into a Dataset called `name` (npz:PATH). Its digest is the CRC-32 of the .npy
// bytes of x_train then y_train, then of x_test, y_test, num_classes, pixel_max and
// channels_first (those the file has): the arrays as numpy wrote them, whether the file stores
// or deflates them.
Result<Dataset> load_npz_dataset(const std::filesystem::path& file, const std::string& name);

// The same from the file's bytes in memory; `file` names it in messages. load_npz_dataset reads
// the file and calls it; the fuzzer calls it directly (docs/reliability.md).
Result<Dataset> parse_npz_dataset(std::span<const std::uint8_t> bytes,
                                  const std::filesystem::path& file, const std::string& name);

// The sample shape and the classes, from the headers of x_train and x_test, the labels and the
// keys alone (the features are neither inflated nor checked): every file the whole load takes
// it takes too, with the same shape and classes.
Result<NpzInfo> read_npz_info(const std::filesystem::path& file);
Result<NpzInfo> parse_npz_info(std::span<const std::uint8_t> bytes,
                               const std::filesystem::path& file);

}  // namespace stalesgd

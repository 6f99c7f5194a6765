// Dataset: a labelled image data set in memory, ready for minibatch sampling without copies.
// Features are row-major floats (sample i starts at features + i * dim()): pixels scaled to
// [0, 1], or an .npz's float arrays as they are. One uint8 label per sample. Immutable once
// loaded: safe to read from any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stalesgd {

// Shape of one sample, channels-first (CHW) as the models read it.
struct ImageShape {
  int channels = 1;
  int height = 0;
  int width = 0;
  std::size_t dim() const { return static_cast<std::size_t>(channels) * height * width; }
  bool operator==(const ImageShape&) const = default;
};

// One split (train or test): `count` samples of `shape.dim()` floats each.
struct Split {
  ImageShape shape;
  std::size_t count = 0;
  std::vector<float> features;       // count * shape.dim(), row-major
  std::vector<std::uint8_t> labels;  // count

  std::size_t dim() const { return shape.dim(); }
  const float* sample(std::size_t i) const { return features.data() + i * dim(); }
  // A contiguous run of samples [first, first + n): a view, no copy.
  std::span<const float> rows(std::size_t first, std::size_t n) const {
    return {features.data() + first * dim(), n * dim()};
  }
  std::span<const std::uint8_t> label_rows(std::size_t first, std::size_t n) const {
    return {labels.data() + first, n};
  }
};

// `size` contiguous samples (a minibatch, a view into a Split or a sampler's buffer): features
// row-major (size x input dim), one label each.
struct Batch {
  const float* features = nullptr;
  const std::uint8_t* labels = nullptr;
  int size = 0;
  // The minibatch's own random stream, for a model whose training forward draws (a TorchScript
  // module's Dropout): a sampler derives it from its stream and the draw's index, so a run
  // draws the same masks every time (docs/models.md, "Train mode and buffers").
  std::uint64_t seed = 0;
};

struct Dataset {
  std::string name;  // "mnist", "fashion-mnist", "cifar10", or "npz:PATH" as given
  int num_classes = 10;
  Split train;
  Split test;
  // Samples held out of the training file for validation (--holdout, stalesgd/data/holdout.hpp):
  // empty unless a run asked for them; never trained on.
  Split val;
  // The CRC-32s of the files' bytes as read, train then test, as 16 hex digits (an .npz: of its
  // arrays' .npy bytes, src/data/npz.hpp): the data set's identity, which a resumed run checks
  // against its checkpoint. Empty for data made in memory.
  std::string digest;
};

// Per-split statistics for `stalesgd data info`.
struct SplitStats {
  std::vector<std::size_t> class_counts;  // num_classes entries
  double pixel_mean = 0.0;
  double pixel_std = 0.0;
};
SplitStats compute_stats(const Split& split, int num_classes);

}  // namespace stalesgd

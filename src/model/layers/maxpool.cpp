#include "model/layers/maxpool.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace stalesgd::model {
namespace {

struct PoolScratch final : LayerScratch {
  std::vector<std::uint8_t> switches;  // per output: 0..3 = (dy, dx) of the winner, 2*dy + dx
};

}  // namespace

MaxPool2::MaxPool2(PoolConfig config)
    : config_(config), out_h_(config.height / 2), out_w_(config.width / 2) {}

std::size_t MaxPool2::input_size() const {
  return static_cast<std::size_t>(config_.channels) * config_.height * config_.width;
}

std::size_t MaxPool2::output_size() const {
  return static_cast<std::size_t>(config_.channels) * out_h_ * out_w_;
}

std::unique_ptr<LayerScratch> MaxPool2::make_scratch(int max_batch, GemmScratch&) const {
  auto s = std::make_unique<PoolScratch>();
  s->switches.resize(static_cast<std::size_t>(max_batch) * output_size());
  return s;
}

void MaxPool2::forward(const float*, const float* in, float* out, int n, LayerScratch& scratch,
                       GemmScratch&) const {
  auto& s = static_cast<PoolScratch&>(scratch);
  const int c = config_.channels;
  const std::size_t row = static_cast<std::size_t>(config_.width) * c;
  std::uint8_t* sw = s.switches.data();
  for (int i = 0; i < n; ++i) {
    const float* image = in + i * input_size();
    for (int yo = 0; yo < out_h_; ++yo) {
      for (int xo = 0; xo < out_w_; ++xo) {
        const float* p00 = image + 2 * yo * row + static_cast<std::size_t>(2 * xo) * c;
        const float* p01 = p00 + c;
        const float* p10 = p00 + row;
        const float* p11 = p10 + c;
        for (int ch = 0; ch < c; ++ch) {
          // Branch-free argmax; the first of equal values wins.
          float best = p00[ch];
          std::uint8_t arg = 0;
          arg = p01[ch] > best ? 1 : arg;
          best = std::max(best, p01[ch]);
          arg = p10[ch] > best ? 2 : arg;
          best = std::max(best, p10[ch]);
          arg = p11[ch] > best ? 3 : arg;
          best = std::max(best, p11[ch]);
          *out++ = best;
          *sw++ = arg;
        }
      }
    }
  }
}

void MaxPool2::backward(const float*, const float*, const float*, float* dout, float* din,
                        float*, int n, LayerScratch& scratch, GemmScratch&) const {
  if (din == nullptr) return;
  auto& s = static_cast<PoolScratch&>(scratch);
  const int c = config_.channels;
  const std::size_t row = static_cast<std::size_t>(config_.width) * c;
  if (config_.height % 2 != 0 || config_.width % 2 != 0) {
    // Inputs outside every window get no gradient; clear all, the windows overwrite theirs.
    std::fill(din, din + static_cast<std::size_t>(n) * input_size(), 0.0f);
  }
  const std::uint8_t* sw = s.switches.data();
  const float* g = dout;
  for (int i = 0; i < n; ++i) {
    float* image = din + i * input_size();
    for (int yo = 0; yo < out_h_; ++yo) {
      for (int xo = 0; xo < out_w_; ++xo) {
        float* p00 = image + 2 * yo * row + static_cast<std::size_t>(2 * xo) * c;
        float* p01 = p00 + c;
        float* p10 = p00 + row;
        float* p11 = p10 + c;
        for (int ch = 0; ch < c; ++ch) {
          const float d = g[ch];
          const std::uint8_t a = sw[ch];
          p00[ch] = a == 0 ? d : 0.0f;
          p01[ch] = a == 1 ? d : 0.0f;
          p10[ch] = a == 2 ? d : 0.0f;
          p11[ch] = a == 3 ? d : 0.0f;
        }
        g += c;
        sw += c;
      }
    }
  }
}

}  // namespace stalesgd::model

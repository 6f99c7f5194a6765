// im2col/col2im: col2im is the adjoint of im2col, <im2col(x), c> = <x, col2im(c)>, in every
// layout; and one planar column is the shifted, zero-padded image.
#include "model/layers/im2col.hpp"

#include <numeric>

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("col2im is the adjoint of im2col", "[model][im2col]") {
  const ConvGeometry cases[] = {{1, 6, 5, 3, 1, false},
                                {3, 5, 6, 3, 1, false},
                                {3, 5, 6, 3, 2, true},
                                {2, 4, 4, 2, 0, false}};
  for (const auto& g : cases) {
    INFO(g.channels << "x" << g.height << "x" << g.width << " k" << g.kernel << " pad " << g.pad
                    << (g.chw_input ? " chw" : " hwc"));
    const int m = 2;
    const auto x = random_floats(g.input_size() * m, -1.0f, 1.0f, 1);
    const std::size_t size = g.patch() * g.pixels() * m;
    const auto c = random_floats(size, -1.0f, 1.0f, 2);
    std::vector<float> cols(size), back(x.size());
    im2col(g, x.data(), m, cols.data());
    col2im(g, c.data(), m, back.data());
    const double lhs = std::inner_product(cols.begin(), cols.end(), c.begin(), 0.0);
    const double rhs = std::inner_product(x.begin(), x.end(), back.begin(), 0.0);
    CHECK(lhs == Approx(rhs).epsilon(1e-5));
  }
}

TEST_CASE("A planar im2col column is the shifted, zero-padded image", "[model][im2col]") {
  const ConvGeometry g{1, 3, 3, 3, 1, false};
  std::vector<float> x(9);
  std::iota(x.begin(), x.end(), 1.0f);  // 1..9
  std::vector<float> cols(9 * 9);
  im2col(g, x.data(), 1, cols.data());
  // entry (ky, kx) = (0, 0) reads the pixel up-left of each output pixel
  const std::vector<float> up_left(cols.begin(), cols.begin() + 9);
  CHECK(up_left == std::vector<float>{0, 0, 0, 0, 1, 2, 0, 4, 5});
  // the centre entry (1, 1) is the image itself
  const std::vector<float> centre(cols.begin() + 4 * 9, cols.begin() + 5 * 9);
  CHECK(centre == x);
}

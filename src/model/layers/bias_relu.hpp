// The bias add and the ReLU, fused into one pass over a layer's output, and their backward
// passes. A layer's output is a column-major (rows x cols) matrix: rows = output channels or
// units, cols = samples (dense) or samples * pixels (conv, HWC).
#pragma once

#include <cstddef>

namespace stalesgd::model {

// y(:, j) = max(0, y(:, j) + b) when `relu`, else y(:, j) + b.
void add_bias_activation(float* y, const float* b, int rows, std::size_t cols, bool relu);

// dy *= relu'(z), read off the stored output: relu(z) > 0 exactly when z > 0.
void relu_backward(const float* y, float* dy, std::size_t size);

// db = sum over columns of dy (the bias gradient), overwriting db.
void bias_gradient(const float* dy, int rows, std::size_t cols, float* db);

// relu_backward (when `relu`) then bias_gradient in one pass over dy: a conv layer's output
// gradient is megabytes, and memory bandwidth is what these two passes cost.
void bias_relu_backward(const float* y, float* dy, int rows, std::size_t cols, bool relu,
                        float* db);

}  // namespace stalesgd::model

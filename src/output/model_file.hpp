// A model's parameters in a file NumPy reads: `--save-model PATH` writes the final parameters
// as a one-dimensional float32 .npy array (the server's flat vector, in the model's own layout:
// docs/outputs.md), and `stalesgd eval` reads it back.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// Writes `params` to `path` (temporary file, fsync, rename). An Error names the path and the OS
// error.
Status write_model_file(const std::filesystem::path& path, std::span<const float> params);

// The parameters in `path`: a .npy array of float32 (or float64, converted) with `count`
// elements. An Error, one line naming the file: missing, not a .npy file, another dtype, or
// another number of parameters than the model has.
Result<std::vector<float>> read_model_file(const std::filesystem::path& path, std::size_t count);
// As a count: any number of parameters (`stalesgd export`, whose plugin checks it).
inline constexpr std::size_t kAnyCount = static_cast<std::size_t>(-1);

// Whether `path` can be written: its folder is one this process may write in, made (parents
// too) when it does not exist yet. Checked before a run trains, so that a bad --save-model
// costs nothing.
Status check_model_path(const std::filesystem::path& path, std::string_view flag = "--save-model");

}  // namespace stalesgd

// The data sets stalesgd knows by name: their shapes, where their files live under
// --data-dir, and how to load them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// "mnist", "fashion-mnist", "cifar10".
const std::vector<std::string>& dataset_names();
Status check_dataset_name(std::string_view name);

// The sample shape of a named data set (without loading it).
Result<ImageShape> dataset_shape(std::string_view name);

// The number of classes of a named data set (without loading it).
Result<int> dataset_classes(std::string_view name);

// Loads <data_dir>/<name>/...; errors name the file and tell which fetch command fixes it.
Result<Dataset> load_dataset(std::string_view name, const std::filesystem::path& data_dir);

}  // namespace stalesgd

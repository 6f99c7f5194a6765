// The data sets stalesgd knows by name: their shapes, where their files live under
// --data-dir, and how to load them; and npz:PATH, the user's own arrays in one .npz file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// "mnist", "fashion-mnist", "cifar10": the catalog's names.
const std::vector<std::string>& dataset_names();
// A catalog name, or npz:PATH with a non-empty PATH (the file is not opened here).
Status check_dataset_name(std::string_view name);

// npz:PATH: a data set read from the .npz file PATH, relative to the current directory (not
// --data-dir); see src/data/npz.hpp for the arrays it holds.
bool is_npz_name(std::string_view name);
// npz:PATH with PATH made absolute (for a process that runs elsewhere); other names as given.
std::string absolute_dataset_name(std::string_view name);

// A name `stalesgd data fetch` can fetch: a catalog name (an npz file is the user's own).
Status check_fetchable_name(std::string_view name);

// The sample shape of a named data set (without loading it; an npz's x headers are read).
Result<ImageShape> dataset_shape(std::string_view name);

// The number of classes of a named data set (without loading it; an npz's labels are read).
Result<int> dataset_classes(std::string_view name);

// Loads <data_dir>/<name>/..., or the .npz file of npz:PATH; errors name the file and the fix
// (for the catalog's names, which fetch command).
Result<Dataset> load_dataset(std::string_view name, const std::filesystem::path& data_dir);

}  // namespace stalesgd

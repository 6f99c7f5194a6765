// One column of a run's CSV file (evals.csv, updates.csv) as numbers, read by its header name
// with the parser `stalesgd serve` uses; an empty field is NaN.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace stalesgd::test {

std::vector<double> csv_column(const std::filesystem::path& path, const std::string& name);

}  // namespace stalesgd::test

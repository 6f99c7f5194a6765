// A run's resolved options as text columns, for the race's runs.csv and the config columns of
// results.csv (docs/experiments.md, "What a race writes").
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stalesgd/config/trainer_options.hpp"

namespace stalesgd {

// (key, value) for every option summary.json records, in the option table's order, each value
// in the text the CLI and --set take ("500ms", "256,128", "exp:mean=10ms").
using RunConfig = std::vector<std::pair<std::string, std::string>>;
RunConfig run_config(const TrainerOptions& options);

// `text` as one CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
std::string csv_field(std::string_view text);

}  // namespace stalesgd

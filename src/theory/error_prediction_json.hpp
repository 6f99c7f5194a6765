// An error prediction (stalesgd/theory/error_prediction.hpp) as the JSON `stalesgd theory
// --error --json` prints and stalesgd.theory(error=True) returns (docs/theory.md, "Error").
#pragma once

#include <nlohmann/json.hpp>

#include "stalesgd/theory/error_prediction.hpp"

namespace stalesgd {

// {"constants": {...}, "rules": [{"rule", "k", "seconds_per_iteration", ...}], "budgets":
// [{"seconds", "errors", "best_k"}]}.
nlohmann::json error_prediction_json(const ErrorPrediction& p);

}  // namespace stalesgd

// What a run with busy workers must show of its evaluation (docs/outputs.md, "Evaluation while
// training"): rows scored while training went on, a short tail after it, the final row on all
// samples, and the clock's start to the end within --time plus the reported scoring tail.
#pragma once

#include <filesystem>
#include <string>

namespace stalesgd::test {

// Checks the run in `out`, which trained on MNIST for `budget_s` seconds (--time) and printed
// `output`.
void check_kept_up(const std::filesystem::path& out, double budget_s, const std::string& output);

}  // namespace stalesgd::test

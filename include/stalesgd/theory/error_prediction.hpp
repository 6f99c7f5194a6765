// Predicted error against wallclock (`stalesgd theory --error`, stalesgd.theory(error=True)):
// the error bounds of error_bound.hpp with their constants estimated for a model and data set
// (error_constants.hpp), each rule's E[T] from the runtime theory (runtime.hpp), J = t / E[T],
// and the best K at each budget. docs/theory.md, "Error".
//
// Thread safety: a pure function of its arguments (the estimate runs oneTBB tasks); call it
// from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/delay_mode.hpp"
#include "stalesgd/theory/error_bound.hpp"
#include "stalesgd/theory/error_constants.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct ErrorRequest {
  // The rule (empty name: K-sync, Theorem 1's); k = 0: K = 1, 2, 4, ..., P for a rule whose K
  // is given (a rule whose K is fixed, sync or async, at its own K).
  RuleSpec rule{"", 0, {}};
  int workers = 8;
  std::string delay;  // a delay spec with i.i.d. delays of positive, finite mean
  DelayMode delay_mode = DelayMode::kPad;
  std::uint64_t samples = 20000;  // simulated iterations per Monte-Carlo estimate
  std::uint64_t seed = 1;         // w_0, and the estimates' draws
  ModelSpec model;                // softmax with l2 > 0: the bounds need strong convexity
  double lr = 0.05;
  int batch = 32;
  std::vector<double> budgets;        // seconds; empty: 10, 100, 1000, 10000 x the fastest E[T]
  std::size_t constants_samples = 0;  // F over the first N training samples (0: all)
  int optimum_epochs = 30;            // of the minimisation that finds w* and F*
  std::optional<double> p0, gamma;    // the async rules' staleness constants, if given
};

// One rule at one K.
struct RuleError {
  RuleConfig rule;
  double seconds_per_iteration = 0.0;  // E[T]: the closed form when exact, else the Monte Carlo
  std::string runtime_method;          // "closed form" or "monte carlo"
  double mean_staleness = 0.0;         // from the Monte Carlo
  Staleness staleness;                 // p0 and gamma used (synchronous rules: {1, 0})
  ErrorBound bound;
};

// One wallclock budget: each rule's bound at it (in ErrorPrediction::rules' order), and the K
// of the least.
struct BudgetError {
  double seconds = 0.0;
  std::vector<double> errors;
  int best_k = 0;
};

struct ErrorPrediction {
  EstimatedConstants constants;
  std::string model;                  // the model's describe()
  std::size_t constants_samples = 0;  // samples F was taken over
  std::vector<RuleError> rules;
  std::vector<BudgetError> budgets;
};

// The request's own errors (a bad model, l2, delay, rule or range), each one line naming the
// flag as `stalesgd theory --error` takes it; found before any data is read.
Status check_error_request(const ErrorRequest& request);

// The prediction for `request` on `data` (its training split). An Error: what
// check_error_request refuses, or a model that does not fit the data.
Result<ErrorPrediction> predict_errors(const ErrorRequest& request, const Dataset& data);

}  // namespace stalesgd

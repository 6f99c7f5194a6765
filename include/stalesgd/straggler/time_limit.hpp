// Time limits on a worker's computations (MindFlayer SGD, Maranjyan, Shaikh Omar & Richtarik,
// UAI 2025; docs/rules.md, "MindFlayer"): an attempt whose injected delay would exceed its
// worker's limit is abandoned at the limit and a fresh one starts. The limits are written like
// the delay language (docs/stragglers.md): "30ms" for every worker, then overrides,
// "30ms;w3=90ms;w0-1=10ms", the later clause winning.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

class DelaySampler;

// Each worker's limit in seconds (> 0). The error is one line naming the clause and the fix.
Result<std::vector<double>> parse_time_limits(std::string_view spec, int workers);
// The canonical text: the first worker's limit, then an override for each worker that differs.
std::string describe_time_limits(const std::vector<double>& limits);

// What a rule allows a worker's next minibatch (Rule::budget): at most `attempts` attempts of
// at most `limit_s` each. The default, no limit, is one attempt that runs to its end.
struct AttemptBudget {
  double limit_s = std::numeric_limits<double>::infinity();
  int attempts = 1;
  bool limited() const { return limit_s < std::numeric_limits<double>::infinity(); }
};

// One minibatch drawn under a budget.
struct Attempts {
  double delay_s = 0.0;    // its whole injected delay: each abandoned attempt's limit, then the
                           // last attempt's draw
  double offset_s = 0.0;   // when its last attempt started, from the minibatch's start
  int attempts = 1;        // draws taken
  bool abandoned = false;  // every attempt was: the worker ends at the limit with no gradient
};

// Draws from `delays` (`now_s`: the run's clock at the minibatch's start) until a draw is
// within the limit or the budget's attempts are spent; attempt j starts at now_s + j * limit.
// Without a limit it is one draw, as DelaySampler::next.
Attempts draw_attempts(DelaySampler& delays, double now_s, const AttemptBudget& budget);

}  // namespace stalesgd

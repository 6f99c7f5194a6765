// k-quota-async (docs/rules.md, "K-quota-async"): the first K gradients of a round, stale ones
// included, at most Q = --quota of them from any one worker. A worker that has given its Q waits
// for the update and then pulls w_{j+1}; the others keep computing and push, stale, later.
// Q = 1 is k-async (K distinct workers), Q >= K is k-batch-async (a fast worker may fill the
// round alone): Q sets how much of an update one fast worker's gradients may be.
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"

namespace stalesgd {
namespace {

class KQuotaAsync final : public Rule {
 public:
  KQuotaAsync(int workers, int k, std::int64_t quota)
      : Rule(workers, k), quota_(quota), given_(static_cast<std::size_t>(workers), 0) {}
  std::string_view name() const override { return "k-quota-async"; }
  bool synchronous() const override { return false; }

  Decision on_gradient(const Arrival& a) override {
    std::int64_t& given = given_.at(static_cast<std::size_t>(a.worker));
    // The protocol holds a worker that filled its quota until the update: a further push is a
    // bug in the engine, not a gradient to count.
    if (given >= quota_) {
      throw std::logic_error(
          fmt::format("k-quota-async: worker {} pushed past its quota of {}", a.worker, quota_));
    }
    ++given;
    Decision d;
    if (++pending_ >= k_) {
      d.apply = true;
      clear_round();
      return d;
    }
    d.next = given == quota_ ? AfterPush::kWait : AfterPush::kContinue;
    return d;
  }

  // K gradients need ceil(K / Q) workers at least.
  bool runs_with(int live) const override {
    return live >= 1 && static_cast<std::int64_t>(live) * quota_ >= k_;
  }

  // The round's gradients by worker: a resumed run's waiting workers wait as they did.
  void save_state(RuleState& out) const override { out.put("given", given_); }
  void load_state(RuleState& in) override {
    auto given = in.integers("given", static_cast<std::int64_t>(given_.size()));
    if (!given) return;
    const bool in_range = std::all_of(given->begin(), given->end(),
                                      [&](std::int64_t g) { return g >= 0 && g <= quota_; });
    if (!in_range || std::accumulate(given->begin(), given->end(), std::int64_t{0}) != pending_) {
      in.fail(fmt::format("'given' is not the round's {} gradients, at most {} a worker", pending_,
                          quota_));
      return;
    }
    given_ = std::move(*given);
  }
  void clear_round() override {
    Rule::clear_round();
    std::fill(given_.begin(), given_.end(), 0);
  }

 private:
  std::int64_t quota_;               // Q >= 1
  std::vector<std::int64_t> given_;  // each worker's gradients in this round, at most Q
};

// --rule k-quota-async --k K --quota Q: 1 <= K <= P, Q >= 1.
Result<RuleConfig> resolve_k_quota_async(const RuleSpec& spec, int workers) {
  if (!spec.params.has("quota")) {
    return Error{
        "--rule k-quota-async needs --quota Q, the most gradients one worker gives a round "
        "(Q = 1 is k-async, Q >= K is k-batch-async)"};
  }
  if (spec.k < 1 || spec.k > workers) {
    return Error{fmt::format("--rule k-quota-async needs --k K with 1 <= K <= P = {}{}", workers,
                             spec.k == 0 ? "" : fmt::format(", not {}", spec.k))};
  }
  return RuleConfig{"k-quota-async", workers, spec.k, spec.params};
}

}  // namespace

RuleInfo k_quota_async_rule() {
  return {.name = "k-quota-async",
          .summary = "the first K gradients, stale ones included, at most Q from one worker",
          .synchronous = false,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KQuotaAsync>(c.workers, c.k, c.params.integer("quota", 1));
          },
          .options = {{.name = "quota",
                       .help = "the most gradients one worker gives a round, Q >= 1",
                       .min = 1,
                       .max = 1'000'000'000,
                       .expects = "an integer Q with 1 <= Q <= 1000000000"}},
          .resolve = resolve_k_quota_async};
}

}  // namespace stalesgd

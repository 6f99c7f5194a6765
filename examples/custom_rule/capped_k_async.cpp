// A rule of one's own as a plug-in (stalesgd/plugin.hpp): k-async with a staleness cap, which
// drops a gradient computed more than --cap versions ago (its worker starts again on the
// current parameters), and, with --patience N, lets a worker's gradient in whatever its
// staleness once its last N were dropped, so that a slow worker is not shut out for good. Its
// registration declares both options, so that `stalesgd train --plugin libcapped_k_async.so
// --rule capped-k-async --k 2 --cap 3`, `cap = 3` in an experiment file (and a sweep over it),
// --help, summary.json and checkpoints all know them; it checkpoints each worker's drops in a
// row, so that a resumed run goes on exactly as an uninterrupted one. Nothing of stalesgd is
// touched: the rule is this file.
#include <cstdint>
#include <memory>
#include <vector>

#include <stalesgd/plugin.hpp>
#include <stalesgd/rules/rule_registry.hpp>

namespace {

// The first K gradients of K distinct workers, as k-async, of those at most S versions stale.
class CappedKAsync final : public stalesgd::Rule {
 public:
  CappedKAsync(int workers, int k, std::int64_t cap, std::int64_t patience)
      : Rule(workers, k),
        cap_(static_cast<std::uint64_t>(cap)),
        patience_(patience),
        dropped_(static_cast<std::size_t>(workers), 0) {}
  std::string_view name() const override { return "capped-k-async"; }
  bool synchronous() const override { return false; }

  stalesgd::Decision on_gradient(const stalesgd::Arrival& a) override {
    stalesgd::Decision d;
    std::int64_t& dropped = dropped_[static_cast<std::size_t>(a.worker)];
    const bool patient = patience_ > 0 && dropped >= patience_;
    if (a.current - a.computed_on > cap_ && !patient) {
      d.accept = false;  // too stale: the worker pulls the current parameters and starts again
      ++dropped;
      return d;
    }
    dropped = 0;
    d.next = stalesgd::AfterPush::kWait;  // as k-async: the pusher waits for the update
    if (++pending_ >= k_) {
      d.apply = true;
      pending_ = 0;
    }
    return d;
  }
  // K distinct workers are needed, as k-async's.
  bool runs_with(int live) const override { return live >= k_; }

  // Each worker's gradients dropped in a row: what decides its next one, after a resume too.
  void save_state(stalesgd::RuleState& out) const override { out.put("dropped", dropped_); }
  void load_state(stalesgd::RuleState& in) override {
    const auto dropped = in.integers("dropped", static_cast<std::int64_t>(dropped_.size()));
    if (!dropped) return;
    for (const std::int64_t d : *dropped) {
      if (d < 0) return in.fail("field 'dropped' holds a count below 0");
    }
    dropped_ = *dropped;
  }

 private:
  std::uint64_t cap_;
  std::int64_t patience_;              // 0: none
  std::vector<std::int64_t> dropped_;  // each worker's gradients dropped in a row
};

stalesgd::Status register_capped_k_async() {
  return stalesgd::register_rule(
      {.name = "capped-k-async",
       .summary = "k-async without the gradients more than --cap versions stale",
       .synchronous = false,
       .k = stalesgd::KChoice::kGiven,
       .make = [](const stalesgd::RuleConfig& c) -> std::unique_ptr<stalesgd::Rule> {
         return std::make_unique<CappedKAsync>(c.workers, c.k, c.params.integer("cap", 2),
                                               c.params.integer("patience", 0));
       },
       .options = {{.name = "cap",
                    .help = "the stalest gradient an update may hold S (default 2)",
                    .min = 0,
                    .max = 1'000'000,
                    .expects = "an integer S with 0 <= S <= 1000000"},
                   {.name = "patience",
                    .help = "after N gradients of a worker dropped in a row, its next is "
                            "kept whatever its staleness (default 0: never)",
                    .min = 0,
                    .max = 1'000'000,
                    .expects = "an integer N with 0 <= N <= 1000000"}}});
}

}  // namespace

STALESGD_PLUGIN(register_capped_k_async)

// A rule of one's own through stalesgd's public API: k-async with a staleness cap, which drops a
// gradient computed more than S versions ago (its worker starts again on the current
// parameters). Registered by name, it runs on the same engines, records and theory as the
// built-in rules: trained here beside k-async under one slow worker on the virtual clock, each
// into a run folder as `stalesgd train --out` writes one (OUT_DIR/<rule>/), with the applied
// staleness checked against the cap, and its E[T] from the theory's Monte Carlo.
// usage: custom_rule [DATA_DIR [OUT_DIR]]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <stalesgd/config/resolved_run.hpp>
#include <stalesgd/data/catalog.hpp>
#include <stalesgd/experiment/run_folder.hpp>
#include <stalesgd/rules/rule_registry.hpp>
#include <stalesgd/straggler/profile.hpp>
#include <stalesgd/theory/runtime.hpp>

namespace {

constexpr std::uint64_t kCap = 2;  // S: the stalest gradient an update may hold

// The first K gradients of K distinct workers, as k-async, of those at most S versions stale.
class CappedKAsync final : public stalesgd::Rule {
 public:
  CappedKAsync(int workers, int k) : Rule(workers, k), seen_(static_cast<std::size_t>(workers)) {}
  std::string_view name() const override { return "capped-k-async"; }
  bool synchronous() const override { return false; }

  stalesgd::Decision on_gradient(const stalesgd::Arrival& a) override {
    stalesgd::Decision d;
    if (a.current - a.computed_on > kCap) {
      d.accept = false;  // too stale: the worker pulls the current parameters and starts again
      return d;
    }
    d.next = stalesgd::AfterPush::kWait;  // as k-async: the pusher waits for the update
    seen_[static_cast<std::size_t>(a.worker)] = true;
    if (++pending_ >= k_) {
      d.apply = true;
      pending_ = 0;
      std::fill(seen_.begin(), seen_.end(), false);
    }
    return d;
  }
  // K distinct workers are needed, as k-async's.
  bool runs_with(int live) const override { return live >= k_; }
  void clear_round() override {
    Rule::clear_round();
    std::fill(seen_.begin(), seen_.end(), false);
  }

 private:
  std::vector<bool> seen_;  // workers counted in this round
};

int fail(const std::string& message) {
  std::fprintf(stderr, "custom_rule: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto registered = stalesgd::register_rule(
      {.name = "capped-k-async",
       .summary = "k-async without the gradients more than 2 versions stale",
       .synchronous = false,
       .k = stalesgd::KChoice::kGiven,
       .make = [](const stalesgd::RuleConfig& c) -> std::unique_ptr<stalesgd::Rule> {
         return std::make_unique<CappedKAsync>(c.workers, c.k);
       }});
  if (!registered) return fail(registered.error().message);

  const auto data = stalesgd::load_dataset("mnist", argc > 1 ? argv[1] : "data");
  if (!data) return fail(data.error().message);
  const std::filesystem::path out_dir = argc > 2 ? argv[2] : "custom_rule_runs";

  // Worker 0 is 8 times slower than the others: its gradients come in many versions late.
  const std::string delay = "exp:mean=10ms;w0=x8";
  std::uint64_t stalest[2] = {0, 0};
  int i = 0;
  for (const std::string rule : {"k-async", "capped-k-async"}) {
    stalesgd::TrainerOptions o;
    o.model.name = "softmax";
    o.rule = {rule, 2};
    o.workers = 8;
    o.delay = delay;
    o.clock = stalesgd::ClockKind::kVirtual;
    o.iterations = 400;
    o.lr = 0.1;
    o.eval_every_s = 1000.0;
    o.eval_test_samples = 2000;
    o.progress = false;
    const auto run = stalesgd::ResolvedRun::resolve(o);
    if (!run) return fail(run.error().message);
    // The run's folder: updates.csv, gradients.csv, evals.csv, workers.csv, run.log and
    // summary.json, as the CLI writes them (docs/outputs.md).
    const auto out = stalesgd::run_into_folder(
        *run, *data, {.dir = out_dir / rule, .existing = stalesgd::ExistingRun::kOverwrite});
    if (!out) return fail(out.error().message);
    const stalesgd::RunRecord* record = &out->record;
    for (const auto& g : record->gradients) stalest[i] = std::max(stalest[i], g.staleness);
    std::printf(
        "%-14s P = 8, K = 2: %zu updates in %.2f s, stalest gradient %llu, test error %.4f\n",
        rule.c_str(), record->updates.size(), record->wall_s,
        static_cast<unsigned long long>(stalest[i]), record->evals.back().test_error);
    ++i;
  }
  if (stalest[1] > kCap) return fail("an update held a gradient staler than the cap");
  if (stalest[0] <= kCap) return fail("k-async applied no gradient past the cap: nothing to show");

  // The theory's Monte Carlo runs the registered rule's state machine on the same delays.
  const auto rule = stalesgd::resolve_rule({"capped-k-async", 2}, 8);
  const auto profile = stalesgd::StragglerProfile::parse(delay, 8);
  if (!rule || !profile) return fail("the capped rule or the delay spec did not resolve");
  const auto et = stalesgd::monte_carlo_runtime(*rule, *profile, 20000, 1);
  if (!et) return fail(et.error().message);
  std::printf("capped-k-async E[T] by Monte Carlo: %.2f ms +- %.2f ms per update\n",
              et->seconds * 1e3, et->ci95 * 1e3);
  return 0;
}

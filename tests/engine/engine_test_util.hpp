// Helpers for engine tests: quick softmax runs on the real MNIST, and views of what they record.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "support/fixtures.hpp"

namespace stalesgd::test {

// A small, fast configuration: softmax on MNIST, no evaluation traffic to speak of.
inline TrainerOptions quick_options(const std::string& rule, int workers, int k,
                                    const std::string& delay) {
  TrainerOptions o;
  o.model.name = "softmax";
  o.rule = {rule, k};
  o.workers = workers;
  o.batch = 16;
  o.lr = 0.05;
  o.delay = delay;
  o.eval_every_s = 1000.0;  // one snapshot at the start and one at the end
  o.eval_test_samples = 1000;
  o.eval_train_samples = 1000;
  o.progress = false;
  return o;
}

// The engines a rule runs on in one process: real threads with the server inline or on its own
// thread, and the virtual clock. GENERATE(from_range(in_process_engines())) takes each in turn.
struct InProcessEngine {
  ClockKind clock = ClockKind::kReal;
  ServerPlacement server = ServerPlacement::kInline;
  void apply(TrainerOptions& o) const {
    o.clock = clock;
    o.server = server;
  }
  std::string describe() const {
    return std::string("clock ") + (clock == ClockKind::kVirtual ? "virtual" : "real") +
           ", --server " + to_string(server);
  }
};
inline std::vector<InProcessEngine> in_process_engines() {
  return {{ClockKind::kReal, ServerPlacement::kInline},
          {ClockKind::kReal, ServerPlacement::kThread},
          {ClockKind::kVirtual, ServerPlacement::kInline}};
}

inline ResolvedRun resolve_ok(const TrainerOptions& o) {
  auto r = ResolvedRun::resolve(o);
  if (!r) FAIL(r.error().message);
  return std::move(r).value();
}

// A plain softmax for samples of `data`'s shape and classes.
inline std::unique_ptr<Model> softmax_for(const Dataset& data) {
  auto m = make_model({"softmax", {}, 0.0f}, data.train.shape, data.num_classes);
  if (!m) FAIL(m.error().message);
  return std::move(m).value();
}

inline RunRecord run_ok(const TrainerOptions& o) {
  auto run = train(o, mnist());
  if (!run) FAIL(run.error().message);
  return std::move(run).value();
}

// Gradient records grouped by the update they went into.
inline std::map<std::uint64_t, std::vector<GradientRecord>> by_update(const RunRecord& run) {
  std::map<std::uint64_t, std::vector<GradientRecord>> m;
  for (const auto& g : run.gradients) m[g.iteration].push_back(g);
  return m;
}

inline bool distinct_workers(const std::vector<GradientRecord>& gs) {
  std::set<int> ws;
  for (const auto& g : gs) ws.insert(g.worker);
  return ws.size() == gs.size();
}

inline std::uint64_t total(const RunRecord& run, std::uint64_t WorkerRecord::*field) {
  std::uint64_t n = 0;
  for (const auto& w : run.workers) n += w.*field;
  return n;
}

// The time of the last update holding a gradient of worker w (0 when none does).
inline double last_update_with(const RunRecord& run, int w) {
  double last = 0.0;
  for (const auto& [it, gs] : by_update(run)) {
    for (const auto& g : gs) {
      if (g.worker == w) last = std::max(last, run.updates[it - 1].wall_s);
    }
  }
  return last;
}

}  // namespace stalesgd::test

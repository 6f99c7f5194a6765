// FailureLedger: the workers that failed during a run, when their server learned of it and how
// (a crash, or a hang found by --worker-timeout), for workers.csv and summary.json, and the one
// line that ends a run whose rule has too few workers left (docs/rules.md, "Failed workers").
//
// Thread safety: not thread-safe; one owner at a time (the server role under its lock, or the
// Hogwild supervisor's thread).
#pragma once

#include <string>
#include <vector>

#include "stalesgd/metrics/records.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/failure_plan.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class FailureLedger {
 public:
  FailureLedger(int workers, double worker_timeout_s);

  // Worker w failed, found at `at_s`; a worker is recorded once (later calls change nothing).
  void record(int worker, double at_s, FailureKind kind);
  bool failed(int worker) const { return entries_[ix(worker)].failed; }
  int count() const;
  // rec.failed, failed_at_s and failure for worker rec.worker.
  void fill(WorkerRecord& rec) const;
  // "w3 crashed at 2.000 s, w5 hung (no gradient 10 s after its minibatch's end; found at
  // 14.020 s)", in the order the server learned of them.
  std::string describe() const;
  // The line that ends the run: who failed and why `rule` (K = k) cannot go on with `live` of
  // its workers, and the fix.
  std::string stop_message(const RuleConfig& rule, int k, int live) const;

  // Checkpoints: who failed, when and how, in order.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  struct Entry {
    bool failed = false;
    double at_s = 0.0;
    FailureKind kind = FailureKind::kCrash;
  };
  static std::size_t ix(int w) { return static_cast<std::size_t>(w); }

  double worker_timeout_s_;
  std::vector<Entry> entries_;
  std::vector<int> order_;  // workers, in the order they were recorded
};

}  // namespace stalesgd

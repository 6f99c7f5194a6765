// A whole delay spec: a base distribution for every worker plus per-worker overrides and changes
// over time ("exp:mean=10ms;w3=x5;w2@30s=x10"), and the per-worker samplers that draw from it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/util/result.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

// A checkpoint's streams (private to the library: util/state_stream.hpp in src/).
class StateWriter;
class StateReader;

namespace detail {
struct ProfileState;
}

// The parsed spec for a fixed number of workers. Immutable; copies share the parsed state, so it
// is cheap to copy and safe to use from any thread.
class StragglerProfile {
 public:
  // Grammar: docs/stragglers.md. Trace files are read now, relative to base_dir (the config
  // file's directory for TOML, the current directory on the command line).
  static Result<StragglerProfile> parse(std::string_view spec, int workers,
                                        const std::filesystem::path& base_dir = ".");

  int workers() const;
  // The one distribution every worker draws i.i.d. from at all times, or nullptr when there
  // are overrides, time changes or trace replay (the theory's closed forms then do not apply).
  // Valid as long as any copy of this profile lives.
  const Distribution* iid() const;
  // Each worker's one delay when every worker's delays are constant for the whole run (const
  // sources, no time changes or traces): the fixed computation model of Tyurin & Richtarik
  // (NeurIPS 2023), under which the rules' fixed forms apply (rule_registry.hpp). Else nullopt.
  std::optional<std::vector<double>> fixed_times() const;
  // Canonical spec: parses back (with the same workers and base_dir) to the same profile.
  std::string describe() const;
  // The largest p-quantile of any worker's delay at any time: over every worker's timeline, the
  // source's quantile times its factor (the default --worker-timeout, docs/cli.md).
  double quantile_bound(double p) const;
  // P(X <= limit_s) for worker w's delay X when the worker draws i.i.d. from one distribution
  // for the whole run (times a factor: "w3=x5"); nullopt when its delays change over time or
  // replay a trace (MindFlayer as published divides by the expected count of gradients kept).
  std::optional<double> chance_within(int worker, double limit_s) const;

  // This profile with each job's delay the sum of `draws` consecutive draws: a job of
  // --local-steps Q minibatches takes each one's delay (docs/stragglers.md, "Local steps").
  // With draws > 1 a job's delay is no longer one draw of the spec: iid(), fixed_times() and
  // chance_within() say so (nullptr / nullopt) unless a constant sums exactly, and
  // quantile_bound() bounds a job by draws times a draw's bound.
  StragglerProfile with_draws_per_job(int draws) const;
  int draws_per_job() const;

 private:
  friend class DelaySampler;
  explicit StragglerProfile(std::shared_ptr<const detail::ProfileState> state);
  std::shared_ptr<const detail::ProfileState> state_;
};

// The delay stream of one worker. Not thread-safe: one thread uses it at a time. The stream is
// a function of (profile, worker, run_seed) and of the now_s values passed in: the generator is
// seeded with derive_seed(run_seed, SeedStream::kDelay, worker).
class DelaySampler {
 public:
  // Throws std::invalid_argument when worker is not in [0, profile.workers()) (a caller bug).
  DelaySampler(const StragglerProfile& profile, int worker, std::uint64_t run_seed);

  // The next job's delay in seconds, >= 0 and at most kMaxDurationSeconds (a longer draw
  // is cut to it: duration.hpp). now_s = seconds since the run started, when
  // the job starts; it selects the clauses in effect ("@30s" applies when now_s >= 30). A job
  // of several draws (with_draws_per_job) takes each at the time the previous one ends.
  double next(double now_s);

  int worker() const { return worker_; }

  // Checkpoints: the generator and the trace positions, so a resumed run draws the same delays.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  std::shared_ptr<const detail::ProfileState> state_;
  double draw(double now_s);  // one draw of the spec
  int worker_;
  Rng rng_;
  std::size_t segment_ = 0;              // cached timeline position: now_s rarely goes back
  std::vector<std::size_t> trace_rows_;  // per source: the next trace row this worker replays
};

}  // namespace stalesgd

// Monte-Carlo E[T]: the EventSimulator driving the bare round protocol and rule (no gradients),
// so the estimate covers every delay spec and every rule, exactly as the engines schedule them.
// The updates are split into independent chunks, each its own simulation with its own warm-up
// and seed stream (seed, chunk), run as oneTBB tasks and combined in chunk order: the estimate
// for a seed does not depend on the number of threads.
#include "theory/monte_carlo.hpp"

#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "sim/event_simulator.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/memory.hpp"
#include "util/parallel.hpp"

namespace stalesgd {
namespace {

constexpr std::uint64_t kBatches = 32;
constexpr int kMaxChunks = 8;

std::uint64_t warmup_of(int workers) {
  return 10 * static_cast<std::uint64_t>(workers);
}

// "1.5 GB", "800 GB": a size for a message.
std::string gigabytes(double bytes) {
  return fmt::format("{:.3g} GB", bytes / 1e9);
}

class RuleOnly final : public EventSimulator::Callbacks {
 public:
  RuleOnly(std::unique_ptr<Rule> rule, int workers, std::uint64_t warmup, std::uint64_t stop_after)
      : rule_(std::move(rule)),
        protocol_(*rule_, workers),
        warmup_(warmup),
        stop_after_(stop_after) {
    update_times_.reserve(stop_after + 1);
  }
  std::span<const RoundProtocol::Start> begin() override { return protocol_.begin(); }
  bool before_event(double) override { return version_ < stop_after_; }
  Result<RoundProtocol::Step> on_arrival(double t, int w) override {
    const std::uint64_t computed_on = protocol_.version_of(w);
    const Attempts& a = sim_->attempt(w);
    const auto step = protocol_.on_arrival(w, computed_on, version_, a.attempts, a.abandoned);
    // Staleness in the steady state, as E[T]: a chunk's first updates, from a cold start, have
    // less of it.
    if (step.decision.accept && version_ >= warmup_) {
      staleness_sum_ += static_cast<double>(version_ - computed_on);
      fresh_ += version_ == computed_on ? 1.0 : 0.0;
      ++accepted_;
    }
    if (step.decision.apply) {  // a mindflayer round may end on an abandoned push
      ++version_;
      update_times_.push_back(t);
    }
    return step;
  }
  AttemptBudget budget(int w) override { return protocol_.budget(w); }
  void simulate_on(const EventSimulator& sim) { sim_ = &sim; }
  const std::vector<double>& update_times() const { return update_times_; }
  double staleness_sum() const { return staleness_sum_; }
  double accepted() const { return accepted_; }
  double fresh() const { return fresh_; }

 private:
  std::unique_ptr<Rule> rule_;
  RoundProtocol protocol_;
  const EventSimulator* sim_ = nullptr;  // the attempts of each arrival
  std::uint64_t warmup_;
  std::uint64_t stop_after_;
  std::uint64_t version_ = 0;
  std::vector<double> update_times_;
  double staleness_sum_ = 0.0;
  double accepted_ = 0.0;
  double fresh_ = 0.0;  // accepted gradients computed on the version they were applied to
};

}  // namespace

std::uint64_t monte_carlo_max_iterations(int workers) {
  // Every chunk's warm-up, + 1 per chunk: update_times' reserve.
  const std::uint64_t warmup = kMaxChunks * (warmup_of(workers) + 1);
  const std::uint64_t bytes = memory_bytes();
  if (bytes == 0) return std::numeric_limits<std::uint64_t>::max() - warmup;  // unknown: no bound
  // Half of the memory: the rest of the process, and the rest of the machine, need room too.
  const std::uint64_t slots = bytes / 2 / sizeof(double);
  return slots > warmup + kBatches ? slots - warmup : kBatches;
}

Status check_monte_carlo_size(int workers, std::uint64_t iterations) {
  const std::uint64_t max = monte_carlo_max_iterations(workers);
  if (iterations <= max) return {};
  // In doubles: warm-up + iterations may not fit in 64 bits (--samples 18446744073709551615).
  const double need =
      (static_cast<double>(iterations) + static_cast<double>(kMaxChunks * warmup_of(workers))) *
      sizeof(double);
  return Error{fmt::format(
      "--samples {} needs {} to keep every update's time, more than half of the {} of memory "
      "here; give --samples {} or fewer (the default, 20000, is plenty)",
      iterations, gigabytes(need), gigabytes(static_cast<double>(memory_bytes())), max)};
}

int monte_carlo_chunks(int workers, std::uint64_t iterations) {
  // Each chunk pays its own warm-up: no more chunks than keep it under a tenth of the chunk.
  int chunks = kMaxChunks;
  while (chunks > 1 && iterations / static_cast<std::uint64_t>(chunks) < 10 * warmup_of(workers)) {
    chunks /= 2;
  }
  return chunks;
}

Result<MonteCarloEstimate> monte_carlo_runtime(const RuleConfig& config,
                                               const StragglerProfile& profile,
                                               std::uint64_t iterations, std::uint64_t seed,
                                               DelayMode mode, double compute_s,
                                               const Machine& machine) {
  return monte_carlo_runtime_in_chunks(config, profile, iterations, seed, mode, compute_s,
                                       monte_carlo_chunks(config.workers, iterations), machine);
}

Result<MonteCarloEstimate> monte_carlo_runtime_in_chunks(
    const RuleConfig& config, const StragglerProfile& profile, std::uint64_t iterations,
    std::uint64_t seed, DelayMode mode, double compute_s, int chunks, const Machine& machine) {
  const int workers = config.workers;
  if (iterations < kBatches) iterations = kBatches;
  if (auto s = check_monte_carlo_size(workers, iterations); !s) return s.error();
  if (chunks < 1 || kBatches % static_cast<std::uint64_t>(chunks) != 0) {
    return Error{fmt::format("Monte Carlo: {} chunks do not divide {} batches", chunks, kBatches)};
  }
  const std::uint64_t warmup = warmup_of(workers);
  const std::uint64_t per_batch = iterations / kBatches;
  const std::uint64_t batches = kBatches / static_cast<std::uint64_t>(chunks);  // per chunk
  struct Chunk {
    std::vector<double> means;  // its batches' mean time per update
    double staleness_sum = 0.0;
    double accepted = 0.0;
    double fresh = 0.0;
    double busy_s = 0.0, elapsed_s = 0.0;  // the server's, over the whole chunk
    std::optional<Error> error;
  };
  std::vector<Chunk> out(static_cast<std::size_t>(chunks));
  parallel_for_index(out.size(), [&](std::size_t c) {
    Chunk& chunk = out[c];
    std::optional<RuleOnly> callbacks;
    try {
      callbacks.emplace(make_rule(config), workers, warmup, warmup + batches * per_batch);
    } catch (const std::bad_alloc&) {
      chunk.error = Error{fmt::format(
          "--samples {}: cannot allocate {} for the update times (the machine's memory is in "
          "use); give fewer --samples",
          iterations,
          gigabytes(
              static_cast<double>(warmup + iterations / static_cast<std::uint64_t>(chunks) + 1) *
              static_cast<double>(chunks) * sizeof(double)))};
      return;
    }
    // Chunk 0's stream is the one a single simulation used before the chunks.
    EventSimulator sim(workers, profile, derive_seed(seed, SeedStream::kTheory, c), mode, compute_s,
                       machine);
    callbacks->simulate_on(sim);
    if (auto s = sim.run(*callbacks); !s) {
      chunk.error = s.error();
      return;
    }
    const auto& t = callbacks->update_times();
    // Batch means over the post-warm-up updates: iteration times are correlated (async rules
    // carry residual work across updates), batches of many updates are nearly independent.
    double prev = warmup == 0 ? 0.0 : t[warmup - 1];
    for (std::uint64_t b = 0; b < batches; ++b) {
      const double end = t[warmup + (b + 1) * per_batch - 1];
      chunk.means.push_back((end - prev) / static_cast<double>(per_batch));
      prev = end;
    }
    chunk.staleness_sum = callbacks->staleness_sum();
    chunk.accepted = callbacks->accepted();
    chunk.fresh = callbacks->fresh();
    chunk.busy_s = sim.server_busy_s();
    chunk.elapsed_s = t.empty() ? 0.0 : t.back();
  });
  // Combined in chunk order, whichever thread ran which chunk.
  std::vector<double> means;
  double staleness_sum = 0.0;
  double accepted = 0.0;
  double fresh = 0.0;
  double busy_s = 0.0, elapsed_s = 0.0;
  for (const Chunk& chunk : out) {
    if (chunk.error) return *chunk.error;
    busy_s += chunk.busy_s;
    elapsed_s += chunk.elapsed_s;
    means.insert(means.end(), chunk.means.begin(), chunk.means.end());
    staleness_sum += chunk.staleness_sum;
    accepted += chunk.accepted;
    fresh += chunk.fresh;
  }
  double mean = 0.0;
  for (double m : means) mean += m;
  mean /= kBatches;
  double var = 0.0;
  for (double m : means) var += (m - mean) * (m - mean);
  var /= (kBatches - 1);
  MonteCarloEstimate est;
  est.seconds = mean;
  est.ci95 = 2.0395 * std::sqrt(var / kBatches);  // Student t, 31 degrees of freedom
  est.iterations = per_batch * kBatches;
  est.mean_staleness = accepted > 0.0 ? staleness_sum / accepted : 0.0;
  est.fresh_fraction = accepted > 0.0 ? fresh / accepted : 1.0;
  est.server_utilization = elapsed_s > 0.0 ? busy_s / elapsed_s : 0.0;
  return est;
}

}  // namespace stalesgd

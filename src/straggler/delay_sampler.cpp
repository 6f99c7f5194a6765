// DelaySampler: one worker's stream of delays, drawn from its own seeded generator.
#include <fmt/format.h>

#include <stdexcept>

#include "stalesgd/straggler/duration.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "straggler/profile_state.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

DelaySampler::DelaySampler(const StragglerProfile& profile, int worker, std::uint64_t run_seed)
    : state_(profile.state_),
      worker_(worker),
      rng_(derive_seed(run_seed, SeedStream::kDelay, static_cast<std::uint64_t>(worker))),
      trace_rows_(state_->sources.size(), 0) {
  if (worker < 0 || worker >= state_->workers) {
    throw std::invalid_argument(
        fmt::format("DelaySampler: worker {} is not in [0, {})", worker, state_->workers));
  }
}

double DelaySampler::next(double now_s) {
  if (!(now_s >= 0)) now_s = 0;  // NaN or negative: treat as the start of the run
  double job = 0.0;
  for (int i = 0; i < state_->draws_per_job; ++i) job += draw(now_s + job);
  return std::min(job, kMaxDurationSeconds);
}

double DelaySampler::draw(double now_s) {
  const auto& timeline = state_->timeline[static_cast<std::size_t>(worker_)];
  // Timelines are short and now_s mostly grows: step from the cached segment.
  if (timeline[segment_].start_s > now_s) segment_ = 0;
  while (segment_ + 1 < timeline.size() && timeline[segment_ + 1].start_s <= now_s) ++segment_;
  const detail::Segment& seg = timeline[segment_];
  const detail::DelaySource& source = state_->sources[seg.source];
  double x = 0;
  if (source.trace != nullptr) {
    // Replay: each trace clause keeps its own position, resumed if the worker comes back to it.
    const std::vector<double>& column = source.trace->column_for(worker_);
    std::size_t& row = trace_rows_[seg.source];
    x = column[row];
    row = (row + 1) % column.size();
  } else {
    x = source.dist->sample(rng_);
  }
  // A draw past the longest time the clocks hold (a heavy tail, a large factor) waits that
  // long instead: on the real clock a longer sleep would wrap into no delay at all.
  return std::min(x * seg.factor, kMaxDurationSeconds);
}

void DelaySampler::save(StateWriter& out) const {
  out.tag("delays");
  out.rng(rng_);
  out.u64(segment_);
  out.values(std::vector<std::uint64_t>(trace_rows_.begin(), trace_rows_.end()));
}

void DelaySampler::load(StateReader& in) {
  if (!in.tag("delays")) return;
  in.rng(rng_);
  const std::uint64_t segment = in.u64();
  const auto rows = in.values<std::uint64_t>(static_cast<std::int64_t>(trace_rows_.size()));
  if (!in.ok()) return;
  if (segment >= state_->timeline[static_cast<std::size_t>(worker_)].size()) {
    in.fail("a delay clause out of range");
    return;
  }
  for (std::size_t s = 0; s < rows.size(); ++s) {
    const auto* trace = state_->sources[s].trace;
    if (rows[s] != 0 && (trace == nullptr || rows[s] >= trace->column_for(worker_).size())) {
      in.fail("a trace row out of range");
      return;
    }
  }
  segment_ = segment;
  trace_rows_.assign(rows.begin(), rows.end());
}

}  // namespace stalesgd

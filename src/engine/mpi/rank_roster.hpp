// RankRoster: rank 0's view of the ranks of an --engine mpi job: where each runs (its host and
// how its clock reads against rank 0's), when rank 0 last heard from it, the spans in which it
// went quiet while a minibatch of it was overdue (a link down, a stopped process), and whether it
// answered the end of the run. Its lines go to the run's log; its records to summary.json
// (RankRecord; docs/distributed.md, "Faults").
//
// A silence opens when a minibatch of the rank is kSilence past its end (its X; the gradient's
// own time and the way back are well under that) and nothing came from the rank since then, and
// closes with the rank's next message.
//
// Thread safety: not thread-safe; the receive thread uses it while the run goes, the caller's
// thread before and after.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/mpi/rank_clock.hpp"
#include "stalesgd/metrics/records.hpp"

namespace stalesgd::mpi {

class RankRoster {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kSilence{1};

  // `places` from RankClock::estimate (rank 0's first); the run's clock reads 0 at `start`.
  RankRoster(std::vector<RankPlace> places, int per_rank, Clock::time_point start,
             spdlog::logger& log);

  // "rank 2 (host b, w4-w5)", for messages; "rank 2 (host b)" without the workers.
  std::string name(int rank, bool workers = true) const;
  // One line per rank in run.log (host, workers, clock); a warning for a clock whose offset is
  // uncertain by more than 1% of `mean_delay_s`, the delay spec's mean.
  void log_places(double mean_delay_s) const;

  // A message from `rank` arrived at `now`; ends its silence, if any.
  void heard(int rank, Clock::time_point now);
  // `rank`'s earliest minibatch in flight ends (its X) at `due` (max(): none): opens a silence
  // when that is kSilence past and nothing came since.
  void check(int rank, Clock::time_point due, Clock::time_point now);
  // `rank` sent its records at the end.
  void answered(int rank) { ranks_[static_cast<std::size_t>(rank)].record.answered = true; }
  bool all_answered() const;
  // The worker ranks that did not answer, as one phrase ("rank 2 (host b, w4-w5)"); empty: none.
  std::string missing() const;
  // Whether every worker rank of some host other than rank 0's failed to answer (its host may
  // be cut off, rather than one process stopped).
  bool host_missing() const;

  // The records, silences still open closed at `end`.
  std::vector<RankRecord> records(Clock::time_point end);

 private:
  struct Rank {
    RankRecord record;
    Clock::time_point last_heard;
    bool silent = false;
    Clock::time_point silent_since;
  };
  double at_s(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }
  void close_silence(Rank& r, Clock::time_point now, bool heard);

  std::vector<Rank> ranks_;
  Clock::time_point start_;
  spdlog::logger& log_;
};

}  // namespace stalesgd::mpi

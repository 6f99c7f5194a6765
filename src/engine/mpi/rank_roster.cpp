// RankRoster: rank 0's account of the ranks (the design: rank_roster.hpp).
#include "engine/mpi/rank_roster.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace stalesgd::mpi {

RankRoster::RankRoster(std::vector<RankPlace> places, int per_rank, Clock::time_point start,
                       spdlog::logger& log)
    : start_(start), log_(log) {
  for (std::size_t r = 0; r < places.size(); ++r) {
    Rank rank;
    RankRecord& rec = rank.record;
    rec.rank = static_cast<int>(r);
    rec.host = places[r].host;
    rec.first_worker = r == 0 ? 0 : (static_cast<int>(r) - 1) * per_rank;
    rec.workers = r == 0 ? 0 : per_rank;
    rec.clock_offset_s = std::chrono::duration<double>(places[r].offset).count();
    rec.clock_error_s = std::chrono::duration<double>(places[r].error).count();
    rec.clock_estimated = places[r].estimated;
    rec.answered = r == 0;  // rank 0 is this process
    rank.last_heard = start;
    ranks_.push_back(std::move(rank));
  }
}

std::string RankRoster::name(int rank, bool workers) const {
  const RankRecord& r = ranks_[static_cast<std::size_t>(rank)].record;
  if (r.workers == 0 || !workers) return fmt::format("rank {} (host {})", r.rank, r.host);
  if (r.workers == 1) return fmt::format("rank {} (host {}, w{})", r.rank, r.host, r.first_worker);
  return fmt::format("rank {} (host {}, w{}-w{})", r.rank, r.host, r.first_worker,
                     r.first_worker + r.workers - 1);
}

void RankRoster::log_places(double mean_delay_s) const {
  for (const auto& r : ranks_) {
    const RankRecord& record = r.record;
    const std::string clock =
        record.clock_estimated
            ? fmt::format("clock offset {:+.1f} us +- {:.1f} us (estimated by ping-pong)",
                          record.clock_offset_s * 1e6, record.clock_error_s * 1e6)
            : std::string("clock exact (rank 0's host)");
    log_.debug("{}: {}", name(record.rank), record.rank == 0 ? "the server" : clock);
    if (record.clock_estimated && mean_delay_s > 0.0 &&
        record.clock_error_s > 0.01 * mean_delay_s) {
      log_.warn(
          "{}: its clock offset is known only to +- {:.2f} ms, {:.1f}% of the delays' mean "
          "{:.2f} ms, so its minibatches' delays may be off by that much; with more ranks than "
          "cores start them with --mca mpi_yield_when_idle 1 (tools/mpirun.sh does)",
          name(record.rank), record.clock_error_s * 1e3,
          100.0 * record.clock_error_s / mean_delay_s, mean_delay_s * 1e3);
    }
  }
}

void RankRoster::close_silence(Rank& r, Clock::time_point now, bool heard) {
  if (!r.silent) return;
  r.silent = false;
  const double length = std::chrono::duration<double>(now - r.silent_since).count();
  ++r.record.silences;
  r.record.longest_silence_s = std::max(r.record.longest_silence_s, length);
  if (heard) {
    log_.warn(
        "{} was silent for {:.2f} s (from {:.2f} s to {:.2f} s) with a minibatch past its "
        "end; it answered again",
        name(r.record.rank), length, at_s(r.silent_since), at_s(now));
  }
}

void RankRoster::heard(int rank, Clock::time_point now) {
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  r.last_heard = now;
  close_silence(r, now, true);
}

void RankRoster::check(int rank, Clock::time_point due, Clock::time_point now) {
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  if (r.silent || due == Clock::time_point::max()) return;
  const auto quiet_from = std::max(due, r.last_heard);
  if (now - quiet_from < kSilence) return;
  r.silent = true;
  r.silent_since = quiet_from;
  log_.info("{}: nothing from it for {:.1f} s with a minibatch past its end", name(rank),
            std::chrono::duration<double>(now - quiet_from).count());
}

bool RankRoster::all_answered() const {
  return std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.record.answered; });
}

std::string RankRoster::missing() const {
  std::string out;
  for (const auto& r : ranks_) {
    if (r.record.answered) continue;
    out += fmt::format("{}{}", out.empty() ? "" : ", ", name(r.record.rank));
  }
  return out;
}

bool RankRoster::host_missing() const {
  std::map<std::string, bool> all_missing;  // per host other than rank 0's
  for (const auto& r : ranks_) {
    if (r.record.host == ranks_[0].record.host) continue;
    auto [it, fresh] = all_missing.try_emplace(r.record.host, true);
    it->second = it->second && !r.record.answered;
  }
  return std::any_of(all_missing.begin(), all_missing.end(),
                     [](const auto& h) { return h.second; });
}

std::vector<RankRecord> RankRoster::records(Clock::time_point end) {
  std::vector<RankRecord> out;
  for (auto& r : ranks_) {
    close_silence(r, end, false);
    out.push_back(r.record);
  }
  return out;
}

}  // namespace stalesgd::mpi

// MpiServer: rank 0's transport, its receive thread and the run's life cycle (the design:
// mpi_server.hpp).
#include "engine/mpi/mpi_server.hpp"

#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/caught_failure.hpp"
#include "engine/mpi/idle_wait.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/rank_clock.hpp"
#include "engine/worker_slot.hpp"
#include "stalesgd/straggler/distribution.hpp"

namespace stalesgd::mpi {
namespace {

// How long the end of a run waits for the worker ranks' answers: a rank that is up answers in
// milliseconds. Shorter when mpirun is ending the job (a signal), whose SIGKILL follows.
constexpr std::chrono::seconds kAnswerWait{2};
constexpr std::chrono::milliseconds kAnswerWaitInterrupted{500};

// A scale of the injected delays, for the clock's warning: their mean when every worker draws
// from one distribution, else the median's bound.
double delay_scale(const StragglerProfile& delays) {
  if (const Distribution* d = delays.iid()) return d->mean();
  return delays.quantile_bound(0.5);
}

}  // namespace

MpiServer::MpiServer(RunContext& ctx, int ranks)
    : ctx_(ctx),
      ranks_(ranks),
      per_rank_(ctx.options.workers_per_rank),
      // Pinned at once: each worker's w_tau, at most two assignments per worker in the Outbox,
      // the current and the one being written.
      server_(ctx, *this, 3 * static_cast<std::size_t>(ctx.options.workers) + 4, "mpi"),
      pins_(static_cast<std::size_t>(ctx.options.workers)),
      pin_ticket_(static_cast<std::size_t>(ctx.options.workers), 0),
      due_(static_cast<std::size_t>(ctx.options.workers), Clock::time_point::max()),
      outbox_(ctx.options.workers, ctx.options.workers_per_rank),
      remote_(static_cast<std::size_t>(ctx.options.workers)) {}

void MpiServer::assign(const Assignment& a) {
  const auto i = static_cast<std::size_t>(a.worker);
  pins_[i] = server_.store().acquire();
  pin_ticket_[i] = a.ticket;
  due_[i] = a.at + a.x;
  step_.push_back(a);
}

void MpiServer::after_step() {
  // Cancels first: a cut worker stops at once, before the parameters of its next minibatch
  // (and everyone else's) are on their way.
  for (const auto& a : step_) {
    if (!a.cut) continue;
    Header h;
    h.worker = a.worker;
    h.ticket = a.ticket - 1;  // the minibatch this one replaces
    outbox_.cancel(h);
  }
  for (const auto& a : step_) {
    const auto i = static_cast<std::size_t>(a.worker);
    Header h;
    h.worker = a.worker;
    h.ticket = a.ticket;
    h.version = pins_[i].version();
    h.value = std::chrono::duration<double>(a.x).count();
    h.assigned_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(a.at.time_since_epoch()).count();
    outbox_.assign(h, pins_[i].share());
  }
  step_.clear();
}

void MpiServer::delivered(int w) {
  due_[static_cast<std::size_t>(w)] = Clock::time_point::max();
}

void MpiServer::retired(int w) {
  const auto i = static_cast<std::size_t>(w);
  pins_[i].release();
  due_[i] = Clock::time_point::max();
}

std::optional<ServerTransport::Clock::time_point> MpiServer::due(int w) {
  const auto d = due_[static_cast<std::size_t>(w)];
  if (d == Clock::time_point::max()) return std::nullopt;
  return d;
}

void MpiServer::stopped() {
  if (stopped_at_) return;
  // Under the server's lock: no assignment follows, so kStop is every rank's last message.
  outbox_.stop(ranks_);
  stopped_at_ = Clock::now();
}

std::string MpiServer::where(int w) const {
  return roster_ ? fmt::format(" on {}", roster_->name(rank_of(w), false))
                 : fmt::format(" on rank {}", rank_of(w));
}

void MpiServer::check_silences(Clock::time_point now) {
  for (int r = 1; r < ranks_; ++r) {
    auto earliest = Clock::time_point::max();
    for (int w = (r - 1) * per_rank_; w < r * per_rank_; ++w) {
      earliest = std::min(earliest, due_[static_cast<std::size_t>(w)]);
    }
    roster_->check(r, earliest, now);
  }
}

void MpiServer::take(const PostedReceives::Arrival& a, PostedReceives& in, Clock::time_point now) {
  Packet& p = in.buffer(a.index);
  const Header h = p.header();
  const int first = (a.source - 1) * per_rank_;
  if (a.tag == kRecords) {
    if (a.bytes != records_bytes(per_rank_)) {
      throw std::logic_error(fmt::format("records of {} bytes from rank {}", a.bytes, a.source));
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(p.data()) + Packet::kHeaderBytes;
    for (int l = 0; l < per_rank_; ++l) {
      double f[kRecordFields];
      std::memcpy(f, bytes + static_cast<std::size_t>(l * kRecordFields) * sizeof(double),
                  sizeof f);
      WorkerRecord& r = remote_[static_cast<std::size_t>(first + l)];
      r.computed = static_cast<std::uint64_t>(f[0]);
      r.busy_s = f[1];
      r.idle_s = f[2];
    }
    roster_->answered(a.source);
    return;  // the rank's last message: its receives stay unposted
  }
  if (h.worker < first || h.worker >= first + per_rank_) {
    throw std::logic_error(
        fmt::format("tag {} for worker {} from rank {}", a.tag, h.worker, a.source));
  }
  const auto i = static_cast<std::size_t>(h.worker);
  {
    std::lock_guard lock(server_.mutex());
    if (a.tag == kPush) {
      if (h.ticket == pin_ticket_[i] && pins_[i].held()) {
        server_.serve({h.worker, h.ticket, static_cast<float>(h.value), now, pins_[i].version(),
                       pins_[i].params(), p.payload()});
        // w_tau is no longer needed unless the step gave the worker a new minibatch.
        if (pin_ticket_[i] == h.ticket) pins_[i].release();
      }
    } else if (a.tag == kFailed) {
      // A worker thread crashed (--fail): its rank tells at once, as a dropped connection would.
      server_.retire(h.worker, now, FailureKind::kCrash);
    } else {
      throw std::logic_error(fmt::format("rank 0 got tag {} from rank {}", a.tag, a.source));
    }
    outbox_.progress();
  }
  in.repost(a.index);
}

void MpiServer::receive_main() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // IdleWait's sleeps are tens of microseconds
  // Named for top -H and gdb; its existence also tells that the run is under way (a test waits
  // for it).
  prctl(PR_SET_NAME, "mpi-server-recv", 0UL, 0UL, 0UL);
  try {
    std::vector<int> sources;
    for (int r = 1; r < ranks_; ++r) sources.push_back(r);
    // One receive per worker and one more per rank: each worker has at most two pushes on
    // their way (its last one and the one before), and the rank's notices.
    const std::size_t floats = std::max(ctx_.model->num_params(), records_floats(per_rank_));
    PostedReceives in(sources, per_rank_ + 1, floats);
    std::vector<PostedReceives::Arrival> arrivals;
    IdleWait wait;
    for (;;) {
      Clock::time_point due = Clock::time_point::max();
      std::optional<Clock::time_point> stop_at;
      {
        std::lock_guard lock(server_.mutex());
        outbox_.progress();
        if (!server_.stopping()) {
          check_silences(Clock::now());
          due = *std::min_element(due_.begin(), due_.end());
        }
        stop_at = stopped_at_;
      }
      if (stop_at) {
        const auto limit = ctx_.interrupted() ? Clock::duration(kAnswerWaitInterrupted)
                                              : Clock::duration(kAnswerWait);
        if (roster_->all_answered() || Clock::now() >= *stop_at + limit) break;
      }
      arrivals.clear();
      wait.until(
          [&] {
            in.poll(arrivals);
            return !arrivals.empty();
          },
          Clock::now() + std::chrono::milliseconds(100), due);
      const auto now = Clock::now();
      for (const auto& a : arrivals) {
        roster_->heard(a.source, now);
        take(a, in, now);
      }
    }
  } catch (...) {
    // The worker ranks wait for messages that will not come, so end the whole job: memory
    // running out with exit 1, a bug with 3.
    const CaughtFailure failure = caught_failure("the receiving thread");
    fmt::print(stderr, "stalesgd: error: rank 0: {}\n", failure.message);
    mpi::abort(failure.cause == FailureCause::kBug ? 3 : 1);
  }
}

Result<RunRecord> MpiServer::run() {
  RunSupervisor supervisor(ctx_, RunSupervisor::Evaluation::kBackground);
  const auto resumed_at = server_.prepare(supervisor);
  // --resume: collective, the worker ranks wait for the verdict before their receive loops.
  if (ctx_.resume != nullptr) {
    if (auto s = agree(resumed_at ? Status{} : Status{resumed_at.error()}); !s) {
      return resumed_at ? s.error() : resumed_at.error();
    }
  }
  std::vector<RankPlace> places;
  RankClock::estimate(&places);  // collective; rank 0's clock is the reference
  // A resumed run's clock goes on from the checkpoint's time.
  const auto began = Clock::now();
  const auto start = began - to_duration(*resumed_at);
  // Collective: every rank learns the run's time zero (for --fail) and the streams' seed.
  std::int64_t shared[2] = {
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count(),
      static_cast<std::int64_t>(server_.stream_seed())};
  MPI_Bcast(shared, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  roster_.emplace(std::move(places), per_rank_, start, ctx_.logger());
  roster_->log_places(delay_scale(ctx_.run.delays()));

  server_.begin(start, began);
  std::thread receiver([this] { receive_main(); });
  const auto [reason, wall_s] = server_.supervise();
  receiver.join();  // bounded: it waits kAnswerWait at most for the ranks' answers
  {
    std::lock_guard lock(server_.mutex());
    for (auto& pin : pins_) pin.release();
  }
  auto run = server_.finish(reason, wall_s, remote_);
  if (!run) return run;
  run->ranks = roster_->records(Clock::now());
  if (!roster_->all_answered()) {
    const std::string missing = roster_->missing();
    ctx_.logger().warn(
        "no answer to the end of the run from {} (died, hung or unreachable); "
        "the job ends without MPI_Finalize",
        missing);
    if (run->stop_reason == StopReason::kInterrupted && run->stop_message.empty()) {
      run->stop_message = fmt::format(
          "the job was ended while {} did not answer (died, hung or unreachable); "
          "train --resume continues the run if it wrote checkpoints",
          missing);
    }
    end_without_finalize(roster_->host_missing(), ctx_.interrupt);
  }
  return run;
}

}  // namespace stalesgd::mpi

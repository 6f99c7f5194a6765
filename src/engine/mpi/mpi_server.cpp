// MpiServer: rank 0's transport, its receive thread and the run's life cycle (the design:
// mpi_server.hpp).
#include "engine/mpi/mpi_server.hpp"

#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/mpi/idle_probe.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/rank_clock.hpp"
#include "engine/worker_slot.hpp"

namespace stalesgd::mpi {

MpiServer::MpiServer(RunContext& ctx, int ranks)
    : ctx_(ctx),
      o_(ctx.options),
      ranks_(ranks),
      per_rank_(ctx.options.workers_per_rank),
      // Pinned at once: each worker's w_tau, each assignment still being sent (usually the same
      // versions), the current and the one being written.
      server_(ctx, *this, 4 * static_cast<std::size_t>(ctx.options.workers) + 4, "mpi"),
      pins_(static_cast<std::size_t>(ctx.options.workers)),
      pin_ticket_(static_cast<std::size_t>(ctx.options.workers), 0),
      due_(static_cast<std::size_t>(ctx.options.workers), Clock::time_point::max()),
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
    MPI_Send(&h, sizeof h, MPI_BYTE, rank_of(a.worker), kCancel, MPI_COMM_WORLD);
  }
  for (const auto& a : step_) {
    Header h;
    h.worker = a.worker;
    h.ticket = a.ticket;
    h.version = pins_[static_cast<std::size_t>(a.worker)].version();
    h.value = std::chrono::duration<double>(a.x).count();
    h.assigned_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(a.at.time_since_epoch()).count();
    sends_.send(rank_of(a.worker), h, server_.store().acquire());
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
  if (stop_sent_) return;
  // Under the server's lock: no assignment follows, so kStop is every rank's last message.
  for (int r = 1; r < ranks_; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kStop, MPI_COMM_WORLD);
  stop_sent_ = true;
}

std::string MpiServer::where(int w) const {
  return fmt::format(" on rank {}", rank_of(w));
}

void MpiServer::receive_main() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // IdleProbe's sleeps are tens of microseconds
  // Named for top -H and gdb; its existence also tells that the run is under way (a test waits
  // for it).
  prctl(PR_SET_NAME, "mpi-server-recv", 0UL, 0UL, 0UL);
  try {
    Packet push(ctx_.model->num_params());
    std::vector<double> figures(static_cast<std::size_t>(per_rank_ * kRecordFields));
    IdleProbe probe;
    Clock::time_point due;
    const auto next_due = [&] {
      return server_.stopping() ? Clock::time_point::max()
                                : *std::min_element(due_.begin(), due_.end());
    };
    {
      std::lock_guard lock(server_.mutex());
      due = next_due();
    }
    for (int pending = ranks_ - 1; pending > 0;) {
      MPI_Status status;
      MPI_Message message = probe.next(MPI_ANY_SOURCE, status, due);
      if (status.MPI_TAG == kPush) {
        MPI_Mrecv(push.data(), push.count(), MPI_FLOAT, &message, MPI_STATUS_IGNORE);
        const auto at = Clock::now();
        const Header h = push.header();
        if (h.worker < 0 || h.worker >= o_.workers) {
          throw std::logic_error(fmt::format("push from unknown worker {}", h.worker));
        }
        const auto i = static_cast<std::size_t>(h.worker);
        std::lock_guard lock(server_.mutex());
        sends_.reap();
        if (h.ticket == pin_ticket_[i] && pins_[i].held()) {
          server_.serve({h.worker, h.ticket, static_cast<float>(h.value), at, pins_[i].version(),
                         pins_[i].params(), push.payload()});
          // w_tau is no longer needed unless the step gave the worker a new minibatch.
          if (pin_ticket_[i] == h.ticket) pins_[i].release();
        }
        // Only this thread assigns once the run is under way, so this stays true until the next
        // push.
        due = next_due();
      } else if (status.MPI_TAG == kRecords) {
        MPI_Mrecv(figures.data(), static_cast<int>(figures.size()), MPI_DOUBLE, &message,
                  MPI_STATUS_IGNORE);
        const int first = (status.MPI_SOURCE - 1) * per_rank_;
        for (int l = 0; l < per_rank_; ++l) {
          WorkerRecord& r = remote_[static_cast<std::size_t>(first + l)];
          const double* f = &figures[static_cast<std::size_t>(l * kRecordFields)];
          r.computed = static_cast<std::uint64_t>(f[0]);
          r.busy_s = f[1];
          r.idle_s = f[2];
        }
        --pending;
      } else {
        throw std::logic_error(
            fmt::format("rank 0 got tag {} from rank {}", status.MPI_TAG, status.MPI_SOURCE));
      }
    }
  } catch (const std::exception& e) {
    // A bug; the worker ranks wait for messages that will not come, so end the whole job.
    fmt::print(stderr, "stalesgd: error: rank 0: internal error: {}\n", e.what());
    mpi::abort(3);
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

  RankClock::estimate();  // collective; rank 0's clock is the reference
  // Every worker rank is in its receive loop once it passes this barrier.
  MPI_Barrier(MPI_COMM_WORLD);
  // A resumed run's clock goes on from the checkpoint's time.
  const auto began = Clock::now();
  server_.begin(began - to_duration(*resumed_at), began);
  std::thread receiver([this] { receive_main(); });
  const auto [reason, wall_s] = server_.supervise();
  receiver.join();  // returns once every rank sent its records, after its kStop
  sends_.drain();   // every rank took its messages up to kStop, so these complete
  for (auto& pin : pins_) pin.release();
  return server_.finish(reason, wall_s, remote_);
}

}  // namespace stalesgd::mpi

// MpiServer: rank 0's server step, its sends, its receive thread and the supervisor's view
// (the design: mpi_server.hpp).
#include "engine/mpi/mpi_server.hpp"

#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/mpi/idle_probe.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/rank_clock.hpp"
#include "output/checkpoint.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd::mpi {

MpiServer::MpiServer(RunContext& ctx, int ranks)
    : ctx_(ctx),
      o_(ctx.options),
      ranks_(ranks),
      per_rank_(ctx.options.workers_per_rank),
      // Pinned at once: each worker's w_tau, each assignment still being sent (usually the same
      // versions), the current and the one being written.
      store_(ctx.initial, 4 * static_cast<std::size_t>(ctx.options.workers) + 4),
      core_(ctx, store_, run_),
      ticket_(static_cast<std::size_t>(ctx.options.workers), 0),
      pins_(static_cast<std::size_t>(ctx.options.workers)),
      due_(static_cast<std::size_t>(ctx.options.workers), Clock::time_point::max()),
      assigned_at_(static_cast<std::size_t>(ctx.options.workers)),
      remote_(static_cast<std::size_t>(ctx.options.workers)) {
  delays_of_.reserve(ticket_.size());
  for (int w = 0; w < o_.workers; ++w) delays_of_.emplace_back(ctx.run.delays(), w, o_.seed);
}

void MpiServer::request_stop(StopReason reason) {
  if (stop_reason_ == StopReason::kNone) stop_reason_ = reason;
  stop_cv_.notify_all();
}

void MpiServer::assign(int w, Clock::time_point at) {
  const auto i = static_cast<std::size_t>(w);
  pins_[i] = store_.acquire();
  Header h;
  h.worker = w;
  h.ticket = ++ticket_[i];
  h.version = pins_[i].version();
  // Drawn here, as in the thread and virtual engines, so every engine consumes each worker's
  // delay stream alike, cut minibatches included.
  h.value = delays_of_[i].next(since_start(at));
  h.assigned_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  assigned_at_[i] = at;
  due_[i] =
      at + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(h.value));
  sends_.send(rank_of(w), h, store_.acquire());
}

void MpiServer::cancel(int w) {
  Header h;
  h.worker = w;
  h.ticket = ticket_[static_cast<std::size_t>(w)];
  MPI_Send(&h, sizeof h, MPI_BYTE, rank_of(w), kCancel, MPI_COMM_WORLD);
}

void MpiServer::serve(const Packet& push, Clock::time_point at) {
  if (stop_reason_ != StopReason::kNone) return;  // the run is over
  const Header h = push.header();
  const auto i = static_cast<std::size_t>(h.worker);
  if (h.worker < 0 || h.worker >= o_.workers) {
    throw std::logic_error(fmt::format("push from unknown worker {}", h.worker));
  }
  if (h.ticket != ticket_[i]) return;  // its minibatch was cut: the worker has a newer one
  due_[i] = Clock::time_point::max();
  const double now_s = since_start(at);
  // On rank 0's clock, from the assignment to the push's receipt (both transits included).
  const double duration_s = std::chrono::duration<double>(at - assigned_at_[i]).count();
  auto outcome = core_.on_gradient(now_s, h.worker, pins_[i].version(), static_cast<float>(h.value),
                                   duration_s, push.payload(), pins_[i].params());
  pins_[i].release();
  if (!outcome) {
    run_.divergence = outcome.error().message;
    request_stop(StopReason::kDiverged);
    return;
  }
  // Cancels first: a cut worker stops at once, before the parameters of its next minibatch
  // (and everyone else's) are on their way.
  for (const auto& s : outcome->step.start) {
    if (s.cut) cancel(s.worker);
  }
  for (const auto& s : outcome->step.start) assign(s.worker, at);
  if (const auto reason = supervisor_->stop_due(now_s, store_.version());
      reason != StopReason::kNone) {
    request_stop(reason);
  }
}

MpiServer::Clock::time_point MpiServer::next_due() const {
  return due_.empty() ? Clock::time_point::max() : *std::min_element(due_.begin(), due_.end());
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
    {
      std::lock_guard lock(mu_);
      due = next_due();
    }
    for (int pending = ranks_ - 1; pending > 0;) {
      MPI_Status status;
      MPI_Message message = probe.next(MPI_ANY_SOURCE, status, due);
      if (status.MPI_TAG == kPush) {
        MPI_Mrecv(push.data(), push.count(), MPI_FLOAT, &message, MPI_STATUS_IGNORE);
        const auto at = Clock::now();
        std::lock_guard lock(mu_);
        serve(push, at);
        sends_.reap();
        // Only this thread assigns once the run is under way, so this stays true until the next
        // push.
        due = stop_reason_ == StopReason::kNone ? next_due() : Clock::time_point::max();
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

StopReason MpiServer::wait_until(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  stop_cv_.wait_until(lock, deadline, [&] { return stop_reason_ != StopReason::kNone; });
  return stop_reason_;
}

void MpiServer::inspect(const Look& look) {
  std::lock_guard lock(mu_);
  look(store_.version(), store_.current(), &run_);
}

StopReason MpiServer::stop(StopReason reason) {
  std::lock_guard lock(mu_);
  request_stop(reason);
  if (!stop_sent_) {
    // Under mu_: no assignment follows, so kStop is every rank's last message.
    for (int r = 1; r < ranks_; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kStop, MPI_COMM_WORLD);
    stop_sent_ = true;
  }
  return stop_reason_;
}

double MpiServer::mean_staleness() {
  std::lock_guard lock(mu_);
  return core_.mean_staleness();
}

void MpiServer::save(StateWriter& out, const Look& look) {
  std::lock_guard lock(mu_);
  look(store_.version(), store_.current(), &run_);
  out.tag("mpi");
  core_.save_server(out);
}

Result<double> MpiServer::resume(RunSupervisor& supervisor, const std::string& payload) {
  StateReader in(payload);
  const CheckpointHeader header = load_header(in);
  if (!in.ok()) return Error{"checkpoint: " + in.error()};
  run_ = supervisor.resume(header);
  if (in.tag("mpi")) core_.load_server(in);
  if (in.ok() && !in.at_end()) in.fail("bytes left over after the last part");
  if (!in.ok()) return Error{"checkpoint: " + in.error()};
  core_.restart();
  // Fresh delay streams from here, as the thread engine's resume.
  const std::uint64_t seed = mix64(o_.seed ^ mix64(store_.version()));
  delays_of_.clear();
  for (int w = 0; w < o_.workers; ++w) delays_of_.emplace_back(ctx_.run.delays(), w, seed);
  return header.t;
}

Result<RunRecord> MpiServer::run() {
  RunSupervisor supervisor(ctx_, RunSupervisor::Evaluation::kBackground);
  supervisor_ = &supervisor;
  double resumed_at = 0.0;
  if (ctx_.resume != nullptr) {
    auto t = resume(supervisor, *ctx_.resume);
    // Collective: the worker ranks wait for the verdict before their receive loops.
    if (auto s = agree(t ? Status{} : Status{t.error()}); !s) return t ? s.error() : t.error();
    resumed_at = *t;
  }
  run_.model = ctx_.model->describe();
  run_.num_params = ctx_.model->num_params();

  RankClock::estimate();  // collective; rank 0's clock is the reference
  // Every worker rank is in its receive loop once it passes this barrier.
  MPI_Barrier(MPI_COMM_WORLD);
  // A resumed run's clock goes on from the checkpoint's time.
  const auto began = Clock::now();
  start_ = began -
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(resumed_at));
  {
    std::lock_guard lock(mu_);
    // Now, not start_: a resumed run's first minibatches take their X from here too.
    for (const auto& s : core_.begin()) assign(s.worker, began);
  }
  std::thread receiver([this] { receive_main(); });
  const auto [reason, wall_s] = supervisor.supervise(*this, start_);
  receiver.join();  // returns once every rank sent its records, after its kStop
  sends_.drain();   // every rank took its messages up to kStop, so these complete

  for (int w = 0; w < o_.workers; ++w) {
    WorkerRecord rec = remote_[static_cast<std::size_t>(w)];
    core_.count(w, rec);
    run_.workers.push_back(rec);
  }
  for (auto& pin : pins_) pin.release();
  run_.param_buffers = store_.buffers();
  return supervisor.finish(std::move(run_), reason, wall_s, store_.version(), store_.current());
}

}  // namespace stalesgd::mpi

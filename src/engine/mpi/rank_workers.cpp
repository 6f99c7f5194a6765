// RankWorkers: a worker rank's receive loop and worker threads (the design: rank_workers.hpp).
#include "engine/mpi/rank_workers.hpp"

#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/mpi/idle_probe.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/rank_clock.hpp"
#include "engine/running_mean.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd::mpi {
namespace {

// A worker's pushes, sent with MPI_Isend from two buffers in turn: a gradient exceeds Open
// MPI's eager limit, so a blocking send would hold the worker (spinning a core) until rank 0's
// receive thread next polls. The next gradient is computed into the other buffer while this
// one travels; a buffer is reused only once its send completed.
class PushBuffers {
 public:
  explicit PushBuffers(std::size_t n) : packets_{Packet(n), Packet(n)} {}
  PushBuffers(const PushBuffers&) = delete;
  PushBuffers& operator=(const PushBuffers&) = delete;
  ~PushBuffers() {
    for (auto& r : sent_) wait_quietly(r, kPause);
  }
  // The buffer to compute the next gradient into, free to write.
  Packet& next() {
    wait_quietly(sent_[turn_], kPause);
    return packets_[turn_];
  }
  // Sends next()'s buffer to rank 0; the following next() is the other buffer.
  void send() {
    Packet& p = packets_[turn_];
    MPI_Isend(p.data(), p.count(), MPI_FLOAT, 0, kPush, MPI_COMM_WORLD, &sent_[turn_]);
    turn_ ^= 1;
  }

 private:
  static constexpr std::chrono::microseconds kPause{20};
  Packet packets_[2];
  MPI_Request sent_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int turn_ = 0;
};

}  // namespace

RankWorkers::RankWorkers(RunContext& ctx, int rank)
    : ctx_(ctx),
      o_(ctx.options),
      per_rank_(ctx.options.workers_per_rank),
      first_((rank - 1) * ctx.options.workers_per_rank),
      slots_(static_cast<std::size_t>(per_rank_)) {
  for (auto& slot : slots_) slot.assigned.resize(ctx.model->num_params());
}

void RankWorkers::run() {
  std::vector<std::thread> threads;
  threads.reserve(slots_.size());
  for (int l = 0; l < per_rank_; ++l) threads.emplace_back([this, l] { worker_main(l); });
  clock_ = RankClock::estimate();
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 starts the clock and assigns after it
  receive_loop();
  stop_workers();
  for (auto& t : threads) t.join();
  send_records();
}

void RankWorkers::receive_loop() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // IdleProbe's sleeps are tens of microseconds
  std::vector<float> inbox(ctx_.model->num_params());
  IdleProbe probe;
  for (;;) {
    MPI_Status status;
    MPI_Message message = probe.next(0, status);
    if (status.MPI_TAG == kStop) {
      MPI_Mrecv(nullptr, 0, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      return;
    }
    if (status.MPI_TAG != kAssign && status.MPI_TAG != kCancel) {
      throw std::logic_error(fmt::format("unexpected tag {} from rank 0", status.MPI_TAG));
    }
    Header h;
    MPI_Mrecv(&h, sizeof h, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    const int local = h.worker - first_;
    if (local < 0 || local >= per_rank_) {
      throw std::logic_error(fmt::format("message for worker {}, not on this rank", h.worker));
    }
    RemoteSlot& slot = slots_[static_cast<std::size_t>(local)];
    if (status.MPI_TAG == kCancel) {
      {
        std::lock_guard lock(slot.mu);
        if (slot.running == h.ticket) slot.cancel.store(true, std::memory_order_relaxed);
        if (slot.has_assignment && slot.assigned_header.ticket == h.ticket) {
          slot.has_assignment = false;  // cut before its worker took it
        }
      }
      slot.cv.notify_one();
      continue;
    }
    // The parameters follow the header at once (rank 0 sends both under its lock).
    MPI_Recv(inbox.data(), static_cast<int>(inbox.size()), MPI_FLOAT, 0, kParams, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    // X runs from rank 0's assignment, as in the thread engine; never from later than now (an
    // estimated offset may be a little off).
    const auto at = std::min(EngineClock::now(), clock_.from_rank0(h.assigned_ns));
    {
      std::lock_guard lock(slot.mu);
      slot.assigned.swap(inbox);  // a pending older one (cut) becomes the next inbox
      slot.assigned_header = h;
      slot.assigned_at = at;
      slot.has_assignment = true;
    }
    slot.cv.notify_one();
  }
}

void RankWorkers::stop_workers() {
  for (auto& slot : slots_) {
    {
      std::lock_guard lock(slot.mu);
      slot.stop = true;
      slot.cancel.store(true, std::memory_order_relaxed);
    }
    slot.cv.notify_all();
  }
}

void RankWorkers::send_records() {
  std::vector<double> figures;
  for (const auto& slot : slots_) {
    figures.push_back(static_cast<double>(slot.stats.computed));
    figures.push_back(slot.stats.busy_s);
    figures.push_back(slot.stats.idle_s);
  }
  MPI_Send(figures.data(), static_cast<int>(figures.size()), MPI_DOUBLE, 0, kRecords,
           MPI_COMM_WORLD);
}

void RankWorkers::worker_main(int local) {
  // Timer slack 1 ns: the default 50 us would bias every sleep of a delay-dominated run.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  try {
    worker_loop(local);
  } catch (const std::exception& e) {
    // A bug: rank 0 would wait for this worker forever, so end the whole job.
    fmt::print(stderr, "stalesgd: error: rank {}: internal error in worker {}: {}\n", mpi::rank(),
               first_ + local, e.what());
    mpi::abort(3);
  }
}

RankWorkers::Woken RankWorkers::sleep_until(RemoteSlot& slot, EngineClock::time_point until) {
  const auto cut = [&] { return slot.stop || slot.cancel.load(std::memory_order_relaxed); };
  std::unique_lock lock(slot.mu);
  if (EngineClock::now() < until) slot.cv.wait_until(lock, until, cut);
  if (slot.stop) return Woken::kStopped;
  return slot.cancel.load(std::memory_order_relaxed) ? Woken::kCancelled : Woken::kOnTime;
}

void RankWorkers::worker_loop(int local) {
  const int w = first_ + local;
  RemoteSlot& slot = slots_[static_cast<std::size_t>(local)];
  const Model& model = *ctx_.model;
  std::vector<float> params(model.num_params());
  PushBuffers pushes(model.num_params());
  auto ws = model.make_workspace(o_.batch);
  // The thread engine's stream for worker w: the same seed gives the same data.
  MinibatchSampler sampler(ctx_.data.train, o_.batch,
                           derive_seed(o_.seed, SeedStream::kSampler, w));
  WorkerRecord& stats = slot.stats;
  stats.worker = w;
  GradientClock gradient_time;
  Batch batch = sampler.next();
  std::optional<EngineClock::time_point> last_end;
  for (;;) {
    Header h;
    EngineClock::time_point t0;
    {
      std::unique_lock lock(slot.mu);
      slot.cv.wait(lock, [&] { return slot.stop || slot.has_assignment; });
      if (slot.stop) return;
      slot.has_assignment = false;
      slot.cancel.store(false, std::memory_order_relaxed);
      params.swap(slot.assigned);
      h = slot.assigned_header;
      t0 = slot.assigned_at;
      slot.running = h.ticket;
    }
    if (last_end)
      stats.idle_s += std::max(0.0, std::chrono::duration<double>(t0 - *last_end).count());
    const auto x = to_duration(h.value);
    // pad: start the gradient its usual time (with room for a slow one) before X; at once
    // while there is no estimate yet.
    const double lead = gradient_time.lead_s();
    Woken woken = sleep_until(slot, compute_from(o_.delay_mode, t0, x, lead));
    if (woken == Woken::kStopped) return;
    std::optional<float> loss;
    const bool spent = woken == Woken::kOnTime;  // `batch` goes into a gradient
    Packet* push = nullptr;
    if (spent) {
      push = &pushes.next();
      loss = gradient_time.time([&] {
        return model.loss_and_gradient(params, batch, push->payload(), *ws, &slot.cancel);
      });
      if (loss) {
        ++stats.computed;
      } else {
        woken = Woken::kCancelled;
      }
    }
    if (woken == Woken::kOnTime && o_.delay_mode == DelayMode::kPad) {
      woken = sleep_until(slot, t0 + x);
    }
    if (woken == Woken::kStopped) return;
    {
      std::lock_guard lock(slot.mu);
      slot.running = 0;  // a cancel from now on is for a minibatch already pushed or dropped
    }
    last_end = EngineClock::now();
    stats.busy_s += std::chrono::duration<double>(*last_end - t0).count();
    if (woken == Woken::kOnTime) {
      Header out = h;
      out.value = *loss;
      push->set_header(out);
      pushes.send();
    }
    // The next minibatch is gathered after the push: in a sync round this overlaps the wait
    // for the others instead of delaying the round's last gradient.
    if (spent) batch = sampler.next();
  }
}

}  // namespace stalesgd::mpi

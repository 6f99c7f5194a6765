// RankWorkers: a worker rank's receive loop, worker threads and failures (the design:
// rank_workers.hpp).
#include "engine/mpi/rank_workers.hpp"

#include <mpi.h>
#include <sys/prctl.h>

#include <csignal>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/caught_failure.hpp"
#include "engine/mpi/idle_wait.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/rank_clock.hpp"
#include "engine/worker_loop.hpp"
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
    MPI_Isend(p.data(), p.bytes(), MPI_BYTE, 0, kPush, MPI_COMM_WORLD, &sent_[turn_]);
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
      rank_(rank),
      per_rank_(ctx.options.workers_per_rank),
      first_((rank - 1) * ctx.options.workers_per_rank),
      slots_(static_cast<std::size_t>(per_rank_)) {
  for (auto& slot : slots_) slot.assigned = Packet(ctx.model->num_params());
}

void RankWorkers::run() {
  clock_ = RankClock::estimate();
  // Rank 0's time zero of the run and the minibatch streams' seed (mpi_server.cpp).
  std::int64_t shared[2] = {0, 0};
  MPI_Bcast(shared, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  start_ = clock_.from_rank0(shared[0]);
  stream_seed_ = static_cast<std::uint64_t>(shared[1]);
  std::vector<std::thread> threads;
  threads.reserve(slots_.size());
  for (int l = 0; l < per_rank_; ++l) threads.emplace_back([this, l] { worker_main(l); });
  receive_loop();
  stop_workers();
  for (auto& t : threads) t.join();
  send_records();
}

bool RankWorkers::take(const PostedReceives::Arrival& a, PostedReceives& in) {
  if (a.tag == kStop) return false;
  Packet& p = in.buffer(a.index);
  if (a.tag == kParams) {
    // The parameters of the assignment whose header came just before (wire.hpp).
    if (!assigning_ || a.bytes != static_cast<int>(ctx_.model->num_params() * sizeof(float))) {
      throw std::logic_error(
          fmt::format("parameters of {} bytes without their assignment", a.bytes));
    }
    assigning_ = false;
    const Header& h = assignment_;
    RemoteSlot& slot = slots_[static_cast<std::size_t>(h.worker - first_)];
    // X runs from rank 0's assignment, as in the thread engine; never from later than now (an
    // estimated offset may be a little off).
    const auto at = std::min(EngineClock::now(), clock_.from_rank0(h.assigned_ns));
    bool notify = false;
    {
      std::lock_guard lock(slot.mu);
      if (h.ticket > slot.cut_through) {  // else it was cut on its way here
        slot.assigned.swap(p);  // a pending older one (cut) becomes the next receive buffer
        slot.assigned_header = h;
        slot.assigned_at = at;
        slot.has_assignment = notify = true;
      }
    }
    if (notify) slot.cv.notify_one();
    in.repost(a.index);
    return true;
  }
  if ((a.tag != kAssign && a.tag != kCancel) || a.bytes != Packet::kHeaderBytes || assigning_) {
    throw std::logic_error(
        fmt::format("unexpected tag {} of {} bytes from rank 0", a.tag, a.bytes));
  }
  const Header h = p.header();
  in.repost(a.index);
  const int local = h.worker - first_;
  if (local < 0 || local >= per_rank_) {
    throw std::logic_error(fmt::format("message for worker {}, not on this rank", h.worker));
  }
  if (a.tag == kAssign) {
    assignment_ = h;  // its parameters come next
    assigning_ = true;
    return true;
  }
  RemoteSlot& slot = slots_[static_cast<std::size_t>(local)];
  {
    std::lock_guard lock(slot.mu);
    slot.cut_through = std::max(slot.cut_through, h.ticket);
    if (slot.running == h.ticket) slot.cancel.store(true, std::memory_order_relaxed);
    if (slot.has_assignment && slot.assigned_header.ticket <= h.ticket) {
      slot.has_assignment = false;  // cut before its worker took it
    }
  }
  slot.cv.notify_one();
  return true;
}

void RankWorkers::receive_loop() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // IdleWait's sleeps are tens of microseconds
  // Three receives per worker: an assignment's two messages and a cancel for each can be on
  // their way at once.
  const int sources[1] = {0};
  PostedReceives in(sources, 3 * per_rank_, ctx_.model->num_params());
  std::vector<PostedReceives::Arrival> arrivals;
  IdleWait wait;
  // --fail rankN: this rank dies or stops at its time (docs/rules.md, "Failed workers").
  const PlannedRankFailure* planned = ctx_.run.failures().of_rank(rank_);
  const auto fail_at =
      planned != nullptr ? start_ + to_duration(planned->at_s) : EngineClock::time_point::max();
  for (;;) {
    arrivals.clear();
    const auto deadline = std::min(fail_at, EngineClock::now() + std::chrono::milliseconds(100));
    wait.until(
        [&] {
          in.poll(arrivals);
          return !arrivals.empty();
        },
        deadline);
    for (const auto& a : arrivals) {
      if (!take(a, in)) return;
    }
    if (planned != nullptr && EngineClock::now() >= fail_at) {
      // The process dies as under kill -9, or stops as under kill -STOP (until mpirun ends the
      // job): nothing of ours runs in between, as on a real failure.
      std::fflush(stderr);
      raise(planned->kind == FailureKind::kCrash ? SIGKILL : SIGSTOP);
      planned = nullptr;  // continued by SIGCONT: it stays failed in rank 0's eyes
    }
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

void RankWorkers::send_quietly(Packet& p, int bytes, int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Isend(p.data(), bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r);
  wait_quietly(r, std::chrono::microseconds(100));
}

void RankWorkers::send_records() {
  Packet p(records_floats(per_rank_));
  auto* bytes = reinterpret_cast<unsigned char*>(p.data()) + Packet::kHeaderBytes;
  for (const auto& slot : slots_) {
    const double f[kRecordFields] = {static_cast<double>(slot.stats.computed), slot.stats.busy_s,
                                     slot.stats.idle_s};
    std::memcpy(bytes, f, sizeof f);
    bytes += sizeof f;
  }
  Header h;
  h.worker = first_;
  p.set_header(h);
  send_quietly(p, records_bytes(per_rank_), kRecords);
}

void RankWorkers::fail_worker(RemoteSlot& slot, int w, FailureKind how) {
  if (how == FailureKind::kHang) {
    // It stops responding: no gradient, no word to rank 0, until the run ends.
    std::unique_lock lock(slot.mu);
    slot.cv.wait(lock, [&] { return slot.stop; });
    return;
  }
  // A crash: the thread ends (the process does not), and rank 0 hears of it at once, as it
  // would from a dropped connection.
  Packet notice;
  Header h;
  h.worker = w;
  notice.set_header(h);
  send_quietly(notice, Packet::kHeaderBytes, kFailed);
}

// Worker w's side of the messages: its RemoteSlot, which the receive thread fills and cuts, and
// its pushes to rank 0.
class RankWorkers::SlotPort final : public WorkerPort {
 public:
  SlotPort(RankWorkers& rank, int local)
      : rank_(rank),
        w_(rank.first_ + local),
        slot_(rank.slots_[static_cast<std::size_t>(local)]),
        params_(rank.ctx_.model->num_params()),
        pushes_(rank.ctx_.model->num_params()),
        n_(rank.ctx_.model->num_params()) {}

  Taken take(EngineClock::time_point fail_at, double own_lead_s) override {
    std::unique_lock lock(slot_.mu);
    const auto ready = [&] { return slot_.stop || slot_.has_assignment; };
    if (fail_at != EngineClock::time_point::max()) {
      slot_.cv.wait_until(lock, fail_at, ready);
    } else {
      slot_.cv.wait(lock, ready);
    }
    if (slot_.stop) return {.stopped = true};
    if (EngineClock::now() >= fail_at) return {.failing = true};
    slot_.has_assignment = false;
    slot_.cancel.store(false, std::memory_order_relaxed);
    params_.swap(slot_.assigned);
    header_ = slot_.assigned_header;
    slot_.running = header_.ticket;
    // X runs from rank 0's assignment (on this rank's clock), and the worker is busy from it.
    return {.at = slot_.assigned_at,
            .x = to_duration(header_.value),
            .busy_from = slot_.assigned_at,
            .lead_s = own_lead_s,
            .params = params_.floats(n_)};
  }
  Woken sleep_until(EngineClock::time_point until) override { return sleep_on(slot_, until); }
  std::span<float> gradient() override {
    push_ = &pushes_.next();
    return push_->payload();
  }
  const std::atomic<bool>& cancel() const override { return slot_.cancel; }
  void account(double idle_s, bool computed, double busy_s) override {
    {
      std::lock_guard lock(slot_.mu);
      slot_.running = 0;  // a cancel from now on is for a minibatch already pushed or dropped
    }
    slot_.stats.idle_s += idle_s;
    if (computed) ++slot_.stats.computed;
    slot_.stats.busy_s += busy_s;
  }
  void deliver(float loss) override {
    Header out = header_;
    out.value = loss;
    push_->set_header(out);
    pushes_.send();
  }
  void fail(FailureKind kind, EngineClock::time_point) override {
    rank_.fail_worker(slot_, w_, kind);
  }

 private:
  RankWorkers& rank_;
  const int w_;
  RemoteSlot& slot_;
  Packet params_;           // the taken assignment's parameters (swapped with the slot's)
  PushBuffers pushes_;      // the gradients on their way to rank 0
  Packet* push_ = nullptr;  // the buffer the current gradient is computed into
  Header header_;           // the taken assignment's header, echoed with the push
  const std::size_t n_;
};

void RankWorkers::worker_main(int local) {
  // Timer slack 1 ns: the default 50 us would bias every sleep of a delay-dominated run.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  try {
    const int w = first_ + local;
    slots_[static_cast<std::size_t>(local)].stats.worker = w;
    // The thread engine's stream for worker w: the same seed gives the same data.
    WorkerLoop loop(*ctx_.model, o_.batch, o_.delay_mode,
                    ctx_.sampler(w, derive_seed(stream_seed_, SeedStream::kSampler, w)),
                    ctx_.run.failures().of(w));
    SlotPort port(*this, local);
    loop.run(port, start_, start_);
  } catch (...) {
    // Rank 0 would wait for this worker forever, so end the whole job: the user's model or the
    // machine's limits with exit 1 (the detail at debug level, -v), a bug with 3.
    const CaughtFailure failure = caught_failure(fmt::format("worker {}", first_ + local));
    fmt::print(stderr, "stalesgd: error: rank {}: {}\n", mpi::rank(), failure.message);
    if (!failure.detail.empty()) ctx_.logger().debug("{}", failure.detail);
    mpi::abort(failure.cause == FailureCause::kBug ? 3 : 1);
  }
}

}  // namespace stalesgd::mpi

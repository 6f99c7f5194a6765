// The real-thread engine: P worker threads with real sleeps for the injected delays, and the
// server: the model, the rule and every decision, behind one lock.
//
// The server is a role, not a hand-off. A worker that finishes a minibatch takes the server
// lock and runs the server's step itself (ServerCore: rule, learning rate, sum, update,
// records), then releases the lock and goes on. Updates are still applied one at a time in
// one total order by a single logical owner of the parameters, exactly as by a server thread;
// what is saved is two cross-core wake-ups per gradient (worker -> server -> worker), which on
// this 2-core VM cost more CPU than a softmax gradient (docs/performance.md, "Parameter-server
// overhead"). The caller's thread is the supervisor: it starts the workers, takes the
// evaluation snapshots, enforces the time budget, Ctrl-C and the stop.
//
// The server is the authority on what every worker does: whenever a worker becomes free (its
// push handled, its wait released, its minibatch cancelled) the server assigns it its next
// minibatch by pinning the current parameter version for it at that instant. A worker that
// wakes a little late therefore still computes on the version the rule gave it, and a rule's
// cancellations are exact: an update cancels every assigned minibatch on an older version,
// started or not.
//
// A minibatch's time: the server draws X at the assignment, and every minibatch one push frees
// starts at that push's time, as in the theory, where the server takes no time. The worker
// sleeps first and computes last (pad: it wakes about a gradient's time before X, computes on
// the version pinned at the assignment and waits out the rest, so the minibatch ends at
// max(C, X); add: it sleeps X, then computes): a minibatch cut while its worker sleeps costs no
// gradient. Timed waits aim early by their measured lateness.
//
// Who owns a sleeping worker's wake-up depends on the rule. In the asynchronous rules nothing
// is ever cancelled, and each worker sleeps on its own timer (one wake-up per minibatch). The
// synchronous rules cancel up to P - K minibatches per update; there the server owns the
// wake-ups (a WakeTimer thread releases each worker when its sleep is over), so that restarting
// a sleeping worker's minibatch is a heap update and wakes nobody. That costs one extra hop per
// minibatch and saves P - K wake-ups per update: what lets k-sync run with hundreds of workers.
// The server also knows, from the delays it drew, when every minibatch in flight will end, and
// that the update comes with the round's K-th earliest end: a minibatch that ends later is
// certain to be cut. Its worker is not released at all: it sleeps until the cut, which is what
// its injected delay says it does anyway, and spends no gradient that would be thrown away.
//
// Lock order: server_mu_, then a WorkerSlot's mutex, then the ParameterStore's; never the
// reverse, and never two slots at once.
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/evaluator.hpp"
#include "engine/progress.hpp"
#include "engine/run_context.hpp"
#include "engine/server_core.hpp"
#include "engine/wake_timer.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// An exponentially weighted mean (1/16 on the newest sample), so that a worker's estimates of
// its gradient time and of its timer's lateness follow the machine's load as it drifts.
class RunningMean {
 public:
  void add(double x) {
    value_ = empty_ ? x : value_ + (x - value_) / 16.0;
    empty_ = false;
  }
  bool empty() const { return empty_; }
  double value() const { return value_; }
  // How late a wake-up aimed at `aim` came. Clamped: a wake-up delayed by a busy machine says
  // little about the next one.
  void add_lateness(Clock::time_point aim) {
    add(std::min(std::chrono::duration<double>(Clock::now() - aim).count(), 300e-6));
  }

 private:
  double value_ = 0.0;
  bool empty_ = true;
};

// What the server and one worker share. alignas(64): slots sit in one array and are written
// by different threads; a cache line each keeps them from false sharing.
struct alignas(64) WorkerSlot {
  std::mutex mu;
  std::condition_variable cv;
  // The minibatch the server assigned: a pinned version, when it was assigned, its delay X.
  ParameterStore::Pin assigned;    // GUARDED_BY(mu)
  Clock::time_point assigned_at;   // GUARDED_BY(mu)
  Clock::duration assigned_x{};    // GUARDED_BY(mu)
  bool has_assignment = false;     // GUARDED_BY(mu): assigned, not yet taken by the worker
  // The worker may take the assignment: at once when it owns its wake-up, else when the
  // WakeTimer fires `ticket` (each assignment gets a new one; older firings are ignored).
  bool released = false;           // GUARDED_BY(mu)
  std::uint64_t ticket = 0;        // GUARDED_BY(mu)
  Clock::time_point release_aim;   // GUARDED_BY(mu): when the timer was asked to release it
  bool release_timed = false;      // GUARDED_BY(mu): the release waited for the timer
  RunningMean release_late;        // GUARDED_BY(mu): how late releases reach the worker
  double lead_s = -1.0;            // GUARDED_BY(mu): pad: wake this long before X (-1: unknown)
  Clock::time_point busy_since;    // GUARDED_BY(mu): first assignment since the last take
  bool computing = false;          // GUARDED_BY(mu): the assignment is not pushed yet
  std::uint64_t computing_on = 0;  // GUARDED_BY(mu): its version
  bool stop = false;               // GUARDED_BY(mu)
  // Set by the server under `mu` (and notified) to interrupt the minibatch in flight; the
  // model polls it between layers. Relaxed loads suffice: it carries no data, only "stop
  // early"; the mutex orders it against the reset when the worker takes its next assignment.
  std::atomic<bool> cancel{false};

  // Owned by the worker thread.
  std::vector<float> grad;
  ParameterStore::Pin pin;
  WorkerRecord stats;
};

class ThreadEngine {
 public:
  ThreadEngine(RunContext& ctx, Rule& rule, const StragglerProfile& delays)
      : ctx_(ctx),
        o_(ctx.options),
        rule_(rule),
        delays_(delays),
        store_(ctx.initial),
        core_(ctx, rule, store_, run_),
        cancelled_(static_cast<std::size_t>(o_.workers), 0),
        assigned_(static_cast<std::size_t>(o_.workers), 0),
        slots_(static_cast<std::size_t>(o_.workers)) {
    delays_of_.reserve(slots_.size());
    for (int w = 0; w < o_.workers; ++w) delays_of_.emplace_back(delays_, w, o_.seed);
  }

  Result<RunRecord> run();

 private:
  enum class Woken { kOnTime, kCancelled, kStopped };

  void worker_main(int w);
  void worker_loop(int w);
  // Worker w waits in its slot until `until`, its minibatch is cut or the run stops. The wait
  // is aimed `late` (the timer's usual lateness) before `until`; when it ends on its own, how
  // late it really woke is added to `late`.
  Woken sleep_until(WorkerSlot& slot, Clock::time_point until, RunningMean& late);
  // Worker w delivers its gradient: the server's step, under server_mu_. False when an update
  // cut the minibatch first (the server has counted it and assigned the next one) or the run
  // is over.
  bool deliver(int w, float loss);
  // `pushed_at`: when the gradient arrived; every minibatch this push frees starts then, as in
  // the theory, where the server takes no time. REQUIRES(server_mu_)
  Status handle(int w, std::uint64_t computed_on, float loss, Clock::time_point pushed_at);
  // Pins the current version for worker w's next minibatch, starting at `at`, and draws its
  // delay. An asynchronous rule's worker is woken at once (it sleeps on its own timer); a
  // synchronous rule's waits for release_contenders(). REQUIRES(server_mu_)
  void assign(int w, Clock::time_point at);
  // assign() with the slot's lock held; true when the worker must be notified.
  // REQUIRES(server_mu_, slot.mu)
  bool assign_locked(int w, WorkerSlot& slot, Clock::time_point at);
  // When a minibatch assigned at `at` with delay x starts its gradient: in pad mode `lead_s`
  // before X (at once while the worker has no estimate, lead_s < 0), in add mode at X.
  Clock::time_point compute_from(Clock::time_point at, Clock::duration x, double lead_s) const {
    if (o_.delay_mode == DelayMode::kAdd) return at + x;
    return lead_s < 0.0 ? at : at + x - seconds(lead_s);
  }
  // Releases every minibatch assigned but not yet released that can still be among the
  // round's K first, at once or through the timer. REQUIRES(server_mu_)
  void release_contenders();
  // The WakeTimer's callback: lets worker w take its assignment if `ticket` is still current.
  void release(int w, std::uint64_t ticket);
  // Cuts every minibatch in flight on a version older than `version` and restarts it at `at`.
  // REQUIRES(server_mu_)
  void cancel_older_than(std::uint64_t version, Clock::time_point at);
  // Asks the supervisor to end the run. REQUIRES(server_mu_)
  void request_stop(std::string reason);
  void stop_workers();
  double since_start(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }

  RunContext& ctx_;
  const TrainerOptions& o_;
  Rule& rule_;
  const StragglerProfile& delays_;

  // The server: everything below up to supervisor_cv_ is GUARDED_BY(server_mu_), except that
  // store_ also serves pins to workers through its own lock.
  std::mutex server_mu_;
  RunRecord run_;
  ParameterStore store_;
  ServerCore core_;
  std::vector<int> waiting_;               // workers blocked until the next update
  Clock::time_point last_push_;            // the latest push handled
  std::vector<std::uint64_t> cancelled_;   // per worker, minibatches the rule cut
  std::vector<std::uint64_t> assigned_;    // per worker, minibatches assigned (started)
  std::vector<DelaySampler> delays_of_;    // per worker: X is drawn at the assignment
  std::vector<WakeTimer::Entry> to_arm_;   // releases to hand to timer_
  // Synchronous rules: per worker, when its minibatch in flight ends (at + X; max() when it
  // has none), and whether it waits for release_contenders() to release it.
  std::vector<Clock::time_point> ends_at_;
  std::vector<char> unreleased_;
  std::vector<char> armed_;  // the timer may hold a wake-up for the worker
  std::vector<Clock::time_point> scratch_ends_;
  std::string stop_reason_;                // non-empty: the run is over, ignore further pushes
  std::condition_variable supervisor_cv_;  // wakes the supervisor when stop_reason_ is set

  std::vector<WorkerSlot> slots_;
  // The synchronous rules' wake-ups (null: each worker owns its own). Declared after slots_:
  // its thread calls into them, so it must stop first.
  std::unique_ptr<WakeTimer> timer_;

  std::mutex start_mu_;
  std::condition_variable start_cv_;
  bool started_ = false;     // GUARDED_BY(start_mu_)
  Clock::time_point start_;  // written before started_ is set; read by workers after

  std::mutex failure_mu_;
  std::exception_ptr failure_;  // GUARDED_BY(failure_mu_): a worker's exception, rethrown
};

void ThreadEngine::worker_main(int w) {
  // Timer slack 1 ns: the default 50 us would bias every sleep of a delay-dominated run.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  try {
    worker_loop(w);
  } catch (...) {
    {
      std::lock_guard lock(failure_mu_);
      if (!failure_) failure_ = std::current_exception();
    }
    std::lock_guard lock(server_mu_);
    request_stop("failed");
  }
}

ThreadEngine::Woken ThreadEngine::sleep_until(WorkerSlot& slot, Clock::time_point until,
                                              RunningMean& late) {
  const auto cut = [&] { return slot.stop || slot.cancel.load(std::memory_order_relaxed); };
  std::unique_lock lock(slot.mu);
  const auto aim = until - seconds(late.value());
  if (Clock::now() < aim && !slot.cv.wait_until(lock, aim, cut)) late.add_lateness(aim);
  if (slot.stop) return Woken::kStopped;
  return slot.cancel.load(std::memory_order_relaxed) ? Woken::kCancelled : Woken::kOnTime;
}

void ThreadEngine::worker_loop(int w) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  const Model& model = *ctx_.model;
  slot.grad.resize(model.num_params());
  auto ws = model.make_workspace(o_.batch);
  MinibatchSampler sampler(ctx_.data.train, o_.batch,
                           derive_seed(o_.seed, SeedStream::kSampler, w));
  WorkerRecord& stats = slot.stats;
  stats.worker = w;
  RunningMean compute_s;    // this worker's gradient time
  RunningMean compute_dev;  // its mean absolute deviation
  // pad: how long before X the worker starts its gradient: the usual gradient time with room
  // for a slow one. Not more: in k-sync every gradient started early and then cut is waste.
  const auto lead_s = [&] { return compute_s.value() + 3.0 * compute_dev.value() + 30e-6; };
  RunningMean late_s;     // how late its own timed waits wake up
  Batch batch = sampler.next();
  {
    std::unique_lock lock(start_mu_);
    start_cv_.wait(lock, [&] { return started_; });
  }
  auto last_end = start_;
  for (;;) {
    Clock::time_point t0;
    Clock::time_point busy_from;
    Clock::duration x;
    double lead = -1.0;
    {
      std::unique_lock lock(slot.mu);
      const auto ready = [&] { return slot.stop || (slot.has_assignment && slot.released); };
      if (!ready()) slot.cv.wait(lock, ready);
      if (slot.stop) return;
      slot.has_assignment = false;
      slot.cancel.store(false, std::memory_order_relaxed);
      slot.pin = std::move(slot.assigned);
      t0 = slot.assigned_at;
      x = slot.assigned_x;
      busy_from = slot.busy_since;
      if (slot.release_timed) slot.release_late.add_lateness(slot.release_aim);
      // A worker with no estimate of its gradient time yet computes at once.
      if (!compute_s.empty()) slot.lead_s = lead_s();
      lead = slot.lead_s;
    }
    stats.idle_s += std::max(0.0, std::chrono::duration<double>(busy_from - last_end).count());
    // Sleep first, compute last: a minibatch the rule cuts while its worker sleeps then costs
    // no gradient. With the server's timer the release came at the wake-up time already.
    Woken woken = Woken::kOnTime;
    if (!timer_) woken = sleep_until(slot, compute_from(t0, x, lead), late_s);
    if (woken == Woken::kStopped) return;
    std::optional<float> loss;
    const bool spent = woken == Woken::kOnTime;  // `batch` goes into a gradient
    if (spent) {
      const auto c0 = Clock::now();
      loss = model.loss_and_gradient(slot.pin.params(), batch, slot.grad, *ws, &slot.cancel);
      if (loss) {
        const double c = std::chrono::duration<double>(Clock::now() - c0).count();
        if (!compute_s.empty()) compute_dev.add(std::abs(c - compute_s.value()));
        compute_s.add(c);
        ++stats.computed;
      } else {
        woken = Woken::kCancelled;
      }
    }
    if (woken == Woken::kOnTime && o_.delay_mode == DelayMode::kPad) {
      woken = sleep_until(slot, t0 + x, late_s);
    }
    if (woken == Woken::kStopped) return;
    last_end = Clock::now();
    stats.busy_s += std::chrono::duration<double>(last_end - busy_from).count();
    if (woken == Woken::kOnTime && deliver(w, *loss)) ++stats.pushed;
    slot.pin.release();  // a worker asleep holds no version: buffers stay at most P + 2
    // The next minibatch is gathered after the delivery: in a sync round this overlaps the
    // wait for the others instead of delaying the round's last gradient.
    if (spent) batch = sampler.next();
  }
}

bool ThreadEngine::deliver(int w, float loss) {
  auto pushed_at = Clock::now();  // before the lock: waiting for it is the server's time
  std::lock_guard lock(server_mu_);
  pushed_at = last_push_ = std::max(pushed_at, last_push_);  // records stay in time order
  if (!stop_reason_.empty()) return false;                   // the run is over
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  {
    // The minibatch leaves "computing" only here, under the server lock: an update either cut
    // it before (and reassigned the worker) or sees it arrive, never neither.
    std::lock_guard slot_lock(slot.mu);
    if (slot.cancel.load(std::memory_order_relaxed)) return false;
    slot.computing = false;
  }
  if (timer_) ends_at_[static_cast<std::size_t>(w)] = Clock::time_point::max();
  if (auto s = handle(w, slot.pin.version(), loss, pushed_at); !s) {
    run_.divergence = s.error().message;
    request_stop("diverged");
    return true;
  }
  if (auto reason = ctx_.budget_reached(store_.version(), since_start(pushed_at));
      !reason.empty()) {
    request_stop(reason);
  }
  return true;
}

void ThreadEngine::request_stop(std::string reason) {
  if (stop_reason_.empty()) stop_reason_ = std::move(reason);
  supervisor_cv_.notify_all();
}

void ThreadEngine::assign(int w, Clock::time_point at) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  bool notify = false;
  {
    std::lock_guard lock(slot.mu);
    notify = assign_locked(w, slot, at);
  }
  if (notify) slot.cv.notify_one();
}

bool ThreadEngine::assign_locked(int w, WorkerSlot& slot, Clock::time_point at) {
  const auto i = static_cast<std::size_t>(w);
  // An assignment still pending was cut before the worker took it: the worker has been
  // sleeping since that one's start, and goes on sleeping.
  if (!slot.has_assignment) slot.busy_since = at;
  const bool timer_pending = slot.has_assignment && !slot.released && slot.release_timed;
  // A synchronous rule's minibatch is released before the next update or cut by it, so it
  // pins its version at the release: a minibatch cut unreleased never touches the store.
  slot.assigned = timer_ ? ParameterStore::Pin{} : store_.acquire();
  slot.assigned_at = at;
  // X is drawn at the assignment, as on the virtual clock, so that both engines consume each
  // worker's delay stream alike, cancelled minibatches included.
  slot.assigned_x = seconds(delays_of_[i].next(since_start(at)));
  slot.has_assignment = true;
  slot.computing = true;
  slot.computing_on = store_.version();
  ++assigned_[i];
  ++slot.ticket;
  slot.release_timed = false;
  if (timer_) {
    // Released by release_contenders() once every assignment of this push is known; the cut
    // minibatch's wake-up, if any, is replaced or disarmed there.
    armed_[i] = timer_pending;
    slot.released = false;
    ends_at_[i] = at + slot.assigned_x;
    unreleased_[i] = 1;
    return false;
  }
  slot.released = true;
  return true;
}

void ThreadEngine::release_contenders() {
  const auto now = Clock::now();
  // The round's update comes with its `needed`-th earliest end; a minibatch ending later
  // will be cut (ties are released). K is fixed within a round (AdaSync changes it at updates).
  const auto needed = static_cast<std::size_t>(std::max(1, rule_.k() - rule_.pending()));
  auto cutoff = Clock::time_point::max();
  scratch_ends_.clear();
  for (const auto end : ends_at_) {
    if (end != Clock::time_point::max()) scratch_ends_.push_back(end);
  }
  if (scratch_ends_.size() > needed) {
    const auto nth = scratch_ends_.begin() + static_cast<std::ptrdiff_t>(needed - 1);
    std::nth_element(scratch_ends_.begin(), nth, scratch_ends_.end());
    cutoff = *nth;
  }
  for (int w = 0; w < o_.workers; ++w) {
    const auto i = static_cast<std::size_t>(w);
    if (!unreleased_[i]) continue;
    if (ends_at_[i] > cutoff) {
      // Sleeps until the update cuts it; a cut minibatch's wake-up must not fire for nothing.
      if (armed_[i]) timer_->disarm(w);
      armed_[i] = 0;
      continue;
    }
    unreleased_[i] = 0;
    WorkerSlot& slot = slots_[i];
    bool notify = false;
    {
      std::lock_guard lock(slot.mu);
      // The worker computes last: released when its gradient should start, early by the
      // releases' lateness.
      slot.release_aim = compute_from(slot.assigned_at, slot.assigned_x, slot.lead_s) -
                         seconds(slot.release_late.value());
      slot.release_timed = slot.release_aim > now;
      slot.released = notify = !slot.release_timed;
      slot.assigned = store_.acquire();  // the version it was assigned: no update since
      if (!notify) to_arm_.push_back({w, slot.release_aim, slot.ticket});  // replaces an older one
    }
    if (notify && armed_[i]) {
      timer_->disarm(w);
    }
    armed_[i] = !notify;
    if (notify) slot.cv.notify_one();
  }
  if (to_arm_.empty()) return;
  timer_->arm(to_arm_);
  to_arm_.clear();
}

void ThreadEngine::release(int w, std::uint64_t ticket) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  {
    std::lock_guard lock(slot.mu);
    if (slot.ticket != ticket || !slot.has_assignment || slot.released) return;
    slot.released = true;
  }
  slot.cv.notify_one();
}

Status ThreadEngine::handle(int w, std::uint64_t computed_on, float loss,
                            Clock::time_point pushed_at) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  auto outcome =
      core_.on_gradient(since_start(pushed_at), w, computed_on, loss, slot.grad, slot.pin.params());
  if (!outcome) return outcome.error();
  const Decision& d = outcome->decision;
  if (!d.accept) {
    // Computed on a version an update has since cut off: lost like a cancelled minibatch.
    ++cancelled_[static_cast<std::size_t>(w)];
    assign(w, pushed_at);
  } else if (!d.apply) {
    if (d.next == AfterPush::kWait) {
      waiting_.push_back(w);
    } else {
      assign(w, pushed_at);
    }
  } else {
    if (d.cancel_in_flight) cancel_older_than(outcome->version, pushed_at);
    for (int waiter : waiting_) assign(waiter, pushed_at);
    waiting_.clear();
    assign(w, pushed_at);
  }
  if (timer_) release_contenders();
  return {};
}

void ThreadEngine::cancel_older_than(std::uint64_t version, Clock::time_point at) {
  for (int w = 0; w < o_.workers; ++w) {
    WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
    bool notify = false;
    {
      std::lock_guard lock(slot.mu);
      if (!slot.computing || slot.computing_on >= version) continue;
      // A worker that took its minibatch is computing or waiting out X: interrupt it. One
      // that has not is asleep: its next minibatch simply replaces the cut one.
      const bool taken = !slot.has_assignment;
      if (taken) slot.cancel.store(true, std::memory_order_relaxed);
      notify = assign_locked(w, slot, at) || taken;  // restarts on the new version
    }
    ++cancelled_[static_cast<std::size_t>(w)];
    if (notify) slot.cv.notify_one();
  }
}

void ThreadEngine::stop_workers() {
  for (auto& slot : slots_) {
    {
      std::lock_guard lock(slot.mu);
      slot.stop = true;
      slot.cancel.store(true, std::memory_order_relaxed);
    }
    slot.cv.notify_all();
  }
}

Result<RunRecord> ThreadEngine::run() {
  const Model& model = *ctx_.model;
  run_.model = model.describe();
  run_.num_params = model.num_params();
  Evaluator evaluator(model, ctx_.data,
                      {true, o_.eval_test_samples, o_.eval_train_samples, o_.target_error});
  ProgressLine progress(o_.progress);

  if (rule_.synchronous()) {
    ends_at_.assign(slots_.size(), Clock::time_point::max());
    unreleased_.assign(slots_.size(), 0);
    armed_.assign(slots_.size(), 0);
    scratch_ends_.reserve(slots_.size());
    timer_ = std::make_unique<WakeTimer>(
        o_.workers, [this](int w, std::uint64_t ticket) { release(w, ticket); });
  }
  std::vector<std::thread> threads;
  threads.reserve(slots_.size());
  for (int w = 0; w < o_.workers; ++w) threads.emplace_back([this, w] { worker_main(w); });

  {
    std::lock_guard lock(start_mu_);
    start_ = Clock::now();
    started_ = true;
  }
  start_cv_.notify_all();
  {
    std::lock_guard lock(server_mu_);
    for (int w = 0; w < o_.workers; ++w) assign(w, start_);
    if (timer_) release_contenders();
  }

  // The supervisor: snapshots every eval_every, the time budget, target error, Ctrl-C.
  const auto at = [&](double seconds) {
    return start_ +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  std::uint64_t evals_taken = 0;
  std::unique_lock lock(server_mu_);
  for (;;) {
    const auto now = Clock::now();
    const double elapsed = since_start(now);
    if (stop_reason_.empty()) {
      if (auto reason = ctx_.budget_reached(store_.version(), elapsed); !reason.empty()) {
        stop_reason_ = reason;
      } else if (evaluator.target_reached()) {
        stop_reason_ = "target-error";
      } else if (ctx_.interrupted()) {
        stop_reason_ = "interrupted";
      }
    }
    if (!stop_reason_.empty()) break;
    const double due = static_cast<double>(evals_taken) * o_.eval_every_s;
    if (elapsed >= due) {
      evaluator.submit(elapsed, store_.version(), store_.current());
      ++evals_taken;
      continue;
    }
    const auto latest = evaluator.latest();
    progress.update(elapsed, store_.version(),
                    latest ? std::optional(latest->test_error) : std::nullopt,
                    core_.mean_staleness());
    auto deadline = std::min(at(due), now + std::chrono::milliseconds(100));  // Ctrl-C poll
    if (o_.time_s > 0.0) deadline = std::min(deadline, at(o_.time_s));
    supervisor_cv_.wait_until(lock, deadline, [&] { return !stop_reason_.empty(); });
  }
  run_.wall_s = since_start(Clock::now());
  lock.unlock();
  // stop_reason_ is set: deliveries are ignored from now on, so the record no longer changes.
  stop_workers();
  for (auto& t : threads) t.join();
  if (timer_) timer_->stop();
  progress.clear();
  if (failure_) std::rethrow_exception(failure_);

  run_.stop_reason = stop_reason_;
  evaluator.submit(run_.wall_s, store_.version(), store_.current());
  run_.evals = evaluator.finish();
  for (int w = 0; w < o_.workers; ++w) {
    WorkerRecord rec = slots_[static_cast<std::size_t>(w)].stats;
    rec.applied = core_.applied(w);
    rec.cancelled = cancelled_[static_cast<std::size_t>(w)];
    rec.started = assigned_[static_cast<std::size_t>(w)];
    run_.workers.push_back(rec);
  }
  run_.param_buffers = store_.buffers();
  const auto final_params = store_.current();
  run_.final_params.assign(final_params.begin(), final_params.end());
  finish_record(o_, run_);
  return std::move(run_);
}

}  // namespace

Result<RunRecord> train_threads(RunContext& ctx) {
  auto rule = make_rule(ctx.options.rule, ctx.options.workers);
  if (!rule) return rule.error();
  auto delays =
      StragglerProfile::parse(ctx.options.delay, ctx.options.workers, ctx.options.delay_base_dir);
  if (!delays) return delays.error();
  ThreadEngine engine(ctx, **rule, *delays);
  return engine.run();
}

}  // namespace stalesgd

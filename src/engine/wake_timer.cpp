#include "engine/wake_timer.hpp"

#include <sys/prctl.h>

#include <utility>

namespace stalesgd {

WakeTimer::WakeTimer(int workers, Fire fire, Fail fail)
    : fire_(std::move(fire)),
      fail_(std::move(fail)),
      pos_(static_cast<std::size_t>(workers), -1),
      at_(static_cast<std::size_t>(workers)),
      ticket_(static_cast<std::size_t>(workers), 0),
      sleeping_until_(Clock::time_point::min()) {
  heap_.reserve(static_cast<std::size_t>(workers));
  thread_ = std::thread([this] { run(); });
}

WakeTimer::~WakeTimer() {
  stop();
}

void WakeTimer::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WakeTimer::arm(std::span<const Entry> entries) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    for (const Entry& e : entries) {
      const auto w = ix(e.worker);
      at_[w] = e.at;
      ticket_[w] = e.ticket;
      if (pos_[w] < 0) {
        heap_.push_back(e.worker);
        pos_[w] = static_cast<int>(heap_.size()) - 1;
        sift_up(pos_[w]);
      } else {
        sift_up(pos_[w]);
        sift_down(pos_[w]);
      }
      wake = wake || e.at < sleeping_until_;
    }
  }
  if (wake) cv_.notify_one();
}

void WakeTimer::disarm(int worker) {
  std::lock_guard lock(mu_);
  if (pos_[ix(worker)] >= 0) remove_at(pos_[ix(worker)]);
}

void WakeTimer::swap_nodes(int a, int b) {
  std::swap(heap_[ix(a)], heap_[ix(b)]);
  pos_[ix(heap_[ix(a)])] = a;
  pos_[ix(heap_[ix(b)])] = b;
}

void WakeTimer::sift_up(int i) {
  while (i > 0) {
    const int parent = (i - 1) / 2;
    if (!earlier(i, parent)) return;
    swap_nodes(i, parent);
    i = parent;
  }
}

void WakeTimer::sift_down(int i) {
  const int n = static_cast<int>(heap_.size());
  for (;;) {
    int least = i;
    for (int child : {2 * i + 1, 2 * i + 2}) {
      if (child < n && earlier(child, least)) least = child;
    }
    if (least == i) return;
    swap_nodes(i, least);
    i = least;
  }
}

void WakeTimer::remove_at(int i) {
  const int last = static_cast<int>(heap_.size()) - 1;
  pos_[ix(heap_[ix(i)])] = -1;
  if (i != last) {
    heap_[ix(i)] = heap_[ix(last)];
    pos_[ix(heap_[ix(i)])] = i;
  }
  heap_.pop_back();
  if (i < last) {
    sift_up(i);
    sift_down(i);
  }
}

void WakeTimer::run() {
  // Timer slack 1 ns: the default 50 us would be added to every wake-up it serves.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  // An exception ends the thread and goes to its owner, which ends the run (no terminate).
  try {
    loop();
  } catch (...) {
    if (fail_) fail_(caught_failure("the wake timer"));
  }
}

void WakeTimer::loop() {
  std::vector<std::pair<int, std::uint64_t>> due;
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (heap_.empty()) {
      sleeping_until_ = Clock::time_point::max();
      cv_.wait(lock);
      sleeping_until_ = Clock::time_point::min();
      continue;
    }
    const auto next = at_[ix(heap_[0])];
    if (Clock::now() < next) {
      // Woken early (re-armed, stopped) or on time: either way look at the heap again.
      sleeping_until_ = next;
      cv_.wait_until(lock, next);
      sleeping_until_ = Clock::time_point::min();
      continue;
    }
    const auto now = Clock::now();
    while (!heap_.empty() && at_[ix(heap_[0])] <= now) {
      const int w = heap_[0];
      due.emplace_back(w, ticket_[ix(w)]);
      remove_at(0);
    }
    lock.unlock();
    for (const auto& [w, ticket] : due) fire_(w, ticket);
    due.clear();
    lock.lock();
  }
}

}  // namespace stalesgd

// BlockingQueue: the workers' pushes to the server. Many producers, one consumer; the consumer
// blocks (no busy-waiting) until an item arrives or a deadline passes.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace stalesgd {

template <class T>
class BlockingQueue {
 public:
  void push(T item) {
    {
      std::lock_guard lock(mu_);
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
  }

  // The oldest item, or nullopt once `deadline` passes with the queue empty.
  template <class Clock, class Duration>
  std::optional<T> pop_until(std::chrono::time_point<Clock, Duration> deadline) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_until(lock, deadline, [&] { return !items_.empty(); })) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;  // GUARDED_BY(mu_)
};

}  // namespace stalesgd

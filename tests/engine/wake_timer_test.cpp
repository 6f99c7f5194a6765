// WakeTimer: releases come in time order, never before their time, once per arming, and a
// re-armed or disarmed worker's old wake-up never fires.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/wake_timer.hpp"

using namespace stalesgd;
using Clock = WakeTimer::Clock;

namespace {

struct Fired {
  int worker;
  std::uint64_t ticket;
  Clock::time_point when;
};

// Collects what the timer fires; wait() blocks until n firings arrived.
class Recorder {
 public:
  WakeTimer::Fire callback() {
    return [this](int w, std::uint64_t ticket) {
      {
        std::lock_guard lock(mu_);
        fired_.push_back({w, ticket, Clock::now()});
      }
      cv_.notify_all();
    };
  }
  std::vector<Fired> wait(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return fired_.size() >= n; });
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Fired> fired_;
};

}  // namespace

TEST_CASE("wake timer fires every worker once, in time order, never early", "[engine][timer]") {
  Recorder rec;
  WakeTimer timer(6, rec.callback());
  const auto t0 = Clock::now();
  const std::vector<int> order_ms = {9, 3, 15, 6, 1, 12};  // worker w fires at t0 + order_ms[w]
  std::vector<WakeTimer::Entry> entries;
  for (int w = 0; w < 6; ++w) {
    entries.push_back({w, t0 + std::chrono::milliseconds(order_ms[static_cast<std::size_t>(w)]),
                       static_cast<std::uint64_t>(100 + w)});
  }
  timer.arm(entries);
  const auto fired = rec.wait(6);
  timer.stop();
  REQUIRE(fired.size() == 6);
  const std::vector<int> expected = {4, 1, 3, 0, 5, 2};
  for (std::size_t i = 0; i < fired.size(); ++i) {
    const int w = fired[i].worker;
    CHECK(w == expected[i]);
    CHECK(fired[i].ticket == static_cast<std::uint64_t>(100 + w));
    CHECK(fired[i].when >= t0 + std::chrono::milliseconds(order_ms[static_cast<std::size_t>(w)]));
  }
}

TEST_CASE("wake timer: re-arming replaces a wake-up, disarming removes it", "[engine][timer]") {
  Recorder rec;
  WakeTimer timer(4, rec.callback());
  const auto t0 = Clock::now();
  const auto ms = [&](int n) { return t0 + std::chrono::milliseconds(n); };
  // Far enough ahead that the changes below come first even on a loaded machine.
  std::vector<WakeTimer::Entry> first = {
      {0, ms(200), 1}, {1, ms(210), 1}, {2, ms(220), 1}, {3, ms(230), 1}};
  timer.arm(first);
  // Worker 0 moves later, worker 3 earlier (a cancelled sleeper restarting), worker 1 is gone.
  std::vector<WakeTimer::Entry> second = {{0, ms(300), 2}, {3, ms(2), 2}};
  timer.arm(second);
  timer.disarm(1);
  rec.wait(3);
  timer.stop();  // nothing fires after stop() returns, so the record is final
  const auto all = rec.wait(0);
  REQUIRE(all.size() == 3);
  CHECK(all[0].worker == 3);
  CHECK(all[0].ticket == 2);
  CHECK(all[1].worker == 2);
  CHECK(all[1].ticket == 1);
  CHECK(all[2].worker == 0);
  CHECK(all[2].ticket == 2);
  CHECK(all[1].when >= ms(220));
  CHECK(all[2].when >= ms(300));
}

TEST_CASE("wake timer: stop() ends it with wake-ups still pending", "[engine][timer]") {
  Recorder rec;
  std::vector<WakeTimer::Entry> far = {{0, Clock::now() + std::chrono::hours(1), 7}};
  WakeTimer timer(1, rec.callback());
  timer.arm(far);
  timer.stop();  // returns at once instead of an hour later
  CHECK(rec.wait(0).empty());
}

TEST_CASE("wake timer: an exception in the callback ends the thread and reaches its owner",
          "[engine][wake]") {
  std::mutex mu;
  std::condition_variable cv;
  std::string failure;
  WakeTimer timer(
      2, [](int, std::uint64_t) { throw std::runtime_error("release failed"); },
      [&](const CaughtFailure& f) {
        {
          std::lock_guard lock(mu);
          failure = f.message;
        }
        cv.notify_all();
      });
  const std::vector<WakeTimer::Entry> entries{{0, Clock::now(), 1}};
  timer.arm(entries);
  std::unique_lock lock(mu);
  REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return !failure.empty(); }));
  CHECK(failure == "internal error in the wake timer: release failed");
  lock.unlock();
  timer.arm(entries);  // nothing runs it any more, and stop() still returns
  timer.stop();
}

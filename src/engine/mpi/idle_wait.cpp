// IdleWait: polling with short sleeps (why: idle_wait.hpp).
#include "engine/mpi/idle_wait.hpp"

#include <algorithm>

namespace stalesgd::mpi {
namespace {
constexpr std::chrono::microseconds kFirst{10};
constexpr std::chrono::microseconds kMost{200};
constexpr std::chrono::microseconds kBusyGap{300};
constexpr std::chrono::microseconds kOverdue{1000};
}  // namespace

void IdleWait::found(Clock::time_point now) {
  pause_ = kFirst;  // messages come in bursts (a server step's assignments)
  gap_ += (now - last_ - gap_) / 8;
  last_ = now;
}

IdleWait::Clock::duration IdleWait::next_pause(Clock::time_point now, Clock::time_point expected) {
  // Busy (messages less than kBusyGap apart on average): keep looking without sleeping for
  // twice the usual gap, as a sleep would outlast it.
  if (gap_ < kBusyGap && now - last_ < 2 * gap_) return Clock::duration::zero();
  const bool known = expected != Clock::time_point::max();
  if (known && now >= expected && now < expected + kOverdue) {
    pause_ = kFirst;  // due: look often until it comes (or is long overdue)
  }
  const Clock::duration pause =
      known && now < expected ? std::min<Clock::duration>(pause_, expected - now) : pause_;
  pause_ = std::min(pause_ * 2, kMost);
  return pause;
}

void wait_quietly(MPI_Request& request, std::chrono::microseconds pause) {
  wait_quietly_until(request, pause, std::chrono::steady_clock::time_point::max());
}

bool wait_quietly_until(MPI_Request& request, std::chrono::microseconds pause,
                        std::chrono::steady_clock::time_point deadline) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace stalesgd::mpi

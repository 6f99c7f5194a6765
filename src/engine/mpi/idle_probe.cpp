// IdleProbe: MPI_Improbe with short sleeps (why: idle_probe.hpp).
#include "engine/mpi/idle_probe.hpp"

#include <algorithm>
#include <thread>

namespace stalesgd::mpi {

MPI_Message IdleProbe::next(int source, MPI_Status& status, Clock::time_point expected) {
  constexpr std::chrono::microseconds kFirst{10};
  constexpr std::chrono::microseconds kMost{200};
  constexpr std::chrono::microseconds kBusyGap{300};
  constexpr std::chrono::microseconds kOverdue{1000};
  for (;;) {
    int found = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    // Twice: Open MPI's probe looks for a match first and only then runs its progress engine,
    // which takes in what arrived during the sleep; the second look finds it. One look per
    // wake-up found each message a whole pause late (measured: 400 us per hop, not 150).
    for (int look = 0; look < 2 && !found; ++look) {
      MPI_Improbe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &message, &status);
    }
    const auto now = Clock::now();
    if (found) {
      pause_ = kFirst;  // messages come in bursts (a server step's assignments)
      gap_ += (now - last_ - gap_) / 8;
      last_ = now;
      return message;
    }
    // Busy (messages less than kBusyGap apart on average): keep looking without sleeping for
    // twice the usual gap, as a sleep would outlast it.
    if (gap_ < kBusyGap && now - last_ < 2 * gap_) continue;
    if (expected != Clock::time_point::max() && now >= expected && now < expected + kOverdue) {
      pause_ = kFirst;  // due: look often until it comes (or is long overdue)
    }
    const bool before_due = expected != Clock::time_point::max() && now < expected;
    std::this_thread::sleep_for(before_due ? std::min<Clock::duration>(pause_, expected - now)
                                           : Clock::duration(pause_));
    pause_ = std::min(pause_ * 2, kMost);
  }
}

void wait_quietly(MPI_Request& request, std::chrono::microseconds pause) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace stalesgd::mpi

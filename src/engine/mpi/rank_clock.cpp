// RankClock::estimate: same host, or ping-pongs in turn (why: rank_clock.hpp).
#include "engine/mpi/rank_clock.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "engine/mpi/idle_wait.hpp"
#include "engine/mpi/wire.hpp"

namespace stalesgd::mpi {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kExchanges = 32;
constexpr std::chrono::microseconds kPause{200};  // a rank that waits for its turn sleeps

// The two sides of one exchange poll without sleeping: a sleep would be part of the round trip.
void send_now(const std::int64_t* values, int count, int peer) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Isend(values, count, MPI_INT64_T, peer, kClock, MPI_COMM_WORLD, &r);
  for (int done = 0; !done;) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}
void receive_now(std::int64_t* values, int count, int peer) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Irecv(values, count, MPI_INT64_T, peer, kClock, MPI_COMM_WORLD, &r);
  for (int done = 0; !done;) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}
void receive_quietly(std::int64_t* values, int count, int peer) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Irecv(values, count, MPI_INT64_T, peer, kClock, MPI_COMM_WORLD, &r);
  wait_quietly(r, kPause);
}

}  // namespace

RankClock RankClock::estimate(std::vector<RankPlace>* places) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  using Name = std::array<char, MPI_MAX_PROCESSOR_NAME>;
  Name mine{};
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  std::vector<Name> names(static_cast<std::size_t>(ranks));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, names.data(),
                static_cast<int>(mine.size()), MPI_CHAR, MPI_COMM_WORLD);
  // STALESGD_MPI_CLOCK=estimate: ping-pong with every rank, also on rank 0's host (the tests
  // run the cross-host path this way; docs/distributed.md).
  const char* mode = std::getenv("STALESGD_MPI_CLOCK");
  const bool always = mode != nullptr && std::strcmp(mode, "estimate") == 0;
  const auto remote = [&](int r) {
    return r != 0 && (always || std::strncmp(names[static_cast<std::size_t>(r)].data(),
                                             names[0].data(), names[0].size()) != 0);
  };

  RankClock clock;
  if (rank == 0) {
    if (places != nullptr) places->assign(static_cast<std::size_t>(ranks), RankPlace{});
    for (int r = 0; r < ranks; ++r) {
      RankPlace place;
      place.host = names[static_cast<std::size_t>(r)].data();
      if (remote(r)) {
        std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
        std::int64_t best[2] = {0, 0};  // offset, error
        const std::int64_t go = 0;
        send_now(&go, 1, r);  // its turn: it has slept until now
        for (int i = 0; i < kExchanges; ++i) {
          const std::int64_t sent = now_ns();
          std::int64_t theirs = 0;
          send_now(&sent, 1, r);
          receive_now(&theirs, 1, r);
          const std::int64_t back = now_ns();
          if (back - sent < best_rtt) {
            best_rtt = back - sent;
            best[0] = theirs - (sent + back) / 2;
            best[1] = (best_rtt + 1) / 2;
          }
        }
        send_now(best, 2, r);
        place.offset = std::chrono::nanoseconds(best[0]);
        place.error = std::chrono::nanoseconds(best[1]);
        place.estimated = true;
      }
      if (places != nullptr) (*places)[static_cast<std::size_t>(r)] = std::move(place);
    }
  } else if (remote(rank)) {
    std::int64_t go = 0;
    receive_quietly(&go, 1, 0);
    for (int i = 0; i < kExchanges; ++i) {
      std::int64_t sent = 0;
      receive_now(&sent, 1, 0);
      const std::int64_t mine_now = now_ns();
      send_now(&mine_now, 1, 0);
    }
    std::int64_t best[2] = {0, 0};
    receive_now(best, 2, 0);
    clock.offset = std::chrono::nanoseconds(best[0]);
    clock.error = std::chrono::nanoseconds(best[1]);
  }
  // Everyone goes on together; waiting ranks sleep (MPI_Barrier would spin).
  MPI_Request met = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &met);
  wait_quietly(met, kPause);
  return clock;
}

}  // namespace stalesgd::mpi

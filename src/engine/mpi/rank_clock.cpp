// RankClock::estimate: same host or ping-pongs (why: rank_clock.hpp).
#include "engine/mpi/rank_clock.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/mpi/wire.hpp"

namespace stalesgd::mpi {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kExchanges = 16;

}  // namespace

RankClock RankClock::estimate() {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  std::array<char, MPI_MAX_PROCESSOR_NAME> mine{};
  std::array<char, MPI_MAX_PROCESSOR_NAME> root{};
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  if (rank == 0) root = mine;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  // STALESGD_MPI_CLOCK=estimate: ping-pong with every rank, also on rank 0's host (the tests
  // run the cross-host path this way; docs/distributed.md).
  const char* mode = std::getenv("STALESGD_MPI_CLOCK");
  const bool always = mode != nullptr && std::strcmp(mode, "estimate") == 0;
  const int remote = always || std::strncmp(mine.data(), root.data(), root.size()) != 0 ? 1 : 0;
  std::vector<int> remote_of(static_cast<std::size_t>(ranks));
  MPI_Gather(&remote, 1, MPI_INT, remote_of.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);

  RankClock clock;
  if (rank == 0) {
    for (int r = 1; r < ranks; ++r) {
      if (!remote_of[static_cast<std::size_t>(r)]) continue;
      std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
      std::int64_t best[2] = {0, 0};  // offset, error
      for (int i = 0; i < kExchanges; ++i) {
        const std::int64_t sent = now_ns();
        std::int64_t theirs = 0;
        MPI_Send(&sent, 1, MPI_INT64_T, r, kClock, MPI_COMM_WORLD);
        MPI_Recv(&theirs, 1, MPI_INT64_T, r, kClock, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const std::int64_t back = now_ns();
        if (back - sent < best_rtt) {
          best_rtt = back - sent;
          best[0] = theirs - (sent + back) / 2;
          best[1] = best_rtt / 2;
        }
      }
      MPI_Send(best, 2, MPI_INT64_T, r, kClock, MPI_COMM_WORLD);
    }
  } else if (remote) {
    for (int i = 0; i < kExchanges; ++i) {
      std::int64_t sent = 0;
      MPI_Recv(&sent, 1, MPI_INT64_T, 0, kClock, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const std::int64_t mine_now = now_ns();
      MPI_Send(&mine_now, 1, MPI_INT64_T, 0, kClock, MPI_COMM_WORLD);
    }
    std::int64_t best[2] = {0, 0};
    MPI_Recv(best, 2, MPI_INT64_T, 0, kClock, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    clock.offset = std::chrono::nanoseconds(best[0]);
    clock.error = std::chrono::nanoseconds(best[1]);
  }
  return clock;
}

}  // namespace stalesgd::mpi

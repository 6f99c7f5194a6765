// The ping-pong curve of `stalesgd calibrate` under mpirun (the contract: mpi_runtime.hpp):
// rank 0 sends, rank 1 sends back, for each message size in turn until rank 0 says the size is
// done; a median per size, as one slow round trip (a descheduled rank) says nothing of the link.
// (The low decile, tried, made the MPI engine's predictions 10-30% too fast: the engine's copies
// run on the loaded machine the median sees; docs/machine.md.)
// Only rank 0 knows the sizes: the others need not have loaded the model's data.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "engine/mpi/idle_wait.hpp"
#include "engine/mpi/mpi_runtime.hpp"

namespace stalesgd::mpi::open_mpi {
namespace {

constexpr int kData = 1;
constexpr int kDone = 2;  // rank 0 to rank 1: the next size
constexpr int kHost = 3;
constexpr int kEnd = 4;  // and the last
constexpr int kWarmUp = 3;
constexpr int kLeast = 5;
constexpr int kMost = 100000;

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return {name, static_cast<std::size_t>(length)};
}

PingPongPoint time_size(std::vector<char>& buf, int bytes, double budget_s) {
  std::vector<double> trips;
  const auto start = std::chrono::steady_clock::now();
  for (int i = -kWarmUp; i < kMost; ++i) {
    const double t0 = MPI_Wtime();
    MPI_Send(buf.data(), bytes, MPI_BYTE, 1, kData, MPI_COMM_WORLD);
    MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, kData, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (i >= 0) trips.push_back(MPI_Wtime() - t0);
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    if (static_cast<int>(trips.size()) >= kLeast && spent.count() >= budget_s) break;
  }
  MPI_Send(nullptr, 0, MPI_BYTE, 1, kDone, MPI_COMM_WORLD);
  const auto mid = trips.begin() + static_cast<std::ptrdiff_t>(trips.size() / 2);
  std::nth_element(trips.begin(), mid, trips.end());
  return {static_cast<double>(bytes), *mid};
}

// Rank 1: sends every message back, in a buffer as large as the largest, until rank 0 ends.
void echo() {
  std::vector<char> buf(1);
  for (;;) {
    MPI_Status status;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    if (static_cast<std::size_t>(bytes) > buf.size()) buf.resize(static_cast<std::size_t>(bytes));
    MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kEnd) return;
    if (status.MPI_TAG == kData) MPI_Send(buf.data(), bytes, MPI_BYTE, 0, kData, MPI_COMM_WORLD);
  }
}

}  // namespace

Result<PingPong> ping_pong(const std::vector<double>& bytes, double budget_s) {
  if (!active()) return Error{"the ping-pong runs under mpirun, with at least 2 ranks"};
  PingPong out;
  if (rank() == 0) {
    const double largest = bytes.empty() ? 0.0 : *std::max_element(bytes.begin(), bytes.end());
    std::vector<char> buf(static_cast<std::size_t>(largest) + 1);
    out.host = processor_name();
    std::vector<char> name(MPI_MAX_PROCESSOR_NAME);
    MPI_Status status;
    MPI_Recv(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, kHost, MPI_COMM_WORLD, &status);
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    out.peer_host.assign(name.data(), static_cast<std::size_t>(length));
    for (const double b : bytes) {
      out.points.push_back(
          time_size(buf, static_cast<int>(b), budget_s / static_cast<double>(bytes.size())));
    }
    MPI_Send(nullptr, 0, MPI_BYTE, 1, kEnd, MPI_COMM_WORLD);
  } else if (rank() == 1) {
    const std::string host = processor_name();
    MPI_Send(host.data(), static_cast<int>(host.size()), MPI_CHAR, 0, kHost, MPI_COMM_WORLD);
    echo();
  }
  // The other ranks wait here, sleeping between looks, so that they leave the cores to the two.
  MPI_Request met = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &met);
  wait_quietly(met, std::chrono::milliseconds(1));
  return out;
}

}  // namespace stalesgd::mpi::open_mpi

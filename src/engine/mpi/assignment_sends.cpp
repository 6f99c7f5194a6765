// AssignmentSends: rank 0's non-blocking assignment sends (why: assignment_sends.hpp).
#include "engine/mpi/assignment_sends.hpp"

#include <thread>
#include <utility>

namespace stalesgd::mpi {

AssignmentSends::~AssignmentSends() {
  drain();
}

void AssignmentSends::send(int rank, const Header& header, ParameterStore::Pin pin) {
  auto held = std::make_unique<Held>(Held{header, std::move(pin)});
  const std::span<const float> params = held->pin.params();
  MPI_Request header_sent = MPI_REQUEST_NULL;
  MPI_Request params_sent = MPI_REQUEST_NULL;
  MPI_Isend(&held->header, sizeof(Header), MPI_BYTE, rank, kAssign, MPI_COMM_WORLD, &header_sent);
  MPI_Isend(params.data(), static_cast<int>(params.size()), MPI_FLOAT, rank, kParams,
            MPI_COMM_WORLD, &params_sent);
  requests_.push_back(header_sent);
  requests_.push_back(params_sent);
  held_.push_back(std::move(held));
}

void AssignmentSends::reap() {
  if (requests_.empty()) return;
  int completed = 0;
  std::vector<int> indices(requests_.size());
  MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &completed, indices.data(),
               MPI_STATUSES_IGNORE);
  if (completed == 0 || completed == MPI_UNDEFINED) return;
  // Drop the sends whose two requests are both done; keep the order of the rest (MPI does not
  // need it, but it keeps the oldest first for reading).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < held_.size(); ++i) {
    if (requests_[2 * i] == MPI_REQUEST_NULL && requests_[2 * i + 1] == MPI_REQUEST_NULL) continue;
    requests_[2 * kept] = requests_[2 * i];
    requests_[2 * kept + 1] = requests_[2 * i + 1];
    held_[kept] = std::move(held_[i]);
    ++kept;
  }
  held_.resize(kept);
  requests_.resize(2 * kept);
}

void AssignmentSends::drain() {
  // Test with short sleeps rather than MPI_Waitall, which spins a core (idle_probe.hpp).
  while (!held_.empty()) {
    reap();
    if (!held_.empty()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace stalesgd::mpi

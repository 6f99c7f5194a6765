// Outbox: rank 0's non-blocking sends (why: outbox.hpp).
#include "engine/mpi/outbox.hpp"

#include <thread>

namespace stalesgd::mpi {

Outbox::Outbox(int workers, int per_rank)
    : per_rank_(per_rank),
      workers_(static_cast<std::size_t>(workers)),
      requests_(2 * static_cast<std::size_t>(workers), MPI_REQUEST_NULL),
      indices_(2 * static_cast<std::size_t>(workers)) {}

Outbox::~Outbox() {
  // Test with short sleeps rather than MPI_Waitall, which spins a core (idle_wait.hpp).
  for (;;) {
    progress();
    bool busy = !small_.empty();
    for (const auto& r : requests_) busy = busy || r != MPI_REQUEST_NULL;
    if (!busy) return;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void Outbox::assign(const Header& header, ParameterStore::Pin pin) {
  if (stopped_) return;
  Worker& w = workers_[static_cast<std::size_t>(header.worker)];
  w.waiting = true;  // replaces one still waiting: that one was cut before it left
  w.next = header;
  w.next_pin = std::move(pin);
  const auto i = static_cast<std::size_t>(header.worker);
  if (requests_[2 * i] == MPI_REQUEST_NULL && requests_[2 * i + 1] == MPI_REQUEST_NULL) {
    start(header.worker);
  }
}

void Outbox::start(int w_index) {
  const auto i = static_cast<std::size_t>(w_index);
  Worker& w = workers_[i];
  w.waiting = false;
  w.header = std::make_unique<Header>(w.next);
  w.pin = std::move(w.next_pin);
  const std::span<const float> params = w.pin.params();
  MPI_Isend(w.header.get(), sizeof(Header), MPI_BYTE, rank_of(w_index), kAssign, MPI_COMM_WORLD,
            &requests_[2 * i]);
  MPI_Isend(params.data(), static_cast<int>(params.size_bytes()), MPI_BYTE, rank_of(w_index),
            kParams, MPI_COMM_WORLD, &requests_[2 * i + 1]);
}

void Outbox::cancel(const Header& header) {
  if (stopped_) return;
  Worker& w = workers_[static_cast<std::size_t>(header.worker)];
  if (w.waiting && w.next.ticket == header.ticket) {
    w.waiting = false;  // cut before it left: the worker never hears of it
    w.next_pin.release();
    return;
  }
  Small s{MPI_REQUEST_NULL, std::make_unique<Header>(header), rank_of(header.worker)};
  MPI_Isend(s.header.get(), sizeof(Header), MPI_BYTE, s.rank, kCancel, MPI_COMM_WORLD, &s.request);
  small_.push_back(std::move(s));
}

void Outbox::stop(int ranks) {
  if (stopped_) return;
  stopped_ = true;
  for (auto& w : workers_) {
    w.waiting = false;
    w.next_pin.release();
  }
  for (int r = 1; r < ranks; ++r) {
    Small s{MPI_REQUEST_NULL, std::make_unique<Header>(), r};
    MPI_Isend(s.header.get(), sizeof(Header), MPI_BYTE, r, kStop, MPI_COMM_WORLD, &s.request);
    small_.push_back(std::move(s));
  }
}

void Outbox::progress() {
  int completed = 0;
  MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &completed, indices_.data(),
               MPI_STATUSES_IGNORE);
  for (int k = 0; k < completed && completed != MPI_UNDEFINED; ++k) {
    const auto i = static_cast<std::size_t>(indices_[static_cast<std::size_t>(k)]) / 2;
    if (requests_[2 * i] != MPI_REQUEST_NULL || requests_[2 * i + 1] != MPI_REQUEST_NULL) continue;
    Worker& w = workers_[i];
    if (!w.header) continue;  // both of its requests completed in this call: freed already
    w.header.reset();
    w.pin.release();
    if (w.waiting) start(static_cast<int>(i));
  }
  if (small_.empty()) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < small_.size(); ++i) {
    int done = 0;
    MPI_Test(&small_[i].request, &done, MPI_STATUS_IGNORE);
    if (done) continue;
    if (kept != i) small_[kept] = std::move(small_[i]);
    ++kept;
  }
  small_.resize(kept);
}

}  // namespace stalesgd::mpi

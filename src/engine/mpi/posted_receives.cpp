// PostedReceives: MPI_Irecv per buffer, MPI_Testsome to poll (why: posted_receives.hpp).
#include "engine/mpi/posted_receives.hpp"

namespace stalesgd::mpi {

PostedReceives::PostedReceives(std::span<const int> sources, int per_source, std::size_t floats) {
  for (const int source : sources) {
    rings_.push_back({source, static_cast<int>(buffers_.size()), per_source});
    for (int i = 0; i < per_source; ++i) {
      ring_of_.push_back(static_cast<int>(rings_.size()) - 1);
      buffers_.emplace_back(floats);
    }
  }
  requests_.assign(buffers_.size(), MPI_REQUEST_NULL);
  done_.assign(buffers_.size(), Arrival{-1, 0, 0, 0});
  indices_.resize(buffers_.size());
  statuses_.resize(buffers_.size());
  for (std::size_t i = 0; i < buffers_.size(); ++i) repost(static_cast<int>(i));
}

PostedReceives::~PostedReceives() {
  if (cancel_all()) {
    // A receive from a rank that stopped answering may have matched a message whose bytes are
    // still on their way; it cannot be cancelled, and MPI may write its buffer until the
    // process ends (which it does: the job is ending without that rank). Leave the buffers.
    new std::vector<Packet>(std::move(buffers_));
  }
}

void PostedReceives::repost(int index) {
  const auto i = static_cast<std::size_t>(index);
  Packet& p = buffers_[i];
  const Ring& ring = rings_[static_cast<std::size_t>(ring_of_[i])];
  MPI_Irecv(p.data(), p.bytes(), MPI_BYTE, ring.source, MPI_ANY_TAG, MPI_COMM_WORLD, &requests_[i]);
}

void PostedReceives::poll(std::vector<Arrival>& out) {
  if (requests_.empty()) return;
  // Twice when the first finds nothing: Open MPI looks for completions before it runs its
  // progress engine, which takes in what arrived since; the second look finds it.
  bool any = false;
  for (int look = 0; look < 2 && !any; ++look) {
    int completed = 0;
    MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &completed, indices_.data(),
                 statuses_.data());
    if (completed == MPI_UNDEFINED) return;  // nothing is posted
    for (int k = 0; k < completed; ++k) {
      const int i = indices_[static_cast<std::size_t>(k)];
      const MPI_Status& s = statuses_[static_cast<std::size_t>(k)];
      int bytes = 0;
      MPI_Get_count(&s, MPI_BYTE, &bytes);
      done_[static_cast<std::size_t>(i)] = {i, s.MPI_SOURCE, s.MPI_TAG, bytes};
      any = true;
    }
  }
  // Each ring from its head, while its receives are done: a rank's messages in sent order.
  for (Ring& ring : rings_) {
    for (;;) {
      Arrival& a = done_[static_cast<std::size_t>(ring.first + ring.head)];
      if (a.index < 0) break;
      out.push_back(a);
      a.index = -1;
      ring.head = (ring.head + 1) % ring.count;
    }
  }
}

bool PostedReceives::cancel_all() {
  bool unsure = false;
  for (auto& r : requests_) {
    if (r == MPI_REQUEST_NULL) continue;
    // A posted receive that nothing matched is cancelled, and complete, at once. One that
    // matched a message still on its way cannot be; it is let go (MPI_Request_free) rather
    // than waited for, as its sender may never finish.
    MPI_Cancel(&r);
    int done = 0;
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) {
      MPI_Request_free(&r);
      unsure = true;
    }
  }
  return unsure;
}

}  // namespace stalesgd::mpi

// AssignmentSends: rank 0's assignments on their way. An assignment is a header and the
// parameters of a version, sent with MPI_Isend so that rank 0 never waits for a worker rank:
// the parameters exceed Open MPI's eager limit, so a blocking send would last until the worker
// rank's receive thread next polls, and a server step that starts P workers would pay P of
// those waits in a row, under the server lock. Each send keeps its header and a pin of its
// version until MPI reports it complete, so the buffer MPI reads is never recycled under it.
//
// Thread safety: not thread-safe; rank 0 uses it under its server lock.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "engine/mpi/wire.hpp"
#include "engine/parameter_store.hpp"

namespace stalesgd::mpi {

class AssignmentSends {
 public:
  AssignmentSends() = default;
  AssignmentSends(const AssignmentSends&) = delete;
  AssignmentSends& operator=(const AssignmentSends&) = delete;
  ~AssignmentSends();  // waits for the sends still under way

  // Starts sending `header` (kAssign) and then the pinned parameters (kParams) to `rank`.
  void send(int rank, const Header& header, ParameterStore::Pin pin);
  // Frees what the completed sends held; cheap when nothing completed.
  void reap();
  // Waits until every send completed. Only when the worker ranks still receive (they take
  // every message up to kStop, which follows the last assignment).
  void drain();
  std::size_t in_flight() const { return held_.size(); }

 private:
  struct Held {
    Header header;
    ParameterStore::Pin pin;
  };
  // Two requests per send, header's then parameters', at 2i and 2i + 1 for held_[i]; MPI
  // nulls a request when it completes. unique_ptr: MPI holds &header while it sends.
  std::vector<MPI_Request> requests_;
  std::vector<std::unique_ptr<Held>> held_;
};

}  // namespace stalesgd::mpi

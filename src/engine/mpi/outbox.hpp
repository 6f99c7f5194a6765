// Outbox: rank 0's messages on their way. Everything goes out with MPI_Isend, so that rank 0
// never waits for a worker rank: a blocking send of the parameters (beyond Open MPI's eager
// limit) lasts until the receiver takes them, and a server step that starts P workers would pay
// P of those waits in a row, under the server lock; a rank that hangs or a link that is down
// would hold the server forever. An assignment is its header and then the pinned parameters,
// sent from the server's buffer (no copy); the pin is held until MPI reports the send complete,
// so the buffer MPI reads is never recycled under it.
//
// One slow rank holds back only its own messages: each worker has at most one assignment in
// MPI's hands; a newer one waits for it, and replaces any other waiting (that one was cut
// before it left, so it and its cancel are dropped). Pins held are therefore at most two per
// worker, however long a rank stops reading.
//
// Thread safety: not thread-safe; rank 0 uses it under the server's lock.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "engine/mpi/wire.hpp"
#include "engine/parameter_store.hpp"

namespace stalesgd::mpi {

class Outbox {
 public:
  // `per_rank` workers on each worker rank; worker w on rank 1 + w / per_rank.
  Outbox(int workers, int per_rank);
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;
  ~Outbox();  // waits for the sends still under way (every rank took its messages up to kStop)

  // Worker header.worker's assignment: `header` and the pinned parameters.
  void assign(const Header& header, ParameterStore::Pin pin);
  // Cuts worker header.worker's minibatch header.ticket.
  void cancel(const Header& header);
  // kStop to every worker rank; nothing is sent after it (assignments still waiting are dropped).
  void stop(int ranks);
  // Frees what completed sends held and hands waiting assignments to MPI; cheap when nothing
  // completed.
  void progress();

 private:
  struct Worker {
    std::unique_ptr<Header> header;  // MPI reads it until the send completes
    ParameterStore::Pin pin;         // likewise the parameters
    bool waiting = false;            // an assignment waits for that one
    Header next;
    ParameterStore::Pin next_pin;
  };
  struct Small {  // a cancel or a stop
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_ptr<Header> header;
    int rank = 0;
  };
  void start(int w);  // hands worker w's waiting assignment to MPI
  int rank_of(int w) const { return 1 + w / per_rank_; }

  const int per_rank_;
  std::vector<Worker> workers_;
  // Worker w's assignment in MPI's hands: its header's send at 2w, its parameters' at 2w + 1
  // (MPI_REQUEST_NULL once complete), for MPI_Testsome.
  std::vector<MPI_Request> requests_;
  std::vector<Small> small_;
  std::vector<int> indices_;
  bool stopped_ = false;
};

}  // namespace stalesgd::mpi

// PostedReceives: receives kept posted for whatever a set of ranks sends next, each into its
// own Packet, polled without blocking. A receive posted before its message arrives is matched
// on arrival: the bytes of an eager message land in the buffer at once, and a large message's
// transfer runs in MPI's progress engine alongside every other rank's, so one rank's large or
// slow message never holds back another's (head-of-line blocking: with one probe-then-receive
// thread, rank 0 waited in MPI_Mrecv for a whole remote gradient while local pushes queued).
//
// Each rank's messages are handed over in the order it sent them: MPI matches a rank's messages
// to that rank's receives in the order they were posted, and this keeps each rank's receives in
// a ring, reposted in the order they were taken. A later small message of a rank may complete
// before an earlier large one; it waits for it, never for another rank's.
//
// Thread safety: not thread-safe; one receive thread owns it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

#include "engine/mpi/wire.hpp"

namespace stalesgd::mpi {

class PostedReceives {
 public:
  struct Arrival {
    int index;   // the receive: buffer(index) holds the message until repost(index)
    int source;  // the sending rank
    int tag;
    int bytes;
  };

  // `per_source` receives from each of `sources`, any tag, each into a Packet of `floats`
  // floats after the header (the largest message they send).
  PostedReceives(std::span<const int> sources, int per_source, std::size_t floats);
  PostedReceives(const PostedReceives&) = delete;
  PostedReceives& operator=(const PostedReceives&) = delete;
  ~PostedReceives();  // cancels the receives still posted

  // The messages received since the last call, each rank's in the order it sent them,
  // appended to `out`; never blocks. Each receive stays unposted until repost(), which must be
  // called in the order they were handed over (a rank's last message may stay unposted).
  void poll(std::vector<Arrival>& out);
  Packet& buffer(int index) { return buffers_[static_cast<std::size_t>(index)]; }
  // Posts receive `index` again, into buffer(index) (which the caller may have swapped for
  // another Packet of the same size).
  void repost(int index);
  // Cancels every receive still posted (at the end, when every rank has sent its last
  // message or will not); true when one had matched a message still on its way, whose buffer
  // MPI may then write until the process ends.
  bool cancel_all();

 private:
  struct Ring {  // one source's receives: indices first .. first + count - 1, taken in turn
    int source;
    int first;
    int count;
    int head = 0;  // the next to hand over, as an offset from first
  };

  std::vector<Ring> rings_;
  std::vector<int> ring_of_;  // per receive
  std::vector<Packet> buffers_;
  std::vector<MPI_Request> requests_;
  std::vector<Arrival> done_;  // per receive: completed, not yet handed over (index -1: none)
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace stalesgd::mpi

// The MPI engine's messages: their tags and the layout of their bytes (docs/distributed.md,
// "Message protocol"). Rank 0 is the server; worker w lives on rank 1 + w / W as local thread
// w % W. Every message is sent as MPI_BYTE and received into a Packet kept posted for whatever
// comes next (PostedReceives, which hands each rank's messages over in the order sent).
//
//   rank 0 -> worker rank   kAssign  Header{worker, ticket, version, X seconds, assigned at}
//                           kParams  the parameters of that version (n floats from the Packet's
//                                    start), the message right after its kAssign: sent straight
//                                    from the server's buffer, contiguous, so that shared memory
//                                    copies it once (a datatype joining header and parameters
//                                    made Open MPI pack it in small fragments instead)
//                           kCancel  Header{worker, ticket}: the minibatch `ticket` is cut
//                           kStop    Header: the run is over; answer with kRecords
//   worker rank -> rank 0   kPush    Header{worker, ticket, version, loss} and the gradient
//                           kFailed  Header{worker}: that worker thread crashed (--fail)
//                           kRecords Header, then 3 doubles per local worker: computed, busy
//                                    s, idle s; the rank's last message
//
// MPI keeps the messages between two ranks in the order they were posted, blocking or not, and
// rank 0 posts a kAssign and its kParams back to back under its server lock, so a kParams
// always follows its kAssign, a cancel never overtakes the assignment it cuts and kStop is the
// last message a rank receives.
//
// Thread safety: plain values; a Packet is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace stalesgd::mpi {

enum Tag : int {
  kAssign = 1,
  kParams = 2,
  kCancel = 3,
  kStop = 4,
  kPush = 5,
  kRecords = 6,
  kClock = 7,  // start-up only: RankClock's ping-pongs
  kFailed = 8,
};

struct Header {
  std::uint64_t ticket = 0;   // the minibatch: rank 0 numbers each worker's assignments from 1
  std::uint64_t version = 0;  // the parameters' version it is computed on
  double value = 0.0;         // kAssign: the injected delay X in seconds; kPush: the loss
  // kAssign: when rank 0 assigned it, on rank 0's steady clock (ns); X runs from there.
  std::int64_t assigned_ns = 0;
  std::int32_t worker = 0;  // global worker index
  std::int32_t unused = 0;
};
static_assert(sizeof(Header) == 40);

// A Header and n floats in one buffer. The header's bytes are copied in and out with memcpy
// (no aliasing through pointers); the floats follow at once, aligned as floats.
class Packet {
 public:
  static constexpr std::size_t kHeaderFloats = sizeof(Header) / sizeof(float);
  explicit Packet(std::size_t n = 0) : buf_(kHeaderFloats + n) {}

  Header header() const {
    Header h;
    std::memcpy(static_cast<void*>(&h), buf_.data(), sizeof h);  // Header is trivially copyable
    return h;
  }
  void set_header(const Header& h) { std::memcpy(buf_.data(), &h, sizeof h); }
  std::span<float> payload() { return std::span(buf_).subspan(kHeaderFloats); }
  std::span<const float> payload() const { return std::span(buf_).subspan(kHeaderFloats); }
  // The first n floats from the buffer's start: a kParams message, which has no header.
  std::span<const float> floats(std::size_t n) const { return std::span(buf_).first(n); }
  void* data() { return buf_.data(); }
  const void* data() const { return buf_.data(); }
  // The whole buffer, and a message of only a header, in bytes (MPI_BYTE counts).
  int bytes() const { return static_cast<int>(buf_.size() * sizeof(float)); }
  static constexpr int kHeaderBytes = sizeof(Header);
  void swap(Packet& other) noexcept { buf_.swap(other.buf_); }

 private:
  std::vector<float> buf_;
};

// The per-worker figures a worker rank reports at the end, as doubles after kRecords' header.
constexpr int kRecordFields = 3;
// A kRecords message of a rank with `per_rank` workers, in bytes; and the floats it takes.
constexpr int records_bytes(int per_rank) {
  return Packet::kHeaderBytes + per_rank * kRecordFields * static_cast<int>(sizeof(double));
}
constexpr std::size_t records_floats(int per_rank) {
  return static_cast<std::size_t>(per_rank * kRecordFields) * sizeof(double) / sizeof(float);
}

}  // namespace stalesgd::mpi

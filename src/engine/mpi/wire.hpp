// The MPI engine's messages: their tags and the layout of their bytes (docs/distributed.md,
// "Message protocol"). Rank 0 is the server; worker w lives on rank 1 + w / W as local thread
// w % W.
//
//   rank 0 -> worker rank   kAssign  Header{worker, ticket, version, X seconds, assigned at}
//                           kParams  the parameters of that version (n floats), right after
//                           kCancel  Header{worker, ticket}: the minibatch `ticket` is cut
//                           kStop    empty: the run is over
//   worker rank -> rank 0   kPush    Packet: Header{worker, ticket, version, loss} + gradient
//                           kRecords 3 doubles per local worker: computed, busy s, idle s
//
// Rank 0's sends happen under its server lock, so a kAssign and its kParams are never split by
// another send to that rank and kStop is the last message any rank receives. Worker threads
// send concurrently, so a push travels as one message.
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
  kClock = 7  // start-up only: RankClock's ping-pongs with a rank on another host
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

// Header and floats in one buffer of floats, sent as MPI_FLOAT: the header's 32 bytes are
// copied in and out with memcpy (no aliasing through pointers).
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
  float* data() { return buf_.data(); }
  int count() const { return static_cast<int>(buf_.size()); }  // in floats

 private:
  std::vector<float> buf_;
};

// The per-worker figures a worker rank reports at the end, in kRecords order.
constexpr int kRecordFields = 3;

}  // namespace stalesgd::mpi

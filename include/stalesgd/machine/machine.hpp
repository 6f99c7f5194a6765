// The machine a run is modelled on (docs/machine.md), shared by `stalesgd theory` and the virtual
// clock: N cores that the workers' compute and the server share (processor sharing), the
// server's time per gradient and per update, S server shards each holding 1/S of the
// parameters, and a link per worker (latency, bandwidth) that carries the parameters out and
// the gradient in. The default is the paper's free machine: a core per worker, a server that
// takes no time and no network, under which every result is the one it always was.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct Link {
  double latency_s = 0.0;      // one way
  double bandwidth_bps = 0.0;  // bits per second; 0: no limit
  // Where the bytes go. A network carries them beside the cores (a NIC per end). Shared memory
  // on one host moves them by a copy that the receiving process makes: bytes / bandwidth of CPU
  // work on the shared cores (the worker's for the parameters, the server's for a gradient).
  bool memory = false;
  bool free() const { return latency_s == 0.0 && bandwidth_bps == 0.0; }
  // Seconds to move `bytes` one way: latency + bytes / bandwidth.
  double seconds(double bytes) const;
  // The bandwidth part alone: the copy's CPU time on a memory link.
  double copy_seconds(double bytes) const;
};

struct Machine {
  int cores = 0;                   // 0: a core for every worker and for the server
  double server_gradient_s = 0.0;  // the server's work per arriving gradient (all shards)
  double server_update_s = 0.0;    // and per update it applies
  int shards = 1;                  // S: each shard does 1/S of that work, in parallel
  Link link;                       // per worker, between it and the server
  double compute_s = 0.0;          // C: one minibatch gradient's compute (CPU work)
  // How much slower a job runs with `contention_cores` cores busy than alone (memory and caches
  // shared): 1 is none. With b of the N cores busy a job runs 1 + (contention - 1)(b - 1) /
  // (contention_cores - 1) times slower (b capped at contention_cores).
  double contention = 1.0;
  int contention_cores = 1;
  std::uint64_t parameters = 0;  // a message carries 4 bytes per parameter
  std::string model;             // the model it was calibrated for ("" when given by flags)

  // The paper's free machine: nothing here changes a simulated time.
  bool free() const {
    return cores == 0 && server_gradient_s == 0.0 && server_update_s == 0.0 && link.free();
  }
  double message_bytes() const { return 4.0 * static_cast<double>(parameters); }
  // "2 cores, server 20us/gradient + 10us/update, 4 shards, link 1ms 1Gbit/s".
  std::string describe() const;
};

// "latency=1ms,bandwidth=1Gbit[,medium=network|memory]": latency a duration
// (straggler/duration.hpp), bandwidth a number with bit, kbit, Mbit, Gbit or B, kB, MB, GB,
// optionally "/s"; any key may be left out; "none" is no link. The message names the bad key or
// unit.
Result<Link> parse_link(std::string_view spec);

// "DURATION" (both the per-gradient and the per-update time) or
// "gradient=DURATION,update=DURATION". Finite and >= 0; "auto" is the caller's (it measures).
struct ServerTime {
  double gradient_s = 0.0;
  double update_s = 0.0;
};
Result<ServerTime> parse_server_time(std::string_view spec);

// A machine file (JSON) as `stalesgd calibrate` writes it. Refused, with one line, when it is
// not one, when a value is out of range, or when it was calibrated for another model than
// `model` (unless `model` is empty).
Result<Machine> read_machine_file(const std::filesystem::path& path, std::string_view model);
// Writes it atomically; `calibration` (JSON text, may be empty) records how it was measured.
Status write_machine_file(const std::filesystem::path& path, const Machine& machine,
                          const std::string& calibration);

// The checks every source of a machine passes: cores >= 0 (a flag's 0 is refused by the flag),
// shards >= 1, every time finite and >= 0.
Status check_machine(const Machine& machine);

}  // namespace stalesgd

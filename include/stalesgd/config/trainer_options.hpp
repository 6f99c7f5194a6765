// TrainerOptions: everything a training run is configured by, in one struct with in-class
// defaults. The CLI (`stalesgd train`) and the TOML experiment loader only fill it (through the
// option table); validation lives in one place, ResolvedRun::resolve (config/resolved_run.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "stalesgd/model/model.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/delay_mode.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

enum class ClockKind { kReal, kVirtual };

// Where the workers run (docs/distributed.md): threads of this process, or the worker ranks of
// an mpirun (rank 0 is the server).
enum class EngineKind { kThread, kMpi };

// Where the parameter server runs on the real clock (docs/architecture.md, "Server placement").
enum class ServerPlacement {
  kInline,   // the worker that delivers a gradient runs the server's step under the server lock
  kThread,   // a dedicated server thread; gradients arrive on a concurrent queue
  kHogwild,  // async only: no server, workers update the shared parameters in place, lock-free
};

struct TrainerOptions {
  // --- Behaviour: what is trained, and by which rule.
  std::string dataset = "mnist";            // mnist | fashion-mnist | cifar10
  std::filesystem::path data_dir = "data";  // holds <dataset>/
  ModelSpec model;                          // --model, --hidden, --l2
  RuleSpec rule;                            // --rule, --k, --staleness-bound, --backups
  int workers = 1;                          // P worker threads
  bool workers_given = false;               // --workers was set (CLI or file): --engine mpi
                                            // checks it against the ranks it runs on
  int batch = 32;                           // samples per minibatch gradient
  // Local SGD on the workers (FedBuff's clients, docs/rules.md "FedBuff"): with Q > 1 a job is
  // Q steps of --local-lr on Q minibatches from the point the server sent, and delivers the
  // change w - y_Q, which the server applies with --lr (the server step size). 1: a gradient.
  int local_steps = 1;
  double local_lr = 0.0;
  double lr = 0.05;                            // base learning rate (the cap lr_max for dutta:)
  std::string lr_rule = "fixed";               // see lr/learning_rate.hpp
  std::string delay = "none";                  // straggler spec (docs/stragglers.md)
  DelayMode delay_mode = DelayMode::kPad;      // how the delay combines with compute time
  std::filesystem::path delay_base_dir = ".";  // trace files in `delay` resolve against this
  std::uint64_t seed = 1;                      // one seed: init, sampling, delays
  double adasync_every_s = 0.0;                // AdaSync (k-sync, k-async): every t0 seconds raise
                                               // K to min(P, ceil(K0 sqrt(F(w_0) / F(w_t)))),
                                               // K0 = --k; 0 = off

  // --- Stopping: the first budget reached ends the run; at least one of iterations/time.
  std::uint64_t iterations = 0;  // server updates; 0 = no limit
  double time_s = 0.0;           // seconds of (real or virtual) clock; 0 = no limit
  double target_error = 0.0;     // stop once a snapshot's test error <= this; 0 = off

  // --- Failed workers (docs/rules.md, "Failed workers").
  std::string fail = "none";      // --fail: workers made to fail, e.g. "w3:crash@2s;w5:hang@4s"
  double worker_timeout_s = 0.0;  // a minibatch this long past its end and not delivered marks
                                  // a hung worker; 0 = max(10 s, 20 x the delays' 0.999 quantile)
  double stall_timeout_s = 0.0;   // real clock: no update for this long ends the run; 0 =
                                  // max(60 s, 2 x the worker timeout)

  // --- Engine and measurement.
  ClockKind clock = ClockKind::kReal;  // real threads and sleeps, or a discrete-event clock
  double compute_time_s = 0.0;         // virtual clock: seconds one gradient's compute takes
  // The machine the virtual clock models (stalesgd/machine/machine.hpp, docs/machine.md); the
  // defaults are the paper's free machine. Flags override a --machine file's values.
  int cores = 0;                  // --cores N; 0: a core per worker and for the server
  std::string server_time;        // --server-time auto|DURATION|gradient=D,update=D; "": none
  std::string link = "none";      // --link 'latency=1ms,bandwidth=1Gbit'
  int shards = 1;                 // --shards S: server shards, each 1/S of the parameters
  std::filesystem::path machine;  // --machine FILE: written by `stalesgd calibrate`
  ServerPlacement server = ServerPlacement::kInline;  // real clock: where the server runs
  EngineKind engine = EngineKind::kThread;  // --engine mpi: P = (ranks - 1) * workers_per_rank
  int workers_per_rank = 1;                 // --engine mpi: worker threads per worker rank
  bool sequential = false;                  // plain SGD in one thread, no server: the reference
  bool record_drift = false;          // updates.csv's drift_sq and grad_sq: what the error theory's
                                      // gamma is measured from (docs/theory.md, "Error")
                                      // that P = 1 sync must match bit for bit
  double eval_every_s = 0.5;          // seconds between parameter snapshots
  std::size_t eval_test_samples = 0;  // test samples per evaluation; 0 = the whole split
  std::size_t eval_train_samples = 10000;  // train loss over the first N training samples
  // Real clock, --eval-sizing auto: once the evaluator falls behind, intermediate snapshots on
  // as many samples as fit its share of --eval-every; full: every one on all of them.
  bool eval_sizing = true;
  // --partition: each worker's own shard of the training split (stalesgd/data/partition.hpp).
  std::string partition = "none";
  std::size_t holdout = 0;  // the last N training samples never trained on: evals.csv's val_*
  // --plugin: the plug-ins (stalesgd/plugin.hpp) whose rules the run may use, absolute paths
  // separated by colons; loaded before the options are read (config/plugins.hpp).
  std::string plugin;

  // --- Output.
  std::filesystem::path out_dir;     // --out; empty: nothing written (tests)
  bool force = false;                // --force: replace a run already in out_dir
  double checkpoint_every_s = 0.0;   // with out_dir: checkpoint.bin this often; 0 = never
  std::filesystem::path resume_dir;  // --resume DIR: continue the run there
  std::filesystem::path save_model;  // --save-model PATH: the final parameters as .npy; empty: none
  bool progress = true;              // progress on stderr: a live line on a terminal, else
                                     // a log line every progress_every_s
  double progress_every_s = 10.0;    // seconds between progress log lines (and in run.log)
};

// Samples one job draws: --batch for each of its --local-steps.
inline int job_samples(const TrainerOptions& o) {
  return o.batch * o.local_steps;
}

// The virtual clock's limits (docs/cli.md, "The virtual clock"). It scores every snapshot at
// once and in full, so a run takes at most kMaxVirtualEvaluations of them (--time / --eval-every,
// and a single --compute-time / --eval-every, are checked against it; a run past it is stopped
// by the engine's watchdog); and one gradient's --compute-time is at most an hour.
inline constexpr double kMaxVirtualEvaluations = 100000;
inline constexpr double kMaxComputeTimeSeconds = 3600.0;

// ResolvedRun::resolve with the result thrown away, for a caller that only wants the check (the
// message names the flag and the fix). A caller that goes on to train should resolve instead, so
// that the delay spec and trace files are parsed once.
Status validate(const TrainerOptions& options);

const char* to_string(ClockKind clock);
const char* to_string(ServerPlacement server);
const char* to_string(EngineKind engine);

}  // namespace stalesgd

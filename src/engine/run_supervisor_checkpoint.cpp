// RunSupervisor's checkpoints: when one is due, writing it, and resuming from one
// (docs/reliability.md).
#include "engine/run_supervisor.hpp"

#include "config/option_table.hpp"

#include <fmt/format.h>

#include "util/state_stream.hpp"

namespace stalesgd {
namespace {

// Which engine wrote a checkpoint (a resumed run is checked against it).
std::string engine_name(const TrainerOptions& o) {
  if (o.sequential) return "sequential";
  if (o.clock == ClockKind::kVirtual) return "virtual";
  if (o.engine == EngineKind::kMpi) return "mpi";
  return o.server == ServerPlacement::kHogwild ? "hogwild" : "thread";
}

}  // namespace

bool RunSupervisor::checkpoint_due(double t) const {
  return journal_ != nullptr && o_.checkpoint_every_s > 0.0 && t >= next_checkpoint_s_;
}

void RunSupervisor::checkpoint(double t, const RunRecord& run, const std::string& engine_state) {
  stage(run);
  write_staged();
  write_checkpoint(t, engine_state);
}

void RunSupervisor::write_checkpoint(double t, const std::string& engine_state) {
  const double every = o_.checkpoint_every_s;
  next_checkpoint_s_ = (std::floor(t / every) + 1.0) * every;
  if (!io_error_.empty()) return;
  if (auto s = journal_->flush(); !s) return journal_failed(s.error());
  CheckpointHeader h;
  h.args = options_to_args(o_);
  h.engine = engine_name(o_);
  h.run_id = run_id_;
  h.options_digest = options_digest(o_);
  h.data_digest = ctx_.data.digest;
  h.t = t;
  h.offsets = journal_->offsets();
  h.snapshots = snapshots_;
  h.evals_skipped = evaluator_.skipped();
  h.rows.updates = journaled_.updates;
  h.rows.gradients = journaled_.gradients;
  h.rows.evals = evaluator_.ready(0);
  h.rows.evals.resize(std::min<std::size_t>(h.rows.evals.size(), evals_seen_));
  StateWriter out;
  save_header(out, h);
  if (auto s = stalesgd::write_checkpoint(journal_->dir(), out.bytes() + engine_state); !s) {
    journal_failed(s.error());
  } else {
    ctx_.logger().debug("checkpoint at {:.3f} s: {} updates, {} gradients, {} evaluations", t,
                        h.rows.updates.size(), h.rows.gradients.size(), h.rows.evals.size());
  }
}

Result<RunSupervisor::Resumed> RunSupervisor::resume(
    const std::string& payload, std::string_view engine,
    const std::function<void(StateReader&)>& engine_part) {
  StateReader in(payload);
  const CheckpointHeader header = load_header(in);
  if (!in.ok()) return Error{"checkpoint: " + in.error()};
  // The same run (the CLI checked it before the folder was touched; a library caller too).
  if (auto same = check_identity(header, o_, ctx_.data); !same) return same.error();
  Resumed resumed{restore(header), header.t};
  if (in.tag(engine)) engine_part(in);
  if (in.ok() && !in.at_end()) in.fail("bytes left over after the last part");
  if (!in.ok()) return Error{"checkpoint: " + in.error()};
  return resumed;
}

RunRecord RunSupervisor::restore(const CheckpointHeader& h) {
  run_id_ = h.run_id;
  snapshots_ = h.snapshots;
  evaluator_.restore(h.rows.evals, h.evals_skipped);
  updates_seen_ = h.rows.updates.size();
  gradients_seen_ = h.rows.gradients.size();
  evals_seen_ = h.rows.evals.size();
  if (o_.checkpoint_every_s > 0.0) {
    journaled_.updates = h.rows.updates;
    journaled_.gradients = h.rows.gradients;
    next_checkpoint_s_ = (std::floor(h.t / o_.checkpoint_every_s) + 1.0) * o_.checkpoint_every_s;
  }
  return h.rows;
}

void RunSupervisor::save_checkpoint(SupervisedEngine& engine, Clock::time_point start) {
  StateWriter state;
  double t = 0.0;
  engine.save(state, [&](std::uint64_t, std::span<const float>, const RunRecord* run) {
    t = std::chrono::duration<double>(Clock::now() - start).count();
    if (run != nullptr) stage(*run);
  });
  write_staged();
  write_checkpoint(t, state.bytes());
}

}  // namespace stalesgd

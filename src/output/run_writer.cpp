// The run's output files and summary.json (the JSON is built here: no JSON in public headers).
#include "output/run_writer.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <type_traits>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include "config/option_table.hpp"
#include "stalesgd/version.hpp"
#include "util/atomic_file.hpp"
#include "util/build_info.hpp"
#include "util/host_info.hpp"
#include "util/plugin_loader.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

nlohmann::json theory_json(const std::optional<RuntimePrediction>& theory) {
  if (!theory) return nullptr;
  nlohmann::json j;
  j["note"] = "per-minibatch time X only: compute time is not modelled";
  j["seconds_per_iteration"] = theory->seconds_per_iteration;
  j["method"] = to_string(theory->method);
  if (!theory->formula.empty()) j["formula"] = theory->formula;
  if (theory->upper_bound) j["upper_bound"] = *theory->upper_bound;
  if (const auto& mc = theory->monte_carlo) {
    j["monte_carlo"] = {{"seconds_per_iteration", mc->seconds},
                        {"ci95", mc->ci95},
                        {"iterations", mc->iterations},
                        {"mean_staleness", mc->mean_staleness}};
  }
  return j;
}

// summary.json's "config": the options as the run used them. Where 0 means "none" (no
// iteration or time limit, no target, no AdaSync, no checkpoints, no stall watchdog) it says
// null; the evaluation sizes are the samples really used.
nlohmann::json resolved_config(const ResolvedRun& config, const RunRecord& run) {
  nlohmann::json c = options_to_json(config.options());
  for (const char* key : {"iterations", "time", "target_error", "adasync_every", "checkpoint_every",
                          "stall_timeout"}) {
    if (c.contains(key) && c[key].is_number() && c[key].get<double>() == 0.0) c[key] = nullptr;
  }
  if (run.eval_test_samples > 0) c["eval_samples"] = run.eval_test_samples;
  if (run.eval_train_samples > 0) c["eval_train_samples"] = run.eval_train_samples;
  return c;
}

nlohmann::json provenance_json(const Provenance& p) {
  nlohmann::json j;
  j["stalesgd"] = {{"version", version()}, {"commit", git_commit()}};
  j["command_line"] = shell_quoted(p.command_line);
  j["started_at"] = iso8601_utc(p.started);
  j["ended_at"] = p.ended == std::chrono::system_clock::time_point{}
                      ? nlohmann::json(nullptr)
                      : nlohmann::json(iso8601_utc(p.ended));
  const BuildInfo b = build_info();
  j["build"] = {{"type", b.type},         {"compiler", b.compiler},
                {"flags", b.flags},       {"march", b.native ? "native" : "portable"},
                {"sanitize", b.sanitize}, {"libraries", nlohmann::json::object()}};
  for (const auto& [name, version] : b.libraries) j["build"]["libraries"][name] = version;
  if (!p.data_digest.empty()) {
    j["data"] = {{"dataset", p.dataset}, {"crc32", p.data_digest}};
  }
  // The plug-ins loaded in this process, whose rules the run may have used.
  j["plugins"] = nlohmann::json::array();
  for (const auto& plugin : loaded_plugins()) {
    j["plugins"].push_back({{"path", plugin.path.string()}, {"crc32", plugin.crc32}});
  }
  const HostInfo h = host_info();
  j["host"] = {{"name", h.name}, {"cpu", h.cpu}, {"cores", h.cores}, {"os", h.os}};
  // The machine's load during a real-clock run colours its wallclock figures.
  const auto load = [](double l) { return l < 0.0 ? nlohmann::json(nullptr) : nlohmann::json(l); };
  j["host"]["load_1min_start"] = load(p.load_at_start);
  j["host"]["load_1min_end"] = p.ended == std::chrono::system_clock::time_point{}
                                   ? nlohmann::json(nullptr)
                                   : load(load_average());
  return j;
}

nlohmann::json run_summary(const ResolvedRun& config, const RunRecord& run,
                           const std::optional<RuntimePrediction>& theory) {
  nlohmann::json j;
  j["config"] = resolved_config(config, run);
  j["model"] = run.model;
  j["num_params"] = run.num_params;
  j["stop_reason"] = to_string(run.stop_reason);
  if (!run.divergence.empty()) j["divergence"] = run.divergence;
  if (!run.stop_message.empty()) j["stop_message"] = run.stop_message;
  j["iterations"] = run.updates.empty() ? 0 : run.updates.back().iteration;
  j["wall_s"] = run.wall_s;
  j["scoring_tail_s"] = run.scoring_tail_s;
  j["seconds_per_iteration"] = seconds_per_iteration(run);
  const auto st = staleness_stats(run);
  j["staleness"] = {{"mean", st.mean}, {"p95", st.p95}, {"max", st.max}};
  const auto g = gradient_totals(run);
  j["gradients"] = {{"started", g.started},
                    {"computed", g.computed},
                    {"pushed", g.pushed},
                    {"applied", g.applied},
                    {"cancelled", g.cancelled}};
  if (!run.evals.empty()) {
    j["final_test_error"] = run.evals.back().test_error;
    j["final_test_loss"] = run.evals.back().test_loss;
    if (!std::isnan(run.evals.back().val_error)) {
      j["final_val_error"] = run.evals.back().val_error;
      j["final_val_loss"] = run.evals.back().val_loss;
    }
  } else {
    j["final_test_error"] = nullptr;
  }
  j["time_to_target_s"] =
      run.time_to_target_s ? nlohmann::json(*run.time_to_target_s) : nlohmann::json(nullptr);
  j["failures"] = nlohmann::json::array();  // docs/rules.md, "Failed workers"
  for (const auto& w : run.workers) {
    if (w.failed)
      j["failures"].push_back({{"worker", w.worker}, {"at_s", w.failed_at_s}, {"how", w.failure}});
  }
  if (!run.ranks.empty()) {  // --engine mpi (docs/distributed.md)
    j["ranks"] = nlohmann::json::array();
    for (const auto& r : run.ranks) {
      j["ranks"].push_back(
          {{"rank", r.rank},
           {"host", r.host},
           {"workers", r.workers == 0 ? nlohmann::json::array()
                                      : nlohmann::json::array(
                                            {r.first_worker, r.first_worker + r.workers - 1})},
           {"clock_offset_s", r.clock_offset_s},
           {"clock_error_s", r.clock_error_s},
           {"clock_estimated", r.clock_estimated},
           {"silences", r.silences},
           {"longest_silence_s", r.longest_silence_s},
           {"answered", r.answered}});
    }
  }
  if (!run.shards.empty()) {  // --partition (docs/rules.md, "Partitions"), from the run's seed
    j["partition"] = {{"spec", config.options().partition}, {"workers", nlohmann::json::array()}};
    for (std::size_t w = 0; w < run.shards.size(); ++w) {
      std::size_t n = 0;
      for (const std::size_t c : run.shards[w]) n += c;
      j["partition"]["workers"].push_back(
          {{"worker", w}, {"samples", n}, {"per_class", run.shards[w]}});
    }
  }
  j["param_buffers"] = run.param_buffers;
  j["evals_skipped"] = run.evals_skipped;
  j["theory"] = theory_json(theory);
  return j;
}

}  // namespace

// summary.json's "status": "complete" for a run that reached its budget or target,
// "interrupted" (a signal; --engine mpi: mpirun ended the job), "failed" (an exception in one of
// its threads, or a write that failed), "incomplete" (diverged, too few workers left, stalled).
static const char* run_status(StopReason reason, bool write_failed) {
  switch (reason) {
    case StopReason::kInterrupted:
      return "interrupted";
    case StopReason::kFailed:
      return "failed";
    case StopReason::kDiverged:
    case StopReason::kWorkersFailed:
    case StopReason::kStalled:
      return "incomplete";
    default:
      return write_failed ? "failed" : "complete";
  }
}

Status write_running_summary(const fs::path& dir, const ResolvedRun& config,
                             const Provenance& provenance) {
  nlohmann::json summary;
  summary["status"] = "running";
  summary["config"] = resolved_config(config, RunRecord{});
  if (!provenance.command_line.empty()) summary["provenance"] = provenance_json(provenance);
  return write_file_atomically(dir / "summary.json", summary.dump(2) + "\n");
}

Status finish_run_outputs(RunJournal& journal, const ResolvedRun& config, const RunRecord& run,
                          const std::optional<RuntimePrediction>& theory, const std::string& error,
                          const Provenance& provenance) {
  // Rows the journal has not seen yet (all of them for a run that had no journal while it ran).
  const auto rest = [](const auto& rows, std::uint64_t written) {
    using Row = typename std::decay_t<decltype(rows)>::value_type;
    return std::span<const Row>(rows).subspan(std::min<std::size_t>(written, rows.size()));
  };
  const JournalOffsets& at = journal.offsets();
  Status s = journal.append(rest(run.updates, at.update_rows));
  if (s) s = journal.append(rest(run.gradients, at.gradient_rows));
  if (s) s = journal.append(rest(run.evals, at.eval_rows));
  if (s) s = journal.close();
  std::string first_error = error;
  if (!s && first_error.empty()) first_error = s.error().message;
  // A full disk: the room held back since the start is what workers.csv and summary.json use.
  journal.release_reserve();

  fmt::memory_buffer workers;
  fmt::format_to(std::back_inserter(workers),
                 "worker,started,computed,pushed,applied,cancelled,busy_s,idle_s,failed,"
                 "failed_at_s,failure\n");
  for (const auto& w : run.workers) {
    fmt::format_to(std::back_inserter(workers), "{},{},{},{},{},{},{:.6f},{:.6f},{},{:.6f},{}\n",
                   w.worker, w.started, w.computed, w.pushed, w.applied, w.cancelled, w.busy_s,
                   w.idle_s, w.failed ? 1 : 0, w.failed_at_s, w.failure);
  }
  if (auto w = write_file_atomically(journal.dir() / "workers.csv", fmt::to_string(workers));
      !w && first_error.empty()) {
    first_error = w.error().message;
  }
  // summary.json last: its presence marks the run's end. A run cut by an error still gets one
  // if it can be written, saying so.
  nlohmann::json summary = run_summary(config, run, theory);
  if (!provenance.command_line.empty()) {
    Provenance p = provenance;
    if (p.ended == std::chrono::system_clock::time_point{})
      p.ended = std::chrono::system_clock::now();
    summary["provenance"] = provenance_json(p);
    // The run's identity, the same through every resume: provenance, as the process and host
    // are, since an uninterrupted run of the same flags is another run.
    if (!run.run_id.empty()) summary["provenance"]["run_id"] = run.run_id;
    // When training began in this process: started_at to it is the start-up (data, model, the
    // evaluator's timing), it to ended_at the training and the scoring tail.
    if (run.clock_started != std::chrono::system_clock::time_point{}) {
      summary["provenance"]["clock_started_at"] = iso8601_utc(run.clock_started);
    }
  }
  summary["status"] = run_status(run.stop_reason, !first_error.empty());
  if (!first_error.empty()) summary["error"] = first_error;
  if (auto w = write_file_atomically(journal.dir() / "summary.json", summary.dump(2) + "\n");
      !w && first_error.empty()) {
    first_error = w.error().message;
  }
  if (!first_error.empty() && first_error != error) return Error{first_error};
  return {};
}

Status write_run_outputs(const fs::path& dir, const ResolvedRun& config, const RunRecord& run,
                         const std::optional<RuntimePrediction>& theory) {
  auto journal = RunJournal::open(dir, RunJournal::Existing::kOverwrite);
  if (!journal) return journal.error();
  return finish_run_outputs(**journal, config, run, theory);
}

}  // namespace stalesgd

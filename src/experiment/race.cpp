#include "stalesgd/experiment/race.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "experiment/mpi_launch.hpp"
#include "output/checkpoint.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/output/run_writer.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "util/atomic_file.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

// What a row says of the run itself, whichever process ran it.
RaceRow row_of(const ExperimentRun& r) {
  RaceRow row;
  row.label = r.label;
  row.slug = r.slug;
  row.rule = r.run.rule().kind;
  row.k = r.run.rule().k;
  row.seed = r.options().seed;
  row.clock = to_string(r.options().clock);
  return row;
}

// The columns that follow from the others.
void derive(RaceRow& row) {
  row.wasted_fraction = row.gradients_started
                            ? static_cast<double>(row.gradients_cancelled) / row.gradients_started
                            : 0.0;
  if (row.stop_reason == StopReason::kDiverged) row.final_test_error.reset();
}

RaceRow make_row(const ExperimentRun& r, const RunRecord& run,
                 const std::optional<RuntimePrediction>& theory) {
  RaceRow row = row_of(r);
  row.iterations = run.updates.empty() ? 0 : run.updates.back().iteration;
  row.wall_s = run.wall_s;
  row.time_to_target_s = run.time_to_target_s;
  if (!run.evals.empty()) row.final_test_error = run.evals.back().test_error;
  row.seconds_per_iteration = seconds_per_iteration(run);
  if (theory) {
    row.predicted_seconds_per_iteration = theory->seconds_per_iteration;
    row.predicted_method = theory->method;
  }
  const auto st = staleness_stats(run);
  row.mean_staleness = st.mean;
  row.p95_staleness = st.p95;
  const auto g = gradient_totals(run);
  row.gradients_started = g.started;
  row.gradients_applied = g.applied;
  row.gradients_cancelled = g.cancelled;
  row.stop_reason = run.stop_reason;
  row.divergence = run.divergence;
  derive(row);
  return row;
}

template <typename Enum, std::size_t N>
Enum enum_named(const std::string& name, const Enum (&values)[N]) {
  for (Enum v : values) {
    if (name == to_string(v)) return v;
  }
  throw std::runtime_error(fmt::format("unknown value '{}'", name));
}

std::optional<double> optional_number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

// The row of a run done in another process (engine = "mpi"), from the summary.json it wrote.
RaceRow row_from_summary(const ExperimentRun& r, const nlohmann::json& s) {
  RaceRow row = row_of(r);
  row.iterations = s.at("iterations").get<std::uint64_t>();
  row.wall_s = s.at("wall_s").get<double>();
  row.time_to_target_s = optional_number(s, "time_to_target_s");
  row.final_test_error = optional_number(s, "final_test_error");
  row.seconds_per_iteration = s.at("seconds_per_iteration").get<double>();
  if (const auto& t = s.at("theory"); t.is_object() && t.contains("seconds_per_iteration")) {
    row.predicted_seconds_per_iteration = t["seconds_per_iteration"].get<double>();
    row.predicted_method =
        enum_named(t.at("method").get<std::string>(),
                   {PredictionMethod::kClosedForm, PredictionMethod::kMonteCarlo});
  }
  row.mean_staleness = s.at("staleness").at("mean").get<double>();
  row.p95_staleness = s.at("staleness").at("p95").get<double>();
  const auto& g = s.at("gradients");
  row.gradients_started = g.at("started").get<std::uint64_t>();
  row.gradients_applied = g.at("applied").get<std::uint64_t>();
  row.gradients_cancelled = g.at("cancelled").get<std::uint64_t>();
  row.stop_reason =
      enum_named(s.at("stop_reason").get<std::string>(),
                 {StopReason::kIterations, StopReason::kTime, StopReason::kTargetError,
                  StopReason::kInterrupted, StopReason::kDiverged, StopReason::kFailed,
                  StopReason::kWorkersFailed, StopReason::kStalled});
  if (s.contains("divergence")) row.divergence = s["divergence"].get<std::string>();
  derive(row);
  return row;
}

std::string opt(const std::optional<double>& v, const char* format = "{:.6g}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string();
}

// --resume: the summary of a run that finished (complete, and not stopped by Ctrl-C).
std::optional<nlohmann::json> finished_summary(const fs::path& dir) {
  std::ifstream in(dir / "summary.json");
  if (!in) return std::nullopt;
  auto s = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!s.is_object() || s.value("status", "") != std::string("complete") ||
      s.value("stop_reason", "") == std::string("interrupted")) {
    return std::nullopt;
  }
  return s;
}

// One run of this process into `dir`, through a journal; with --resume from its checkpoint
// when it has one.
Result<RaceRow> run_in_process(const ExperimentRun& r, const Dataset& ds, const fs::path& dir,
                               const std::atomic<bool>* interrupt, const RaceSettings& settings) {
  TrainerOptions o = r.options();
  o.checkpoint_every_s = settings.checkpoint_every_s;
  auto resolved = ResolvedRun::resolve(o);
  if (!resolved) return resolved.error();
  std::optional<std::string> payload;
  JournalOffsets offsets;
  if (settings.resume && fs::exists(dir / kCheckpointFile)) {
    auto read = read_checkpoint(dir);
    if (!read) return read.error();
    StateReader in(*read);
    const CheckpointHeader header = load_header(in);
    if (!in.ok()) return Error{fmt::format("{}: {}", (dir / kCheckpointFile).string(), in.error())};
    if (header.args != options_to_args(o)) {
      return Error{
          fmt::format("{} was written for other settings than the experiment file's "
                      "now; restore the file, or race into a new --out",
                      (dir / kCheckpointFile).string())};
    }
    payload = std::move(read).value();
    offsets = header.offsets;
  }
  auto journal = RunJournal::open(
      dir, payload ? RunJournal::Existing::kContinue : RunJournal::Existing::kOverwrite, offsets);
  if (!journal) return journal.error();
  auto run =
      train(*resolved, ds, TrainIo{interrupt, journal->get(), payload ? &*payload : nullptr});
  if (!run) return run.error();
  std::string error;
  if (run->stop_reason == StopReason::kDiverged) error = run->divergence;
  if (run->stop_reason == StopReason::kFailed || run->stop_reason == StopReason::kWorkersFailed ||
      run->stop_reason == StopReason::kStalled) {
    error = run->stop_message;
  }
  const auto theory = predict_runtime(*resolved);
  if (auto s = finish_run_outputs(**journal, *resolved, *run, theory, error); !s) return s.error();
  if (run->stop_reason == StopReason::kFailed) return Error{run->stop_message};
  return make_row(r, *run, theory);
}

}  // namespace

Result<RaceOutcome> run_race(const Experiment& ex, const fs::path& out_dir,
                             const std::atomic<bool>* interrupt,
                             const std::function<void(std::size_t, const RaceRow&)>& on_run_done,
                             const RaceSettings& settings) {
  auto data = check_race(ex);
  if (!data) return data.error();
  return run_race(ex, std::move(data).value(), out_dir, interrupt, on_run_done, settings);
}

Result<RaceOutcome> run_race(const Experiment& ex, RaceData data, const fs::path& out_dir,
                             const std::atomic<bool>* interrupt,
                             const std::function<void(std::size_t, const RaceRow&)>& on_run_done,
                             const RaceSettings& settings) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    return Error{fmt::format("cannot create output dir {} ({}); pass a writable --out",
                             out_dir.string(), ec.message())};
  }
  RaceOutcome outcome;
  for (std::size_t i = 0; i < ex.runs.size(); ++i) {
    const auto& r = ex.runs[i];
    const auto done = settings.resume ? finished_summary(out_dir / r.slug) : std::nullopt;
    if (done) {
      try {
        outcome.rows.push_back(row_from_summary(r, *done));
      } catch (const std::exception& e) {
        return Error{fmt::format("run '{}': {}: unexpected summary.json ({})", r.label,
                                 (out_dir / r.slug / "summary.json").string(), e.what())};
      }
    } else if (r.options().engine == EngineKind::kMpi) {
      auto summary = run_under_mpirun(r, out_dir / r.slug, interrupt);
      if (!summary) return Error{fmt::format("run '{}': {}", r.label, summary.error().message)};
      try {
        outcome.rows.push_back(row_from_summary(r, *summary));
      } catch (const std::exception& e) {
        return Error{fmt::format("run '{}': {}: unexpected summary.json ({})", r.label,
                                 (out_dir / r.slug / "summary.json").string(), e.what())};
      }
    } else {
      const auto& ds = data.at({r.options().dataset, r.options().data_dir.string()});
      auto row = run_in_process(r, ds, out_dir / r.slug, interrupt, settings);
      if (!row) return Error{fmt::format("run '{}': {}", r.label, row.error().message)};
      outcome.rows.push_back(std::move(row).value());
    }
    if (on_run_done) on_run_done(i, outcome.rows.back());
    if (outcome.rows.back().stop_reason == StopReason::kInterrupted) {
      outcome.interrupted = true;
      break;
    }
  }
  if (auto s = write_results_csv(out_dir / "results.csv", outcome.rows); !s) return s.error();
  return outcome;
}

Status write_results_csv(const fs::path& path, const std::vector<RaceRow>& rows) {
  std::string csv =
      "label,slug,rule,k,seed,clock,iterations,wall_s,time_to_target_s,final_test_error,"
      "seconds_per_iteration,predicted_seconds_per_iteration,predicted_method,"
      "mean_staleness,p95_staleness,gradients_started,gradients_applied,"
      "gradients_cancelled,wasted_fraction,stop_reason\n";
  for (const auto& r : rows) {
    // Labels may hold commas: quote them (RFC 4180).
    std::string label = r.label;
    for (std::size_t p = 0; (p = label.find('"', p)) != std::string::npos; p += 2)
      label.insert(p, "\"");
    fmt::format_to(
        std::back_inserter(csv),
        "\"{}\",{},{},{},{},{},{},{:.6f},{},{},{:.6g},{},{},{:.4f},{:.0f},{},{},{},{:.4f},{}\n",
        label, r.slug, to_string(r.rule), r.k, r.seed, r.clock, r.iterations, r.wall_s,
        opt(r.time_to_target_s), opt(r.final_test_error), r.seconds_per_iteration,
        opt(r.predicted_seconds_per_iteration),
        r.predicted_seconds_per_iteration ? to_string(r.predicted_method) : "", r.mean_staleness,
        r.p95_staleness, r.gradients_started, r.gradients_applied, r.gradients_cancelled,
        r.wasted_fraction, to_string(r.stop_reason));
  }
  // Whole or not at all: a crash or a full disk never leaves a cut results.csv.
  if (auto s = write_file_atomically(path, csv); !s) {
    return Error{fmt::format("{}; check that --out is writable and has room", s.error().message)};
  }
  return {};
}

std::string results_markdown(const std::vector<RaceRow>& rows, double target_error) {
  std::string out;
  const std::string target = target_error > 0.0 ? fmt::format("time to {:.3g} (s)", target_error)
                                                : std::string("time to target (s)");
  out += fmt::format(
      "| run | rule | K | {} | error at end | s/iter measured | s/iter predicted | "
      "mean staleness | wasted work |\n",
      target);
  out += "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {:.5f} | {} | {:.2f} | {:.1f}% |\n", r.label, to_string(r.rule),
        r.k, r.time_to_target_s ? fmt::format("{:.2f}", *r.time_to_target_s) : std::string("—"),
        r.stop_reason == StopReason::kDiverged ? std::string("diverged")
        : r.final_test_error                   ? fmt::format("{:.4f}", *r.final_test_error)
                                               : std::string("—"),
        r.seconds_per_iteration,
        r.predicted_seconds_per_iteration
            ? fmt::format("{:.5f} ({})", *r.predicted_seconds_per_iteration,
                          r.predicted_method == PredictionMethod::kClosedForm ? "closed" : "MC")
            : std::string("—"),
        r.mean_staleness, 100.0 * r.wasted_fraction);
  }
  return out;
}

}  // namespace stalesgd

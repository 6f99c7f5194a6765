// The race: its runs one at a time or several at a time (--jobs), each into its folder, then
// results.csv (results.cpp).
#include "stalesgd/experiment/race.hpp"

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "engine/train_io.hpp"
#include "experiment/folder_run.hpp"
#include "experiment/kept_run.hpp"
#include "experiment/mpi_launch.hpp"
#include "experiment/provenance.hpp"
#include "experiment/race_progress.hpp"
#include "experiment/run_config.hpp"
#include "output/checkpoint.hpp"
#include "output/folder_lock.hpp"
#include "output/provenance.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "util/logging.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

// What a row says of the run itself, whichever process ran it.
RaceRow row_of(const ExperimentRun& r) {
  RaceRow row;
  row.label = r.label;
  row.slug = r.slug;
  row.rule = r.run.rule().rule;
  row.k = r.run.rule().k;
  row.seed = r.options().seed;
  row.clock = to_string(r.options().clock);
  row.config = run_config(r.options());
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

// One run of this process into `dir`, through a journal; continued from `kept`'s checkpoint
// when it has one. The run's folder is the race's while it runs (docs/reliability.md): locked
// before a file in it changes, inside `out_dir`, which this process holds.
Result<RaceRow> run_in_process(const ExperimentRun& r, const Dataset& ds, const fs::path& dir,
                               const fs::path& out_dir, const std::atomic<bool>* interrupt,
                               const RaceSettings& settings, const KeptRun& kept,
                               RaceProgress& progress, std::size_t index) {
  Provenance provenance = Provenance::begin(settings.command_line);
  auto lock = FolderLock::acquire(dir, OuterFolder{out_dir, ::getpid()});
  if (!lock) return lock.error();
  TrainerOptions o = r.options();
  // A resumed run goes on checkpointing as it did unless --checkpoint-every says otherwise.
  o.checkpoint_every_s = kept.payload && settings.checkpoint_every_s == 0.0
                             ? kept.checkpoint_every_s
                             : settings.checkpoint_every_s;
  auto resolved = ResolvedRun::resolve(o);
  if (!resolved) return resolved.error();
  const std::optional<std::string>& payload = kept.payload;
  auto folder = open_run_folder(
      dir, payload ? RunJournal::Existing::kContinue : RunJournal::Existing::kOverwrite,
      kept.offsets,
      fmt::format("{} run '{}' of: {}", payload ? "resume:" : "start:", r.label,
                  shell_quoted(settings.command_line)));
  if (!folder) return folder.error();
  const auto reporter = progress.start(index, folder->log.get());
  auto run = train_into_folder(*resolved, ds, *folder,
                               {.interrupt = interrupt,
                                .progress = reporter.get(),
                                .resume = payload ? &*payload : nullptr,
                                .provenance = std::move(provenance)});
  if (!run) {
    folder->log->record(spdlog::level::err, run.error().message);
    return run.error();
  }
  if (run->record.stop_reason == StopReason::kFailed) return Error{run->record.stop_message};
  return make_row(r, run->record, run->theory);
}

// Run `r` into its folder: its row kept from an earlier race (--resume), from an mpirun job, or
// trained here.
Result<RaceRow> race_one(const ExperimentRun& r, const RaceData& data, const fs::path& out_dir,
                         const std::atomic<bool>* interrupt, const RaceSettings& settings,
                         const KeptRun& kept, RaceProgress& progress, std::size_t index) {
  const fs::path dir = out_dir / r.slug;
  const std::optional<nlohmann::json>& done = kept.summary;
  const auto started = std::chrono::steady_clock::now();
  const auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  if (done || r.options().engine == EngineKind::kMpi) {
    std::optional<nlohmann::json> summary = done;
    if (!summary) {
      auto ran = run_under_mpirun(r, dir, interrupt);
      if (!ran) return Error{fmt::format("run '{}': {}", r.label, ran.error().message)};
      summary = std::move(ran).value();
    }
    progress.finished(index, done ? 0.0 : wall());  // a kept run says nothing of the time
    try {
      return row_from_summary(r, *summary);
    } catch (const std::exception& e) {
      return Error{fmt::format("run '{}': {}: unexpected summary.json ({})", r.label,
                               (dir / "summary.json").string(), e.what())};
    }
  }
  const auto& ds = data.at({r.options().dataset, r.options().data_dir.string()});
  auto row = run_in_process(r, ds, dir, out_dir, interrupt, settings, kept, progress, index);
  progress.finished(index, wall());
  if (!row) return Error{fmt::format("run '{}': {}", r.label, row.error().message)};
  return row;
}

}  // namespace

std::vector<std::size_t> start_order(const Experiment& ex, int jobs) {
  std::vector<std::size_t> order(ex.runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (jobs > 1) {
    std::stable_partition(order.begin(), order.end(),
                          [&](std::size_t i) { return may_run_alongside(ex.runs[i]); });
  }
  return order;
}

bool may_run_alongside(const ExperimentRun& run) {
  return run.options().clock == ClockKind::kVirtual && run.options().engine == EngineKind::kThread;
}

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
  // --resume: what is kept, checked before anything is written, so that a refusal leaves the
  // race's files as they were.
  std::vector<KeptRun> kept(ex.runs.size());
  for (std::size_t i = 0; settings.resume && i < ex.runs.size(); ++i) {
    auto k = keep(ex.runs[i], out_dir / ex.runs[i].slug, settings, data);
    if (!k) return k.error();
    kept[i] = std::move(k).value();
  }
  if (auto s = write_race_provenance(ex, out_dir); !s) return s.error();

  const std::size_t n = ex.runs.size();
  RaceProgress progress(ex, settings.progress, settings.progress_every_s, settings.jobs);
  std::mutex mu;  // guards rows, errors, stop, and the calls of on_run_done
  std::vector<std::optional<RaceRow>> rows(n);  // GUARDED_BY(mu)
  std::vector<std::optional<Error>> errors(n);  // GUARDED_BY(mu)
  bool stop = false;       // GUARDED_BY(mu): a run failed or was interrupted; start no more
  bool cut_short = false;  // GUARDED_BY(mu): the interrupt came before a run started

  // With jobs > 1 the runs that may share the machine go first, `jobs` at a time; the rest
  // follow one at a time. A run's outputs do not depend on which thread runs it.
  const std::vector<std::size_t> order = start_order(ex, settings.jobs);
  std::vector<std::size_t> parallel, alone;
  for (std::size_t i : order) {
    (settings.jobs > 1 && may_run_alongside(ex.runs[i]) ? parallel : alone).push_back(i);
  }
  const auto run_one = [&](std::size_t i) {
    {
      std::lock_guard lock(mu);
      if (stop) return;
      // After a Ctrl-C no run starts (a run in progress stops on the same flag).
      if (interrupt != nullptr && interrupt->load(std::memory_order_relaxed)) {
        stop = cut_short = true;
        return;
      }
    }
    auto row = race_one(ex.runs[i], data, out_dir, interrupt, settings, kept[i], progress, i);
    std::lock_guard lock(mu);
    if (!row) {
      errors[i] = row.error();
      stop = true;
      return;
    }
    rows[i] = std::move(row).value();
    if (on_run_done) on_run_done(i, *rows[i]);
    if (rows[i]->stop_reason == StopReason::kInterrupted) stop = true;
  };
  if (!parallel.empty()) {
    // Plain threads rather than a tbb::task_arena: TBB's runtime is not instrumented, so
    // ThreadSanitizer would report its hand-off of each task as a race (as evaluator.cpp
    // found), and each run is one thread for seconds, which leaves a scheduler nothing to do.
    std::atomic<std::size_t> next{0};  // relaxed: only hands out indices, in run order
    std::exception_ptr thrown;  // GUARDED_BY(mu): a bug in a helper, rethrown here as run_one
                                // would have thrown it with jobs = 1
    const auto work = [&] {
      try {
        for (std::size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < parallel.size();)
          run_one(parallel[j]);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!thrown) thrown = std::current_exception();
        stop = true;
      }
    };
    const auto helpers =
        std::min<std::size_t>(static_cast<std::size_t>(settings.jobs), parallel.size()) - 1;
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < helpers; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (thrown) std::rethrow_exception(thrown);
  }
  for (std::size_t i : alone) run_one(i);

  RaceOutcome outcome;
  std::lock_guard lock(mu);
  outcome.interrupted = cut_short;
  for (std::size_t i = 0; i < n; ++i) {
    if (errors[i]) return *errors[i];  // the first run's error, as one at a time would give
  }
  for (auto& row : rows) {
    if (!row) continue;
    outcome.interrupted = outcome.interrupted || row->stop_reason == StopReason::kInterrupted;
    outcome.rows.push_back(std::move(*row));
  }
  if (auto s = write_results_csv(out_dir / "results.csv", outcome.rows); !s) return s.error();
  return outcome;
}

}  // namespace stalesgd

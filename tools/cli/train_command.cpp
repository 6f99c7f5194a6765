// `stalesgd train`.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "cli/startup_guard.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "experiment/folder_run.hpp"
#include "experiment/progress_reporter.hpp"
#include "output/folder_lock.hpp"
#include "output/model_file.hpp"
#include "output/recorded_options.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/data/partition.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/logging.hpp"
#include "util/memory.hpp"

namespace stalesgd::cli {
namespace {

void print_summary(const ResolvedRun& resolved, const RunRecord& run,
                   const std::optional<RuntimePrediction>& theory) {
  const TrainerOptions& o = resolved.options();
  const auto st = staleness_stats(run);
  const auto g = gradient_totals(run);
  const std::uint64_t iterations = run.updates.empty() ? 0 : run.updates.back().iteration;
  const int k = resolved.rule().k;
  fmt::print("{:<18}{} on {}, {}\n", "model", run.model, o.dataset,
             o.sequential ? "sequential SGD" : "parameter server");
  if (!o.sequential) {
    fmt::print("{:<18}{}  P={}  K={}  delay {} ({}), {} clock{}\n", "rule", o.rule.name, o.workers,
               k, o.delay, to_string(o.delay_mode), to_string(o.clock),
               o.clock == ClockKind::kReal && o.server != ServerPlacement::kInline
                   ? fmt::format(", server {}", to_string(o.server))
                   : std::string());
  }
  fmt::print("{:<18}{} ({})\n", "iterations", iterations, to_string(run.stop_reason));
  fmt::print("{:<18}{:.3f}\n", o.clock == ClockKind::kVirtual ? "virtual seconds" : "wall seconds",
             run.wall_s);
  if (o.clock == ClockKind::kReal) {
    // Rows scored after training, the final one among them (docs/outputs.md).
    const auto after = std::count_if(run.evals.begin(), run.evals.end(),
                                     [&](const EvalRecord& e) { return e.scored_s > run.wall_s; });
    fmt::print("{:<18}{:.3f} s ({} of {} snapshots scored after training)\n", "scoring tail",
               run.scoring_tail_s, after, run.evals.size());
  }
  std::string predicted;
  if (theory) {
    const double t = theory->seconds_per_iteration;
    predicted = fmt::format("   theory {:.6f} ({})  measured/theory {:.3f}", t,
                            to_string(theory->method), seconds_per_iteration(run) / t);
  }
  fmt::print("{:<18}{:.6f}{}\n", "s / iteration", seconds_per_iteration(run), predicted);
  fmt::print("{:<18}mean {:.3f}  p95 {:.0f}  max {}\n", "staleness", st.mean, st.p95, st.max);
  fmt::print("{:<18}started {}  computed {}  pushed {}  applied {}  cancelled {}\n", "gradients",
             g.started, g.computed, g.pushed, g.applied, g.cancelled);
  std::string failed;
  for (const auto& w : run.workers) {
    if (!w.failed) continue;
    failed += fmt::format("{}w{} {} at {:.3f} s", failed.empty() ? "" : ", ", w.worker, w.failure,
                          w.failed_at_s);
  }
  if (!failed.empty()) fmt::print("{:<18}{}\n", "failed workers", failed);
  if (!run.evals.empty()) {
    const auto& e = run.evals.back();
    fmt::print("{:<18}{:.4f}  (test loss {:.4f}, train loss {:.4f})\n", "final test error",
               e.test_error, e.test_loss, e.train_loss);
  }
  if (o.target_error > 0.0) {
    fmt::print("{:<18}{}\n", "time to target",
               run.time_to_target_s ? fmt::format("{:.3f} s", *run.time_to_target_s)
                                    : std::string("not reached"));
  }
}

}  // namespace

int run_train(const TrainerOptions& given, const std::optional<ResumePoint>& resume,
              const std::vector<std::string>& command_line) {
  Provenance provenance = Provenance::begin(command_line);
  TrainerOptions fitted = given;
  if (auto s = mpi::fit_workers(fitted); !s) return fail(s.error().message, 2);  // --engine mpi: P
  auto resolved = ResolvedRun::resolve(fitted);
  if (!resolved) return fail(resolved.error().message, 2);
  const TrainerOptions& options = resolved->options();
  // From here on Ctrl-C stops the run cleanly.
  const ScopedInterrupt interrupt(mpi::active() ? ScopedInterrupt::SecondSignal::kIgnored
                                                : ScopedInterrupt::SecondSignal::kExits);
  // Until training starts (the data read, the model loaded and checked) a signal ends the
  // process at once; an MPI job's ranks start together, and mpirun ends them.
  std::optional<StartupGuard> startup;
  if (!mpi::active()) startup.emplace(interrupt);
  // --out is opened (and refused if it holds a run) before any data is read or trained on; rank
  // 0 alone writes under MPI.
  Status ready;
  if (options.checkpoint_every_s > 0.0) {
    if (options.out_dir.empty()) return fail("--checkpoint-every needs --out DIR to write into", 2);
  }
  // A bad --save-model is found before anything is trained. Under MPI rank 0 alone writes it,
  // and every rank stops with it at the agreement below (a rank that left alone would leave the
  // others waiting for it).
  if (!options.save_model.empty() && mpi::reports()) {
    if (auto s = check_model_path(options.save_model); !s) {
      if (!mpi::active()) return fail(s.error().message);
      ready = s.error();
    }
  }
  // One process per folder (docs/reliability.md): --resume took the lock before it read the
  // checkpoint; a new run takes it here, before --force may remove anything.
  FolderLock lock;
  // A resumed run reads its data first: the checkpoint must be this run's, on this data, before
  // its folder is touched (a refusal changes no file).
  std::optional<Result<Dataset>> data;
  if (resume) {
    data.emplace(load_dataset(options.dataset, options.data_dir));
    if (!*data) {
      ready = data->error();
    } else if (auto same = check_identity(resume->header, options, **data); !same) {
      ready = same.error();
    } else if (auto kept = check_recorded_options(options.out_dir, options); !kept) {
      ready = kept.error();
    }
  }
  if (!options.out_dir.empty() && mpi::reports() && !resume) {
    // A race's mpirun job (mpi_launch.cpp) runs inside the race's folder, which the race holds.
    if (auto locked = FolderLock::acquire(options.out_dir, FolderLock::outer_from_environment())) {
      lock = std::move(locked).value();
    } else {
      ready = locked.error();
    }
  }
  // The journal and run.log (docs/outputs.md); rank 0 alone writes under MPI.
  OpenRunFolder folder;
  if (ready && !options.out_dir.empty() && mpi::reports()) {
    const auto existing = resume          ? RunJournal::Existing::kContinue
                          : options.force ? RunJournal::Existing::kOverwrite
                                          : RunJournal::Existing::kRefuse;
    auto opened = open_run_folder(
        options.out_dir, existing, resume ? resume->header.offsets : JournalOffsets{},
        fmt::format("{} {}", resume ? "resume:" : "start:", shell_quoted(command_line)));
    if (opened) {
      folder = std::move(opened).value();
    } else {
      ready = opened.error();
    }
  }
  logging::RunLog* log = folder.log.get();
  if (startup) startup->set_log(log);
  // Errors from here on also go to run.log; stderr gets them as the one line.
  const auto failed = [&](const std::string& message, int status) {
    if (log) log->record(spdlog::level::err, message);
    return fail(message, status);
  };
  if (!data) {
    try {
      data.emplace(load_dataset(options.dataset, options.data_dir));
    } catch (const std::bad_alloc&) {
      return failed(out_of_memory_message("reading the data"), 1);
    }
  }
  if (ready && !*data) ready = data->error();
  // --partition that leaves a worker no sample is bad input, like a bad flag.
  if (ready) {
    auto shards =
        partition_split((*data)->train, *parse_partition(options.partition), options.workers,
                        derive_seed(options.seed, SeedStream::kPartition));
    if (!shards) return failed(shards.error().message, 2);
  }
  // --engine mpi: every rank is ready, or all stop and rank 0 names the one that is not.
  if (auto s = mpi::agree(ready); !s) return failed(s.error().message, 1);
  spdlog::logger& logger = log != nullptr ? *log->logger() : *spdlog::default_logger();
  const Dataset& dataset = data->value();
  logger.debug("data: {} ({} training, {} test samples){}", dataset.name, dataset.train.count,
               dataset.test.count,
               is_npz_name(dataset.name) ? "" : " from " + options.data_dir.string());
  // Progress on stderr from rank 0 only, and not with -q or --no-progress.
  ProgressReporter progress(
      options.progress && mpi::reports() && logging::stderr_level() <= spdlog::level::info,
      options.progress_every_s, log);
  // The model is built here, under the start-up guard: a TorchScript module's load and check
  // take seconds and poll nothing.
  std::unique_ptr<Model> model;
  if (startup) {
    Result<std::unique_ptr<Model>> built = Error{""};
    try {
      built = make_model(options.model, dataset.train.shape, dataset.num_classes);
    } catch (const std::bad_alloc&) {
      return failed(out_of_memory_message("building the model"), 1);
    }
    if (!built) return failed(built.error().message, 1);
    model = std::move(built).value();
    startup->disarm();
  }
  auto ran = train_into_folder(*resolved, dataset, folder,
                               {.interrupt = interrupt.flag(),
                                .progress = &progress,
                                .resume = resume ? &resume->payload : nullptr,
                                .provenance = std::move(provenance),
                                .model = model ? &model : nullptr});
  if (!ran) return failed(ran.error().message, 1);
  if (!mpi::reports()) return 0;  // a worker rank: rank 0 reports and writes the outputs
  const RunRecord* run = &ran->record;
  // --save-model: the final parameters, the ones the last evaluation scored.
  if (!options.save_model.empty() && !run->final_params.empty()) {
    if (auto s = write_model_file(options.save_model, run->final_params); !s) {
      return failed(fmt::format("--save-model: {}", s.error().message), 1);
    }
  }
  // A run cut short by a divergence or a failure has written what it recorded, marked
  // incomplete, and ends with its one line.
  if (run->stop_reason != StopReason::kDiverged && run->stop_reason != StopReason::kFailed) {
    print_summary(*resolved, *run, ran->theory);
    if (folder.journal) {
      fmt::print(
          "{:<18}{}/ (updates.csv gradients.csv evals.csv workers.csv summary.json run.log)\n",
          "outputs", options.out_dir.string());
    }
  }
  // Written first, then the one line, last also when stdout is a pipe: failed workers, a stall,
  // a divergence, a failed write, a failing model or memory or threads running out exit 1, an
  // exception in one of the run's threads 3 (an internal error, as main's).
  std::fflush(stdout);
  switch (run->stop_reason) {
    case StopReason::kDiverged:
      return failed(run->divergence, 1);
    case StopReason::kWorkersFailed:
    case StopReason::kStalled:
      return failed(run->stop_message, 1);
    case StopReason::kFailed:
      return failed(run->stop_message,
                    run->output_failed || run->model_failed || run->resources_failed ? 1 : 3);
    case StopReason::kInterrupted:
      // --engine mpi: ended by mpirun while a rank did not answer (stop_message names it).
      if (!run->stop_message.empty()) return failed(run->stop_message, interrupt.exit_code());
      // Under tools/mpirun.sh, which exits 128 + the signal itself: mpirun takes two
      // odls_base_sigkill_timeouts to end after any rank's non-zero exit (docs/distributed.md).
      if (mpi::active() && std::getenv("STALESGD_MPIRUN_REPORTS_STOP") != nullptr) return 0;
      return interrupt.exit_code();
    default:
      return 0;
  }
}

}  // namespace stalesgd::cli

// The end of a run's outputs (docs/outputs.md): the rows the journal has not written yet, then
// workers.csv and, last, summary.json, each through a temporary file, fsync and rename. The
// summary.json written at the start says "running"; the last one says how the run ended.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "output/provenance.hpp"
#include "output/run_journal.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// summary.json at the run's start: "status": "running", the config and the provenance so far
// (no end time); finish_run_outputs replaces it when the run ends (docs/outputs.md).
Status write_running_summary(const std::filesystem::path& dir, const ResolvedRun& config,
                             const Provenance& provenance);

// Closes `journal` and writes workers.csv and summary.json into its folder. `theory`: the
// runtime theory's prediction (summary.json's "theory"; null when none). `error`: why the run
// was cut short (an I/O failure, a failed worker), or empty; summary.json then says
// "status": "incomplete" with the error. `provenance`, when it has a command line, adds the
// command line, start and end times, host and stalesgd's version to summary.json. An Error: a write
// failed (the path and the OS error); the outputs are still written as far as they can be.
Status finish_run_outputs(RunJournal& journal, const ResolvedRun& config, const RunRecord& run,
                          const std::optional<RuntimePrediction>& theory,
                          const std::string& error = {}, const Provenance& provenance = {});

// All of a finished run's outputs into `dir` at once (a run that had no journal: tests,
// benchmarks); replaces a run already there.
Status write_run_outputs(const std::filesystem::path& dir, const ResolvedRun& config,
                         const RunRecord& run, const std::optional<RuntimePrediction>& theory);

}  // namespace stalesgd

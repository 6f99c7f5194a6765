// RunWatch: one run as `stalesgd serve` follows it. Each refresh reads what its journals gained
// (CsvJournal) and re-reads summary.json and workers.csv when they change; overview() is its
// entry of /api/runs (status, progress, ETA, the latest figures, the theory's prediction) and
// series() the rows a page has not seen yet (docs/serve.md, "Endpoints"): run_watch_overview.cpp
// and run_watch_series.cpp.
//
// Thread safety: not thread-safe; ServeState serialises every call under its mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/csv_journal.hpp"
#include "serve/run_catalog.hpp"
#include "serve/run_stats.hpp"

namespace stalesgd::serve {

// Where a page's copy of a run ends: the updates and snapshots it holds, and the journals'
// generation they came from (a replaced file starts the run's series again).
struct SeriesCursor {
  std::uint64_t updates = 0, evals = 0, generation = 0;
  // "U,E,G" as series() writes it; anything else reads as the start.
  static SeriesCursor parse(const std::string& text);
  std::string text() const;
};

class RunWatch {
 public:
  explicit RunWatch(RunEntry entry);

  // The catalog found the run again (a pending run may have started since).
  void set_entry(RunEntry entry);
  const RunEntry& entry() const { return entry_; }

  // Reads what the run's files gained; `now_s` (a steady clock, seconds) dates the progress
  // seen, for the ETA.
  void refresh(double now_s);

  nlohmann::json overview() const;
  // Rows after `since`, at most `limit` per journal; "more" says whether rows are left.
  nlohmann::json series(const SeriesCursor& since, std::uint64_t limit) const;

 private:
  struct Budget {
    double time_s = 0.0, iterations = 0.0, target_error = 0.0;  // 0: none
  };
  std::uint64_t generation() const;
  void restart_stats();
  // The run's option `key` (runs.csv's spelling) from summary.json's config, else the settings
  // runs.csv or run.log gave.
  std::optional<std::string> setting(const std::string& key) const;
  Budget budget() const;
  std::string status() const;
  std::optional<double> progress() const;
  // Whether the run made its first update (a run refused or killed before it has not).
  bool started() const;
  // The lines saying which of the run's files are there but not read (a FIFO, say).
  std::vector<std::string> unreadable() const;

  RunEntry entry_;
  CsvJournal updates_, evals_, gradients_;
  RunStats stats_;
  UpdateColumns update_columns_;
  EvalColumns eval_columns_;
  int staleness_column_ = -1;  // in gradients.csv
  std::uint64_t stats_generation_ = 0;
  FileStamp summary_stamp_, workers_stamp_;
  std::optional<nlohmann::json> summary_;
  std::optional<WorkerTotals> workers_;
  std::string summary_refused_, workers_refused_;  // why they were not read, if they were not
  // The options of the summary.json written at the start ("running"), for a train --out
  // folder: summary_ holds only the final one.
  std::optional<nlohmann::json> started_config_;
  // The theory for the run's options, while it has no summary.json (run_options.hpp).
  std::optional<nlohmann::json> early_prediction_;
  bool early_prediction_tried_ = false;
  int lock_alive_ = -1;
  int race_alive_ = -1;  // a pending run's race: lock_holder_alive of its folder
  // The first progress seen while running and the latest, for the ETA.
  std::optional<std::pair<double, double>> first_progress_, last_progress_;
};

}  // namespace stalesgd::serve

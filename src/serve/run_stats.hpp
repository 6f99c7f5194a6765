// RunStats: what `stalesgd serve` derives from a run's journal rows as they arrive (each row is
// seen once): the last update and snapshot, the mean staleness so far, the staleness histogram
// of the applied gradients, the first snapshot at the target error. And RunFacts: what a run's
// files say about it besides the journals: summary.json, workers.csv and who holds its lock.
//
// Thread safety: values; the caller (RunWatch) serialises access.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stalesgd::serve {

// Column positions in a journal's header; -1 for a column the file lacks.
struct UpdateColumns {
  int iteration = -1, wall_s = -1, n_grads = -1, mean_staleness = -1, max_staleness = -1;
};
struct EvalColumns {
  int wall_s = -1, iteration = -1, test_error = -1, test_loss = -1;
};

struct RunStats {
  // updates.csv
  double last_iteration = 0.0, last_update_s = 0.0;
  double staleness_sum = 0.0, staleness_weight = 0.0;  // sum of mean_staleness * n_grads, n
  double max_staleness = 0.0;
  // evals.csv
  std::uint64_t evals = 0;
  double eval_s = 0.0, eval_iteration = 0.0;
  double test_error = -1.0, test_loss = -1.0, best_test_error = -1.0;  // -1: no snapshot yet
  std::optional<double> reached_target_s;  // first snapshot at or under the target error
  // gradients.csv
  std::uint64_t gradients = 0;
  std::vector<std::uint64_t> staleness_histogram;  // [s] = gradients of staleness s

  void on_update(const UpdateColumns& c, std::span<const double> row);
  void on_eval(const EvalColumns& c, std::span<const double> row, double target_error);
  void on_gradient(int staleness_column, std::span<const double> row);
  // The staleness that `share` of the gradients do not exceed; nullopt before any gradient.
  std::optional<double> staleness_quantile(double share) const;
};

// A file's identity and size, to re-read it only when it changed.
struct FileStamp {
  std::uint64_t inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool exists = false;
  static FileStamp of(const std::filesystem::path& path);
  bool operator==(const FileStamp&) const = default;
};

// Totals of workers.csv (written when a run ends).
struct WorkerTotals {
  double started = 0, cancelled = 0, busy_s = 0, idle_s = 0, failed = 0;
  int workers = 0;
};
// `refused`, when given, is set to the line saying why a file that is there was not read (not a
// regular file, too large: regular_file.hpp), and cleared otherwise.
std::optional<WorkerTotals> read_worker_totals(const std::filesystem::path& path,
                                               std::string* refused = nullptr);

// summary.json parsed; nullopt when missing, not a regular file or not (yet) whole JSON.
std::optional<nlohmann::json> read_summary(const std::filesystem::path& path,
                                           std::string* refused = nullptr);

// The process that holds the run folder's lock (output/folder_lock.hpp): 1 alive, 0 gone, -1
// unknown (no lock file). Read-only: the pid the file holds is checked with kill(pid, 0).
int lock_holder_alive(const std::filesystem::path& dir);

// A number for the page's JSON: null when not finite (JSON has no NaN).
nlohmann::json json_number(double v);
// The value at `keys` below `j` (objects only); nullptr when a key is missing.
const nlohmann::json* json_at(const nlohmann::json& j, std::initializer_list<const char*> keys);

}  // namespace stalesgd::serve

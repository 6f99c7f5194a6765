// Aggregates over a run's journal rows, and reading its other files (summary.json, workers.csv,
// the folder lock) without writing anything.
#include "serve/run_stats.hpp"

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>

#include "serve/csv_journal.hpp"
#include "serve/run_catalog.hpp"
#include "serve/small_file.hpp"

namespace stalesgd::serve {
namespace fs = std::filesystem;

namespace {

// Staleness beyond this is counted in the last bucket: it bounds the histogram a run with a
// pathological straggler could grow.
constexpr std::size_t kMaxStalenessBucket = 4096;

double at(std::span<const double> row, int column) {
  return column >= 0 && static_cast<std::size_t>(column) < row.size()
             ? row[static_cast<std::size_t>(column)]
             : std::nan("");
}

}  // namespace

void RunStats::on_update(const UpdateColumns& c, std::span<const double> row) {
  const double iteration = at(row, c.iteration), wall = at(row, c.wall_s);
  if (std::isfinite(iteration)) last_iteration = std::max(last_iteration, iteration);
  if (std::isfinite(wall)) last_update_s = std::max(last_update_s, wall);
  const double n = at(row, c.n_grads), mean = at(row, c.mean_staleness);
  if (std::isfinite(n) && std::isfinite(mean)) {
    staleness_sum += mean * n;
    staleness_weight += n;
  }
  if (const double mx = at(row, c.max_staleness); std::isfinite(mx)) {
    max_staleness = std::max(max_staleness, mx);
  }
}

void RunStats::on_eval(const EvalColumns& c, std::span<const double> row, double target_error) {
  ++evals;
  eval_s = at(row, c.wall_s);
  eval_iteration = at(row, c.iteration);
  test_error = at(row, c.test_error);
  test_loss = at(row, c.test_loss);
  if (std::isfinite(test_error) && (best_test_error < 0.0 || test_error < best_test_error)) {
    best_test_error = test_error;
  }
  if (!reached_target_s && target_error > 0.0 && std::isfinite(test_error) &&
      test_error <= target_error) {
    reached_target_s = eval_s;
  }
}

void RunStats::on_gradient(int staleness_column, std::span<const double> row) {
  ++gradients;
  const double s = at(row, staleness_column);
  if (!std::isfinite(s) || s < 0.0) return;
  const auto bucket = std::min(static_cast<std::size_t>(s), kMaxStalenessBucket);
  if (staleness_histogram.size() <= bucket) staleness_histogram.resize(bucket + 1, 0);
  ++staleness_histogram[bucket];
}

std::optional<double> RunStats::staleness_quantile(double share) const {
  std::uint64_t total = 0;
  for (auto n : staleness_histogram) total += n;
  if (total == 0) return std::nullopt;
  const auto need = static_cast<std::uint64_t>(std::ceil(share * static_cast<double>(total)));
  std::uint64_t seen = 0;
  for (std::size_t s = 0; s < staleness_histogram.size(); ++s) {
    seen += staleness_histogram[s];
    if (seen >= need) return static_cast<double>(s);
  }
  return static_cast<double>(staleness_histogram.size() - 1);
}

FileStamp FileStamp::of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, true};
}

std::optional<WorkerTotals> read_worker_totals(const fs::path& path, std::string* refused) {
  const auto file = read_regular_file(path, kMaxSmallFileBytes);
  if (refused) *refused = file.why;
  const auto rows = parse_csv_table(file.bytes);
  if (rows.empty()) return std::nullopt;
  WorkerTotals t;
  const auto sum = [](const std::map<std::string, std::string>& row, const char* key) {
    const auto it = row.find(key);
    const double v = it == row.end() ? std::nan("") : csv_number(it->second);
    return std::isfinite(v) ? v : 0.0;
  };
  for (const auto& row : rows) {
    t.started += sum(row, "started");
    t.cancelled += sum(row, "cancelled");
    t.busy_s += sum(row, "busy_s");
    t.idle_s += sum(row, "idle_s");
    t.failed += sum(row, "failed");
    ++t.workers;
  }
  return t;
}

std::optional<nlohmann::json> read_summary(const fs::path& path, std::string* refused) {
  const auto file = read_regular_file(path, kMaxSmallFileBytes);
  if (refused) *refused = file.why;
  if (file.state != FileState::kOpen) return std::nullopt;
  // summary.json is renamed into place whole, but a hand-written or damaged one must not throw.
  auto j = nlohmann::json::parse(file.bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

int lock_holder_alive(const fs::path& dir) {
  // A pid is a few digits; the lock file holds nothing else.
  const auto file = read_regular_file(dir / ".stalesgd.lock", 64, /*whole=*/false);
  if (file.state != FileState::kOpen) return -1;
  long pid = 0;
  const char* begin = file.bytes.data();
  const auto [end, ec] = std::from_chars(begin, begin + file.bytes.size(), pid);
  if (ec != std::errc() || end == begin || pid <= 0) return -1;
  if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) return 1;
  return 0;
}

nlohmann::json json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

const nlohmann::json* json_at(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object() || !at->contains(k)) return nullptr;
    at = &(*at)[k];
  }
  return at;
}

}  // namespace stalesgd::serve

// results.csv and the markdown table of a race: one row per run.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "experiment/run_config.hpp"
#include "stalesgd/experiment/race.hpp"
#include "util/atomic_file.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

std::string opt(const std::optional<double>& v, const char* format = "{:.6g}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string();
}

// Config keys results.csv always has: its first columns, then these.
constexpr const char* kOwnColumns[] = {"rule", "k", "seed", "clock"};
constexpr const char* kConfigColumns[] = {"model", "workers", "delay", "lr", "batch", "engine"};

const std::string* config_value(const RaceRow& row, const std::string& key) {
  for (const auto& [k, v] : row.config) {
    if (k == key) return &v;
  }
  return nullptr;
}

// kConfigColumns, then every other key whose value differs between two rows (or that some
// rows lack), in the option table's order.
std::vector<std::string> config_columns(const std::vector<RaceRow>& rows) {
  std::vector<std::string> columns(std::begin(kConfigColumns), std::end(kConfigColumns));
  const auto taken = [&](const std::string& key) {
    return std::find(columns.begin(), columns.end(), key) != columns.end() ||
           std::find(std::begin(kOwnColumns), std::end(kOwnColumns), key) != std::end(kOwnColumns);
  };
  for (const auto& row : rows) {
    for (const auto& entry : row.config) {
      // Named, not a structured binding: clang 14 cannot capture a binding in a lambda.
      const std::string& key = entry.first;
      const std::string& value = entry.second;
      if (taken(key)) continue;
      const bool differs = std::any_of(rows.begin(), rows.end(), [&](const RaceRow& other) {
        const std::string* v = config_value(other, key);
        return v == nullptr || *v != value;
      });
      if (differs) columns.push_back(key);
    }
  }
  return columns;
}

}  // namespace

Status write_results_csv(const fs::path& path, const std::vector<RaceRow>& rows) {
  std::string csv =
      "label,slug,rule,k,seed,clock,iterations,wall_s,time_to_target_s,final_test_error,"
      "seconds_per_iteration,predicted_seconds_per_iteration,predicted_method,"
      "mean_staleness,p95_staleness,gradients_started,gradients_applied,"
      "gradients_cancelled,wasted_fraction,stop_reason";
  const auto columns = config_columns(rows);
  for (const auto& c : columns) csv += "," + c;
  csv += "\n";
  for (const auto& r : rows) {
    // Labels may hold commas: quote them (RFC 4180).
    std::string label = r.label;
    for (std::size_t p = 0; (p = label.find('"', p)) != std::string::npos; p += 2)
      label.insert(p, "\"");
    fmt::format_to(
        std::back_inserter(csv),
        "\"{}\",{},{},{},{},{},{},{:.6f},{},{},{:.6g},{},{},{:.4f},{:.0f},{},{},{},{:.4f},{}",
        label, r.slug, r.rule, r.k, r.seed, r.clock, r.iterations, r.wall_s,
        opt(r.time_to_target_s), opt(r.final_test_error), r.seconds_per_iteration,
        opt(r.predicted_seconds_per_iteration),
        r.predicted_seconds_per_iteration ? to_string(r.predicted_method) : "", r.mean_staleness,
        r.p95_staleness, r.gradients_started, r.gradients_applied, r.gradients_cancelled,
        r.wasted_fraction, to_string(r.stop_reason));
    for (const auto& c : columns) {
      const std::string* v = config_value(r, c);
      csv += "," + (v == nullptr ? std::string() : csv_field(*v));
    }
    csv += "\n";
  }
  // Whole or not at all: a crash or a full disk never leaves a cut results.csv.
  if (auto s = write_file_atomically(path, csv); !s) {
    return Error{fmt::format("{}; check that --out is writable and has room", s.error().message)};
  }
  return {};
}

std::string results_markdown(const std::vector<RaceRow>& rows, double target_error) {
  // A run that did not reach its budget or target (interrupted, diverged, failed...) gets a
  // "stop" column for all, so that it is not read as finished; a race whose runs all finished
  // keeps the narrower table.
  const bool stop_column = std::any_of(rows.begin(), rows.end(), [](const RaceRow& r) {
    return r.stop_reason != StopReason::kTime && r.stop_reason != StopReason::kIterations &&
           r.stop_reason != StopReason::kTargetError;
  });
  std::string out;
  const std::string target = target_error > 0.0 ? fmt::format("time to {:.3g} (s)", target_error)
                                                : std::string("time to target (s)");
  out += fmt::format(
      "| run | rule | K | {} | error at end | s/iter measured | s/iter predicted | "
      "mean staleness | wasted work |{}\n",
      target, stop_column ? " stop |" : "");
  out += fmt::format("|---|---|---:|---:|---:|---:|---:|---:|---:|{}\n", stop_column ? "---|" : "");
  for (const auto& r : rows) {
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {:.5f} | {} | {:.2f} | {:.1f}% |{}\n", r.label, r.rule, r.k,
        r.time_to_target_s ? fmt::format("{:.2f}", *r.time_to_target_s) : std::string("—"),
        r.stop_reason == StopReason::kDiverged ? std::string("diverged")
        : r.final_test_error                   ? fmt::format("{:.4f}", *r.final_test_error)
                                               : std::string("—"),
        r.seconds_per_iteration,
        r.predicted_seconds_per_iteration
            ? fmt::format("{:.5f} ({})", *r.predicted_seconds_per_iteration,
                          r.predicted_method == PredictionMethod::kClosedForm ? "closed" : "MC")
            : std::string("—"),
        r.mean_staleness, 100.0 * r.wasted_fraction,
        stop_column ? fmt::format(" {} |", to_string(r.stop_reason)) : std::string());
  }
  return out;
}

}  // namespace stalesgd

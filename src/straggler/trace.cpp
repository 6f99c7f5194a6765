// trace:<file.csv>: recorded delays. StragglerProfile replays column (w mod columns) to worker w
// row by row, cyclically; as a Distribution it is the empirical distribution of all values:
// cdf(x) = #{v <= x} / n, quantile(p) = the ceil(p n)-th smallest value, mean = the average.
#include "straggler/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "straggler/spec_text.hpp"
#include "util/regular_file.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

namespace fs = std::filesystem;

class Trace final : public Distribution {
 public:
  Trace(std::string written_path, std::shared_ptr<const TraceTable> table)
      : written_path_(std::move(written_path)), table_(std::move(table)) {
    for (const auto& column : table_->columns) {
      sorted_.insert(sorted_.end(), column.begin(), column.end());
    }
    std::sort(sorted_.begin(), sorted_.end());
    mean_s_ =
        std::accumulate(sorted_.begin(), sorted_.end(), 0.0) / static_cast<double>(sorted_.size());
  }

  double sample(Rng& rng) const override { return quantile(uniform01(rng)); }
  double mean() const override { return mean_s_; }
  double cdf(double x) const override {
    const auto n = std::upper_bound(sorted_.begin(), sorted_.end(), x) - sorted_.begin();
    return static_cast<double>(n) / static_cast<double>(sorted_.size());
  }
  double quantile(double p) const override {
    if (std::isnan(p)) return p;
    const double k = std::ceil(clamp_probability(p) * static_cast<double>(sorted_.size()));
    const auto index = static_cast<std::size_t>(std::max(k, 1.0)) - 1;
    return sorted_[std::min(index, sorted_.size() - 1)];
  }
  std::string describe() const override { return "trace:" + written_path_; }

  const TraceTable& table() const { return *table_; }

 private:
  std::string written_path_;  // as in the spec, so describe() parses back with the same base
  std::shared_ptr<const TraceTable> table_;
  std::vector<double> sorted_;  // every value of every column
  double mean_s_ = 0;
};

constexpr spec::Family kInfo{"trace", "trace:<file.csv>, e.g. trace:delays.csv"};

struct Unit {
  std::string_view name;
  double per_second;
};
constexpr Unit kUnits[] = {{"s", 1.0}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}};

// "w0[ms]" -> units per second of the column, or the error text after "line 1: ".
Result<double> header_unit(std::string_view cell) {
  const auto open = cell.rfind('[');
  if (open == std::string_view::npos || cell.back() != ']') {
    return Error{fmt::format("column '{}' has no unit; write it as {}[ms] (units: ns, us, ms, s)",
                             spec::printable(cell), spec::printable(cell))};
  }
  const std::string_view unit = spec::trim(cell.substr(open + 1, cell.size() - open - 2));
  for (const Unit& u : kUnits) {
    if (u.name == unit) return u.per_second;
  }
  return Error{fmt::format("column '{}' has unknown unit '{}'; use ns, us, ms or s, e.g. w0[ms]",
                           spec::printable(cell), spec::printable(unit))};
}

}  // namespace

Result<std::shared_ptr<const TraceTable>> read_trace(const fs::path& path) {
  const std::string shown = spec::printable(path.string());
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Error{
        fmt::format("trace file '{}' does not exist; check the path (a relative path is "
                    "resolved against the base directory)",
                    shown)};
  }
  if (fs::is_directory(path, ec)) {
    return Error{fmt::format("trace file '{}' is a directory; name a CSV file", shown)};
  }
  // Through the descriptor: a FIFO or device is refused, not read until it ends.
  const auto text =
      read_user_file(path, fmt::format("trace file '{}'", shown), "name a CSV file", kTextFileMost);
  if (!text) return text.error();
  std::istringstream in(*text);
  return read_trace(in, path);
}

Result<std::shared_ptr<const TraceTable>> read_trace(std::istream& in, const fs::path& path) {
  const std::string shown = spec::printable(path.string());
  auto table = std::make_shared<TraceTable>();
  table->path = path;
  std::vector<double> per_second;  // of each column
  std::string line;
  int line_no = 0;
  const auto fail = [&](const std::string& what) {
    return Error{fmt::format("trace file '{}' line {}: {}", shown, line_no, what)};
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view text = spec::trim(line);  // also drops a CRLF file's '\r'
    if (text.empty() || text.front() == '#') continue;
    const auto cells = spec::split(text, ',');
    if (table->names.empty()) {  // the header
      for (std::string_view cell : cells) {
        cell = spec::trim(cell);
        if (cell.empty()) {
          return fail(
              fmt::format("header column {} is empty; name every column with its unit, "
                          "e.g. w0[ms],w1[ms]",
                          table->names.size() + 1));
        }
        auto unit = header_unit(cell);
        if (!unit) return fail(unit.error().message);
        table->names.emplace_back(cell);
        per_second.push_back(*unit);
      }
      table->columns.resize(cells.size());
      continue;
    }
    if (cells.size() != table->names.size()) {
      return fail(
          fmt::format("{} values, but the header has {} columns; give every row one "
                      "value per column",
                      cells.size(), table->names.size()));
    }
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string_view cell = spec::trim(cells[c]);
      double v = 0;
      const auto [end, err] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      // The header cell may hold control characters inside it (trim drops only the ends).
      const std::string where = fmt::format("value '{}' in column '{}'", spec::printable(cell),
                                            spec::printable(table->names[c]));
      if (cell.empty() || err != std::errc() || end != cell.data() + cell.size()) {
        return fail(where +
                    " is not a number; write plain numbers in the column's unit, e.g. 12.5");
      }
      if (!std::isfinite(v)) return fail(where + " is not finite; write a finite delay, e.g. 12.5");
      if (v < 0) return fail(where + " is negative; delays must be >= 0");
      const double seconds = v / per_second[c] + 0.0;
      // As parse_duration: a longer delay would wrap the engines' nanosecond clocks.
      if (seconds > kMaxDurationSeconds) {
        return fail(
            fmt::format("{} is longer than {:g}s (about 31 years), the longest the run's "
                        "clocks hold; write a shorter delay",
                        where, kMaxDurationSeconds));
      }
      table->columns[c].push_back(seconds);
    }
  }
  if (in.bad()) return Error{fmt::format("trace file '{}' could not be read to the end", shown)};
  if (table->names.empty()) {
    return Error{
        fmt::format("trace file '{}' is empty; its first line must be a header such as "
                    "w0[ms],w1[ms]",
                    shown)};
  }
  if (table->columns.front().empty()) {
    return Error{
        fmt::format("trace file '{}' has a header but no rows; add at least one row of "
                    "delays",
                    shown)};
  }
  return std::shared_ptr<const TraceTable>(std::move(table));
}

const TraceTable* trace_table(const Distribution& dist) {
  const auto* trace = dynamic_cast<const Trace*>(&dist);
  return trace == nullptr ? nullptr : &trace->table();
}

namespace {

Result<DistPtr> parse_trace(std::string_view params, const ParseContext& ctx) {
  const std::string written(spec::trim(params));
  const fs::path path(written);
  auto table = read_trace(path.is_absolute() ? path : ctx.base_dir / path);
  if (!table) return table.error();
  return DistPtr(std::make_unique<Trace>(written, std::move(*table)));
}

}  // namespace

const FamilyEntry kTraceFamily{kInfo, true, parse_trace};

}  // namespace stalesgd::straggler

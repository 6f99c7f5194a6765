// Trace files: recorded delays replayed per worker (format in docs/stragglers.md, "Trace files").
#pragma once

#include <filesystem>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd::straggler {

// The parsed file: one column per worker group, every column the same length. Immutable.
struct TraceTable {
  std::filesystem::path path;                // as opened (base_dir applied)
  std::vector<std::string> names;            // header cells, e.g. "w0[ms]"
  std::vector<std::vector<double>> columns;  // seconds, >= 0; all the same non-zero length

  std::size_t rows() const { return columns.front().size(); }
  // Worker w replays column w mod (number of columns).
  const std::vector<double>& column_for(int worker) const {
    return columns[static_cast<std::size_t>(worker) % columns.size()];
  }
};

// Reads and validates `path`; errors name the file and the line.
Result<std::shared_ptr<const TraceTable>> read_trace(const std::filesystem::path& path);
// The same on text already open; `path` names it in messages and in the table. read_trace
// opens the file and calls it; the fuzzer calls it directly (docs/reliability.md).
Result<std::shared_ptr<const TraceTable>> read_trace(std::istream& in,
                                                     const std::filesystem::path& path);

// The table behind a "trace:" distribution, nullptr for every other family.
const TraceTable* trace_table(const Distribution& dist);

}  // namespace stalesgd::straggler

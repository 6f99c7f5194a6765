// Fuzzes the trace-file reader (read_trace, src/straggler/trace.cpp; the format is in
// docs/stragglers.md, "Trace files"). Input: the file's text, read from memory.
// Property: an Error is one line; a table has one named column per header cell, every column
// the same non-zero length, every value finite and >= 0; and as a spec ("trace:<file>" for 3
// workers, the file then read from a memory file) it replays the columns' values in order.
#include <cmath>
#include <sstream>
#include <string>

#include "stalesgd/straggler/profile.hpp"
#include "straggler/trace.hpp"
#include "support/check.hpp"
#include "support/mem_file.hpp"

using namespace stalesgd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto table = straggler::read_trace(in, "fuzz.csv");
  if (!table) {
    FUZZ_CHECK(fuzz::one_line(table.error().message));
    return 0;
  }
  const straggler::TraceTable& t = **table;
  FUZZ_CHECK(!t.names.empty() && t.names.size() == t.columns.size());
  for (const auto& column : t.columns) {
    FUZZ_CHECK(column.size() == t.rows() && !column.empty());
    for (const double v : column) FUZZ_CHECK(std::isfinite(v) && v >= 0);
  }

  static fuzz::MemFile file;
  const std::string spec = "trace:" + file.write({data, size}).string();
  auto profile = StragglerProfile::parse(spec, 3);
  if (!profile) std::fprintf(stderr, "%s\n", profile.error().message.c_str());
  FUZZ_CHECK(profile.ok());
  for (int w = 0; w < 3; ++w) {
    DelaySampler sampler(*profile, w, /*run_seed=*/1);
    for (std::size_t i = 0; i <= t.rows(); ++i) {  // one more than the rows: it wraps
      FUZZ_CHECK(sampler.next(0.0) == t.column_for(w)[i % t.rows()]);
    }
  }
  return 0;
}

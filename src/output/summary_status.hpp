// What a run folder's summary.json says of the run (docs/outputs.md): written with "status":
// "running" when the run starts, replaced by the final one ("complete", "interrupted", "failed",
// "incomplete") when it ends. A "running" summary in a folder nobody holds is a run that was
// killed: it may be resumed from its checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace stalesgd {

struct SummaryStatus {
  bool exists = false;  // DIR/summary.json is there
  std::string status;   // its "status"; empty when it has none or cannot be parsed
  std::string stop_reason;
  std::uint64_t iterations = 0;

  // A summary.json written at the end of a run (any status but "running").
  bool finished() const { return exists && status != "running"; }
  // A finished run worth keeping: one that failed before its first update (a thread that would
  // not start, memory that ran out) holds nothing the corrected command should need --force for.
  bool holds_run() const { return finished() && !(status == "failed" && iterations == 0); }
};

SummaryStatus read_summary_status(const std::filesystem::path& dir);

}  // namespace stalesgd

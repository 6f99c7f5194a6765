// Reads the status of a run folder's summary.json (output/summary_status.hpp).
#include "output/summary_status.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

namespace stalesgd {

SummaryStatus read_summary_status(const std::filesystem::path& dir) {
  SummaryStatus s;
  std::ifstream in(dir / "summary.json");
  if (!in) return s;
  s.exists = true;
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return s;
  if (const auto it = j.find("status"); it != j.end() && it->is_string()) s.status = *it;
  if (const auto it = j.find("stop_reason"); it != j.end() && it->is_string()) {
    s.stop_reason = *it;
  }
  return s;
}

}  // namespace stalesgd

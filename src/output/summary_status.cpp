// Reads the status of a run folder's summary.json (output/summary_status.hpp).
#include "output/summary_status.hpp"

#include <nlohmann/json.hpp>

#include "util/regular_file.hpp"

namespace stalesgd {

SummaryStatus read_summary_status(const std::filesystem::path& dir) {
  SummaryStatus s;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(dir / "summary.json", ec))) return s;
  s.exists = true;
  // A FIFO or device in its place is a summary that cannot be read, not a hang.
  const auto text = read_user_file(dir / "summary.json", "", "", kTextFileMost);
  if (!text) return s;
  const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return s;
  if (const auto it = j.find("status"); it != j.end() && it->is_string()) s.status = *it;
  if (const auto it = j.find("stop_reason"); it != j.end() && it->is_string()) {
    s.stop_reason = *it;
  }
  if (const auto it = j.find("iterations"); it != j.end() && it->is_number_unsigned()) {
    s.iterations = it->get<std::uint64_t>();
  }
  return s;
}

}  // namespace stalesgd

// experiment.toml and runs.csv: a race's folder says which file and which options made it.
#include "experiment/provenance.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "experiment/run_config.hpp"
#include "util/atomic_file.hpp"

namespace stalesgd {

namespace {

// The columns of runs.csv: every key any run has, in the option table's order.
std::vector<std::string> union_of_keys(const std::vector<RunConfig>& configs) {
  std::vector<std::string> keys;
  for (const auto& c : configs) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (std::find(keys.begin(), keys.end(), c[i].first) != keys.end()) continue;
      // After the key that precedes it in this run, so that table order survives a key that
      // only some runs have (hidden).
      auto at = keys.end();
      if (i > 0) at = std::next(std::find(keys.begin(), keys.end(), c[i - 1].first));
      keys.insert(at, c[i].first);
    }
  }
  return keys;
}

}  // namespace

Status write_race_provenance(const Experiment& ex, const std::filesystem::path& dir) {
  const auto checked = [](Status s) -> Status {
    if (!s) {
      return Error{fmt::format("{}; check that --out is writable and has room", s.error().message)};
    }
    return {};
  };
  // The file as it was read, then what `race --set` changed in every run, so that the copy says
  // which runs the race made.
  std::string copy = ex.source_text;
  if (!ex.set.empty()) {
    if (!copy.empty() && copy.back() != '\n') copy += '\n';
    copy += "\n# race --set, applied over the file above to every run:\n";
    for (const auto& arg : ex.set) copy += "#   --set " + arg + "\n";
  }
  if (auto s = checked(write_file_atomically(dir / kExperimentCopy, copy)); !s) return s;

  std::vector<RunConfig> configs;
  for (const auto& r : ex.runs) configs.push_back(run_config(r.options()));
  const auto keys = union_of_keys(configs);
  std::string csv = "label,slug";
  for (const auto& k : keys) csv += "," + k;
  csv += "\n";
  for (std::size_t i = 0; i < ex.runs.size(); ++i) {
    csv += csv_field(ex.runs[i].label) + "," + ex.runs[i].slug;
    for (const auto& k : keys) {
      const auto it = std::find_if(configs[i].begin(), configs[i].end(),
                                   [&](const auto& kv) { return kv.first == k; });
      csv += "," + (it == configs[i].end() ? std::string() : csv_field(it->second));
    }
    csv += "\n";
  }
  return checked(write_file_atomically(dir / kRunsFile, csv));
}

}  // namespace stalesgd

// Reading a run folder for `stalesgd theory --fit`: summary.json and gradients.csv.
#include "cli/fit_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace stalesgd::cli {
namespace fs = std::filesystem;

Result<RunInfo> read_summary(const fs::path& dir) {
  const fs::path path = dir / "summary.json";
  std::ifstream in(path);
  if (!in) {
    return Error{
        fmt::format("{} is missing: --fit needs a finished run (its config gives P "
                    "and the rule); give a run folder written by stalesgd train",
                    path.string())};
  }
  try {
    const auto j = nlohmann::json::parse(in);
    const auto& c = j.at("config");
    RunInfo r;
    r.workers = c.at("workers").get<int>();
    r.rule = {c.at("rule").get<std::string>(), c.at("k").get<int>()};
    // ssp's s and backup's b are in the config only when the run's rule has them.
    if (c.contains("staleness_bound"))
      r.rule.staleness_bound = c["staleness_bound"].get<std::int64_t>();
    if (c.contains("backups")) r.rule.backups = c["backups"].get<int>();
    r.clock = c.at("clock").get<std::string>();
    r.delay = c.at("delay").get<std::string>();
    r.delay_mode = c.at("delay_mode").get<std::string>();
    r.compute_time_s = c.at("compute_time").get<double>();
    r.seconds_per_iteration = j.at("seconds_per_iteration").get<double>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{} is damaged: {}", path.string(), e.what())};
  }
}

Result<std::vector<double>> read_durations(const fs::path& dir) {
  const fs::path path = dir / "gradients.csv";
  std::ifstream in(path);
  if (!in) return Error{fmt::format("cannot read {}: no such file", path.string())};
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string name; std::getline(hs, name, ',');) header.push_back(name);
  const auto it = std::find(header.begin(), header.end(), "duration_s");
  if (it == header.end()) {
    return Error{
        fmt::format("{} has no duration_s column (a run recorded before durations "
                    "were, or not a gradients.csv); run it again with this stalesgd",
                    path.string())};
  }
  const auto column = static_cast<std::size_t>(it - header.begin());
  std::vector<double> out;
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    std::stringstream ls(line);
    std::string field;
    std::size_t i = 0, used = 0;
    double v = 0.0;
    bool ok = false;
    for (; std::getline(ls, field, ','); ++i) {
      if (i != column) continue;
      try {
        v = std::stod(field, &used);
        ok = used == field.size() && std::isfinite(v) && v >= 0.0;
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || i != header.size()) {
      return Error{
          fmt::format("{} line {} is damaged ('{}'): expected {} fields with a "
                      "duration_s >= 0",
                      path.string(), n, line.substr(0, 60), header.size())};
    }
    out.push_back(v);
  }
  if (in.bad()) return Error{fmt::format("cannot read {}", path.string())};
  return out;
}

}  // namespace stalesgd::cli

// Reading a run folder for `stalesgd theory --fit`: summary.json and gradients.csv.
#include "cli/fit_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "config/plugins.hpp"
#include "util/memory.hpp"
#include "util/regular_file.hpp"

namespace stalesgd::cli {
namespace fs = std::filesystem;

Result<RunInfo> read_summary(const fs::path& dir) {
  const fs::path path = dir / "summary.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Error{
        fmt::format("{} is missing: --fit needs a finished run (its config gives P "
                    "and the rule); give a run folder written by stalesgd train",
                    path.string())};
  }
  const auto text =
      read_user_file(path, "", "give a run folder written by stalesgd train", kTextFileMost);
  if (!text) return text.error();
  try {
    const auto j = nlohmann::json::parse(*text);
    if (j.value("status", "") == std::string("running")) {
      return Error{fmt::format(
          "{} says the run is still running (or was killed): --fit needs a finished run; wait "
          "for it, or resume it with stalesgd train --resume {}",
          path.string(), dir.string())};
    }
    // The run's plug-ins first, as --resume loads a checkpoint's: their rules' keys follow
    // (config/plugins.hpp).
    const auto& config = j.at("config");
    if (const auto plugin = config.find("plugin");
        plugin != config.end() && plugin->is_string() && !plugin->get<std::string>().empty()) {
      if (auto s = load_plugins(plugin->get<std::string>()); !s) {
        return Error{fmt::format("{}: {}", path.string(), s.error().message)};
      }
    }
    // The run's options read back through the option table (config/option_table.hpp).
    auto o = options_from_json(config);
    if (!o) return Error{fmt::format("{} is damaged: {}", path.string(), o.error().message)};
    RunInfo r;
    r.workers = o->workers;
    r.rule = o->rule;
    r.clock = o->sequential ? "sequential" : to_string(o->clock);
    r.delay = o->delay;
    r.delay_mode = to_string(o->delay_mode);
    r.compute_time_s = o->compute_time_s;
    r.seconds_per_iteration = j.at("seconds_per_iteration").get<double>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{} is damaged: {}", path.string(), e.what())};
  }
}

Result<std::vector<double>> read_durations(const fs::path& dir) {
  const fs::path path = dir / "gradients.csv";
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Error{fmt::format("cannot read {}: no such file", path.string())};
  // A journal may be large: bounded by the memory, and a FIFO or device is refused.
  const std::uint64_t most = memory_bytes();
  const auto text = read_user_file(path, "", "give a run folder written by stalesgd train",
                                   most == 0 ? UINT64_MAX : most / 2);
  if (!text) return text.error();
  std::istringstream in(*text);
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

// --resume's cross-check of checkpoint.bin's options against the folder's run.toml.
#include "output/recorded_options.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "output/checkpoint.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

Status check_recorded_options(const fs::path& dir, const TrainerOptions& options) {
  const fs::path file = dir / "run.toml";
  const std::string fix =
      fmt::format("restore the run's own {} and {}, or start the run again with --force",
                  file.string(), kCheckpointFile);
  // run.toml is written before training starts, so every checkpoint has one beside it.
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (st.type() == fs::file_type::not_found) {
    return Error{
        fmt::format("{} is missing: it records the run's options, which --resume checks "
                    "the checkpoint's against; {}",
                    file.string(), fix)};
  }
  // Not opened unless regular: a FIFO would block the read (docs/reliability.md).
  if (fs::status(file, ec).type() != fs::file_type::regular) {
    return Error{fmt::format("{} is not a regular file; {}", file.string(), fix)};
  }
  auto recorded = options_from_toml(file);
  if (!recorded) return Error{fmt::format("{}; {}", recorded.error().message, fix)};
  const nlohmann::json there = options_to_json(*recorded), here = options_to_json(options);
  for (const auto& [key, value] : here.items()) {
    if (outside_the_run(key)) continue;
    const auto it = there.find(key);
    const std::string was = it == there.end() ? "(not given)" : it->dump();
    if (it == there.end() || *it != value) {
      return Error{fmt::format("{} is not this run's: its {} is {}, run.toml's {}; {}",
                               (dir / kCheckpointFile).string(), key, value.dump(), was, fix)};
    }
  }
  for (const auto& [key, value] : there.items()) {
    if (!outside_the_run(key) && !here.contains(key)) {
      return Error{fmt::format("{} is not this run's: it has no {}, run.toml's is {}; {}",
                               (dir / kCheckpointFile).string(), key, value.dump(), fix)};
    }
  }
  return {};
}

}  // namespace stalesgd

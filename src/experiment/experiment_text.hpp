// An experiment file's text already in memory: load_experiment without the file, for the fuzzer
// (docs/reliability.md) and for tests.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// What load_experiment(path) gives for a file at `path` holding `text`: `path` names the file in
// messages, its stem is the default name and its directory the base of trace files. The file
// itself is not read, nor the plug-ins its `plugin` keys name (a rule of one not loaded is an
// unknown key): the fuzzer reads texts through this.
Result<Experiment> parse_experiment(std::string_view text, const std::filesystem::path& path,
                                    const std::vector<std::string>& set = {});

}  // namespace stalesgd

// Finding the runs under the folder `stalesgd serve` shows: the folder itself when it is a run
// (`train --out`), the runs of a race (`race --out`: runs.csv names them, in the file's order,
// before they start), or the runs and races one level below a folder that holds several.
//
// Thread safety: pure functions of the file system's state.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd::serve {

struct RunEntry {
  std::string id;             // path below the served folder, '/'-separated; the folder's name
                              // when the served folder is itself the run
  std::filesystem::path dir;  // canonical when the folder exists
  std::string label;          // runs.csv's label, else the folder's name
  std::string group;          // runs that differ only by seed share it (seed_group)
  std::string race;           // the race folder's id ("" for the served folder or none)
  // The run's resolved options as runs.csv writes them (time "20s", rule, k, seed, ...); empty
  // for a `train --out` folder.
  std::map<std::string, std::string> settings;
  bool pending = false;  // named by runs.csv, not started yet (no folder)
};

struct Catalog {
  std::string kind;  // "run", "race" or "folder"
  std::vector<RunEntry> runs;
};

// A run folder holds a journal (updates.csv or evals.csv) or a summary.json.
bool is_run_folder(const std::filesystem::path& dir);
// A race folder holds runs.csv or results.csv.
bool is_race_folder(const std::filesystem::path& dir);

// The label without a trailing " (seed N)" (the race's seeds sweep writes it): runs of one
// group are drawn as one band. Kept simple on purpose: unlike tools/plot.py it does not also
// compare the runs' configs (docs/serve.md).
std::string seed_group(const std::string& label);

// The runs under `root` (canonical). An Error when root is missing or not a folder; a folder
// without runs gives an empty catalog. Sub-folders whose real location is outside root
// (symlinks) are skipped.
Result<Catalog> discover_runs(const std::filesystem::path& root);

// The rows of a CSV text with a header, each as column -> field; a last line without its '\n'
// (a row being written) is left out.
std::vector<std::map<std::string, std::string>> parse_csv_table(std::string_view text);
// The same of a file; empty when it is missing or not a regular file (regular_file.hpp).
std::vector<std::map<std::string, std::string>> read_csv_table(const std::filesystem::path& path);

}  // namespace stalesgd::serve

// Discovering runs and races below the served folder (docs/serve.md, "What it reads").
#include "serve/run_catalog.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "serve/csv_journal.hpp"
#include "serve/safe_path.hpp"
#include "serve/small_file.hpp"

namespace stalesgd::serve {
namespace fs = std::filesystem;

namespace {

bool regular(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The sub-folders of `dir` whose real location is inside `root`, sorted by name.
std::vector<fs::path> child_folders(const fs::path& root, const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_directory(e2)) continue;
    const fs::path real = fs::canonical(it->path(), e2);
    if (e2 || !is_inside(root, real)) continue;
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string join_id(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "/" + name;
}

// One run folder (existing or pending) as an entry.
RunEntry entry(const fs::path& dir, const std::string& id, const std::string& label,
               const std::string& race) {
  RunEntry e;
  e.id = id;
  std::error_code ec;
  e.dir = fs::exists(dir, ec) ? fs::canonical(dir, ec) : dir;
  e.label = label;
  e.race = race;
  e.group = join_id(race, seed_group(label));
  return e;
}

// The runs of the race folder `dir` (id `race`): runs.csv's rows in order (pending ones too),
// then run folders it does not name (an older race's, kept by --force).
void add_race(const fs::path& root, const fs::path& dir, const std::string& race,
              std::vector<RunEntry>& runs) {
  std::set<std::string> named;
  auto table = read_csv_table(dir / "runs.csv");
  if (table.empty()) table = read_csv_table(dir / "results.csv");
  for (auto& row : table) {
    const std::string slug = row["slug"];
    // A slug is [a-z0-9-] (docs/experiments.md); anything else is not a folder name we trust.
    if (slug.empty() ||
        slug.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
      continue;
    }
    if (!named.insert(slug).second) continue;
    const fs::path run_dir = dir / slug;
    RunEntry e =
        entry(run_dir, join_id(race, slug), row["label"].empty() ? slug : row["label"], race);
    e.pending = !is_run_folder(run_dir);
    std::error_code ec;
    if (!e.pending && !is_inside(root, fs::canonical(run_dir, ec))) continue;
    row.erase("label");
    row.erase("slug");
    e.settings = std::move(row);
    runs.push_back(std::move(e));
  }
  for (const auto& child : child_folders(root, dir)) {
    const std::string name = child.filename().string();
    if (named.count(name) || !is_run_folder(child)) continue;
    runs.push_back(entry(child, join_id(race, name), name, race));
  }
}

}  // namespace

bool is_run_folder(const fs::path& dir) {
  return regular(dir / "updates.csv") || regular(dir / "evals.csv") ||
         regular(dir / "summary.json");
}

bool is_race_folder(const fs::path& dir) {
  return regular(dir / "runs.csv") || regular(dir / "results.csv");
}

std::string seed_group(const std::string& label) {
  static const std::regex seed(R"( \(seed [0-9]+\)$)");
  return std::regex_replace(label, seed, "");
}

std::vector<std::map<std::string, std::string>> parse_csv_table(std::string_view text) {
  std::vector<std::map<std::string, std::string>> rows;
  const auto next_line = [&](std::string_view& line) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) return false;  // none, or a row still being written
    line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    return true;
  };
  std::string_view line;
  if (!next_line(line)) return rows;
  const auto header = split_csv_line(line);
  while (next_line(line)) {
    const auto fields = split_csv_line(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::map<std::string, std::string>> read_csv_table(const fs::path& path) {
  const auto file = read_regular_file(path, kMaxSmallFileBytes);
  return file.state == FileState::kOpen ? parse_csv_table(file.bytes)
                                        : std::vector<std::map<std::string, std::string>>{};
}

Result<Catalog> discover_runs(const fs::path& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    return Error{
        fmt::format("{} does not exist; give a folder written by `stalesgd train --out` "
                    "or `stalesgd race --out`",
                    root.string())};
  }
  if (!fs::is_directory(root, ec)) {
    return Error{
        fmt::format("{} is not a folder; give a folder written by `stalesgd train --out` "
                    "or `stalesgd race --out`",
                    root.string())};
  }
  Catalog c;
  if (is_run_folder(root)) {
    const std::string name = root.filename().empty() ? "run" : root.filename().string();
    c.kind = "run";
    c.runs.push_back(entry(root, name, name, ""));
    return c;
  }
  if (is_race_folder(root)) {
    c.kind = "race";
    add_race(root, root, "", c.runs);
    return c;
  }
  c.kind = "folder";
  for (const auto& child : child_folders(root, root)) {
    const std::string name = child.filename().string();
    if (is_run_folder(child)) {
      c.runs.push_back(entry(child, name, name, ""));
    } else if (is_race_folder(child)) {
      add_race(root, child, name, c.runs);
    } else {
      // A folder of run folders without runs.csv (a race cut short before writing it).
      for (const auto& grandchild : child_folders(root, child)) {
        if (!is_run_folder(grandchild)) continue;
        const std::string g = grandchild.filename().string();
        c.runs.push_back(entry(grandchild, join_id(name, g), g, name));
      }
    }
  }
  return c;
}

}  // namespace stalesgd::serve

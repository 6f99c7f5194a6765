// Sweeps: one [[run]] table whose settings hold lists expands to the cross product of the
// lists, each point labelled from the run's label template (docs/experiments.md, "Sweeps").
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/setting.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// A run's label with placeholders naming keys: "k-async K={k}", "{rule}, seed {seed}".
// "{{" and "}}" are literal braces.
class LabelTemplate {
 public:
  // The error says which placeholder names no key, or where a brace is unmatched.
  static Result<LabelTemplate> parse(std::string_view text);

  // Whether a placeholder names the key of `option`.
  bool names(const OptionDecl& option) const;

  // The label with each placeholder replaced by `value(option)`.
  std::string render(const std::function<std::string(const OptionDecl&)>& value) const;

 private:
  struct Piece {
    std::string literal;                 // text, when option is null
    const OptionDecl* option = nullptr;  // a placeholder
  };
  std::vector<Piece> pieces_;
};

// A run's settings by key: the shared ones, replaced by the run's own, replaced by --set.
using Settings = std::map<std::string, Setting>;

struct SweepPoint {
  std::string label;
  ResolvedRun run;
};

// The runs of one [[run]] table, in the documented order: the cross product of its list
// settings, the key written first varying slowest and seed fastest. A swept key (of more than
// one value) that the label does not name is added to it: " (k=4, lr=0.1)", then " (seed 2)".
// Trace files resolve against `base_dir`; an error is prefixed with `where` (the table's
// file:line) and the run's label.
//
// Cells are the points but for their seed, numbered across the whole file: `cells` is the
// number of earlier tables' cells on entry and is advanced past this table's. With a
// `seed_stride` above 0, cell c runs with seed + c * seed_stride (labels show that seed), so
// that no two cells share their delay streams, data order or initial weights.
// The most runs one [[run]] table may expand to (docs/experiments.md, "Sweeps"); checked
// before the expansion, which holds every point in memory.
inline constexpr std::uint64_t kMaxSweepRuns = 10000;

struct SeedCells {
  std::uint64_t stride = 0;  // 0: every cell runs the seeds as written
  std::uint64_t cells = 0;
};
Result<std::vector<SweepPoint>> expand_sweep(const Settings& settings, const LabelTemplate& label,
                                             const std::string& where,
                                             const std::filesystem::path& base_dir,
                                             SeedCells& seeds);

}  // namespace stalesgd

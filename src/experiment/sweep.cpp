// The cross product of a run's list settings and the labels of its points.
#include "experiment/sweep.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace stalesgd {

Result<LabelTemplate> LabelTemplate::parse(std::string_view text) {
  LabelTemplate t;
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;  // "{{" or "}}"
      ++i;
      continue;
    }
    if (c == '}') return Error{"a '}' without its '{' (write }} for a brace)"};
    if (c != '{') {
      literal += c;
      continue;
    }
    const auto end = text.find('}', i);
    if (end == std::string_view::npos) return Error{"a '{' without its '}' (write {{ for a brace)"};
    const std::string key(text.substr(i + 1, end - i - 1));
    const OptionDecl* option = experiment_option(key == "seeds" ? "seed" : key);
    if (option == nullptr) {
      return Error{fmt::format("placeholder {{{}}} names no key; known keys: {}", key,
                               known_experiment_keys())};
    }
    if (!literal.empty()) t.pieces_.push_back({std::move(literal), nullptr});
    literal.clear();
    t.pieces_.push_back({"", option});
    i = end;
  }
  if (!literal.empty()) t.pieces_.push_back({std::move(literal), nullptr});
  return t;
}

bool LabelTemplate::names(const OptionDecl& option) const {
  return std::any_of(pieces_.begin(), pieces_.end(),
                     [&](const Piece& p) { return p.option == &option; });
}

std::string LabelTemplate::render(
    const std::function<std::string(const OptionDecl&)>& value) const {
  std::string out;
  for (const auto& p : pieces_) out += p.option != nullptr ? value(*p.option) : p.literal;
  return out;
}

Result<std::vector<SweepPoint>> expand_sweep(const Settings& settings, const LabelTemplate& label,
                                             const std::string& where,
                                             const std::filesystem::path& base_dir,
                                             SeedCells& seeds) {
  // The axes, slowest first.
  std::vector<const Setting*> axes;
  for (const auto& [key, s] : settings) {
    if (s.list) axes.push_back(&s);
  }
  std::stable_sort(axes.begin(), axes.end(),
                   [](const Setting* a, const Setting* b) { return a->order < b->order; });
  const auto axis_of = [&](const Setting& s) {
    return static_cast<std::size_t>(std::find(axes.begin(), axes.end(), &s) - axes.begin());
  };
  const auto is_seed = [](const Setting* s) { return option_key(*s->option) == "seed"; };
  std::uint64_t table_cells = 1;
  std::uint64_t table_points = 1;  // saturates at kMaxSweepRuns + 1: a 2000 x 2000 grid is refused
  for (const Setting* s : axes) {
    if (!is_seed(s)) table_cells *= s->values.size();
    table_points = std::min<std::uint64_t>(table_points * s->values.size(), kMaxSweepRuns + 1);
  }
  if (table_points > kMaxSweepRuns) {
    return Error{fmt::format(
        "{}: this sweep expands to more than {} runs (the product of its lists' lengths); "
        "give fewer values, or split it into several experiment files",
        where, kMaxSweepRuns)};
  }

  std::vector<SweepPoint> points;
  std::vector<std::size_t> at(axes.size(), 0);  // the current value of each axis
  for (bool more = true; more;) {
    TrainerOptions o;
    o.progress = false;
    o.delay_base_dir = base_dir;
    for (const auto& [key, s] : settings) {
      if (auto st = apply_setting(s, s.list ? at[axis_of(s)] : 0, o); !st) return st.error();
    }
    if (seeds.stride > 0) {
      std::uint64_t cell = 0;  // this point's cell within the table, the axes but seed as digits
      for (std::size_t a = 0; a < axes.size(); ++a) {
        if (!is_seed(axes[a])) cell = cell * axes[a]->values.size() + at[a];
      }
      o.seed += (seeds.cells + cell) * seeds.stride;
    }
    const auto shown_seed = [&](const std::string& written) {
      return seeds.stride > 0 ? std::to_string(o.seed) : written;
    };
    auto resolved = ResolvedRun::resolve(o);
    // A placeholder shows the value as written, else the run's resolved value (the effective K).
    const TrainerOptions& shown = resolved ? resolved->options() : o;
    std::string text = label.render([&](const OptionDecl& option) {
      const auto it = settings.find(option_key(option));
      if (it == settings.end()) return option_text(option, shown);
      const Setting& s = it->second;
      const std::string& written = s.values[s.list ? at[axis_of(s)] : 0].text;
      return is_seed(&s) ? shown_seed(written) : written;
    });
    // Swept keys the label does not name keep the labels apart: " (k=4)", then " (seed 2)".
    std::vector<std::string> keys;
    std::string seed;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      if (axes[a]->values.size() < 2 || label.names(*axes[a]->option)) continue;
      const std::string key = option_key(*axes[a]->option);
      const std::string& value = axes[a]->values[at[a]].text;
      if (key == "seed") {
        seed = fmt::format(" (seed {})", shown_seed(value));
      } else {
        keys.push_back(fmt::format("{}={}", key, value));
      }
    }
    if (!keys.empty()) text += fmt::format(" ({})", fmt::join(keys, ", "));
    text += seed;
    if (!resolved) {
      return Error{fmt::format("{}: run '{}': {}", where, text, resolved.error().message)};
    }
    points.push_back({std::move(text), std::move(resolved).value()});
    // The next point: the last axis moves fastest.
    more = false;
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++at[a] < axes[a]->values.size()) {
        more = true;
        break;
      }
      at[a] = 0;
    }
  }
  seeds.cells += table_cells;
  return points;
}

}  // namespace stalesgd

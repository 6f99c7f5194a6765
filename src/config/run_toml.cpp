// run.toml: a run's options as a TOML file (every option summary.json records, under the same
// keys), written into each run folder, and read back by `stalesgd train --config FILE`.
#include <sstream>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "config/plugins.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "util/did_you_mean.hpp"
#include "util/regular_file.hpp"

namespace stalesgd {

std::string options_to_toml(const TrainerOptions& options) {
  toml::table t;
  for (const auto& d : train_options()) {
    if (!d.json) continue;
    const auto v = d.get(options);
    if (!v) continue;
    const std::string key = option_key(d);
    if (d.type == OptionType::kDuration) {
      t.insert(key, format_duration(std::get<double>(*v)));  // TOML durations are "5s" strings
    } else if (const auto* list = std::get_if<std::vector<int>>(&*v)) {
      toml::array a;
      for (int x : *list) a.push_back(x);
      t.insert(key, std::move(a));
    } else if (const auto* text = std::get_if<std::string>(&*v)) {
      // `clock` reads "sequential" for --sequential runs, which `sequential = true` says.
      if (d.type == OptionType::kChoice &&
          std::find(d.choices.begin(), d.choices.end(), *text) == d.choices.end()) {
        continue;
      }
      t.insert(key, *text);
    } else if (const auto* u = std::get_if<std::uint64_t>(&*v)) {
      t.insert(key, static_cast<std::int64_t>(*u));
    } else if (const auto* i = std::get_if<std::int64_t>(&*v)) {
      t.insert(key, *i);
    } else if (const auto* x = std::get_if<double>(&*v)) {
      t.insert(key, *x);
    } else {
      t.insert(key, std::get<bool>(*v));
    }
  }
  std::ostringstream out;
  out << "# The options of this run: `stalesgd train --config run.toml --out DIR` runs it again\n"
         "# (flags given beside --config override these). docs/outputs.md\n"
      << t << "\n";
  return out.str();
}

Result<TrainerOptions> options_from_toml(const std::filesystem::path& file) {
  toml::table t;
  try {
    auto text = read_user_file(file, "", "give the run.toml a run wrote", kTextFileMost);
    if (!text) return text.error();
    t = toml::parse(*text, file.string());
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}: {}", file.string(), e.source().begin.line, e.description())};
  }
  // Its plug-ins first: their rules' keys follow.
  if (auto s = load_plugins_in_toml(t); !s)
    return Error{fmt::format("{}: {}", file.string(), s.error().message)};
  TrainerOptions o;
  for (const auto& [key, node] : t) {
    std::string flag(key.str());
    std::replace(flag.begin(), flag.end(), '_', '-');
    const OptionDecl* d = find_option(flag);
    const auto line = node.source().begin.line;
    if (d == nullptr || !d->json) {
      std::vector<std::string> keys;
      for (const auto& o : train_options()) {
        if (o.json) keys.push_back(option_key(o));
      }
      return Error{
          fmt::format("{}:{}: unknown key '{}'{}; a run.toml holds the keys of summary.json's "
                      "config (docs/outputs.md)",
                      file.string(), line, key.str(), did_you_mean(key.str(), keys))};
    }
    if (auto s = set_from_toml(*d, node, o); !s) {
      return Error{
          fmt::format("{}:{}: key '{}' {}", file.string(), line, key.str(), s.error().message)};
    }
  }
  return o;
}

}  // namespace stalesgd

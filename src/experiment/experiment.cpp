// TOML experiment files: top-level keys are shared by every run, [[run]] tables override them,
// `race --set` overrides both; keys given as lists expand to sweeps (sweep.hpp).
#include "stalesgd/experiment/experiment.hpp"

#include <toml++/toml.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "config/plugins.hpp"
#include "experiment/experiment_text.hpp"
#include "experiment/sweep.hpp"
#include "util/printable.hpp"
#include "util/regular_file.hpp"

namespace stalesgd {
namespace {

namespace fs = std::filesystem;

// Where a key is, for messages: "experiments/x.toml:12".
std::string where(const fs::path& file, const toml::node& node) {
  return fmt::format("{}:{}", file.string(), node.source().begin.line);
}

// A train flag that experiment files do not take (out, sequential, no_progress), or null.
const OptionDecl* cli_only_option(std::string_view key) {
  for (const auto& d : train_options()) {
    if (!d.toml && option_key(d) == key) return &d;
  }
  return nullptr;
}

// A top-level or [[run]] key that must be a string when present (name, description, label).
Status check_string(const fs::path& file, const toml::table& table, const char* key) {
  const toml::node* n = table.get(key);
  if (n != nullptr && !n->is_string()) {
    return Error{fmt::format("{}: key '{}' must be a string, not {}", where(file, *n), key,
                             shown_value(*n))};
  }
  return {};
}

// Adds every key of `table` but those in `skip` to `settings`, replacing what is there.
Status add_settings(const fs::path& file, const toml::table& table,
                    const std::set<std::string>& skip, Settings& settings) {
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    if (skip.count(k)) continue;
    if (k != "seeds" && experiment_option(k) == nullptr) {
      if (const OptionDecl* flag = cli_only_option(k)) {
        return Error{fmt::format("{}: key '{}' is a command-line flag only (--{}); drop it",
                                 where(file, node), k, flag->name)};
      }
      if (k == "seed_stride") {
        return Error{
            fmt::format("{}: key 'seed_stride' numbers the cells of the whole file; "
                        "put it at the top level, not in a [[run]]",
                        where(file, node))};
      }
      return Error{
          fmt::format("{}: unknown key '{}'{}; known keys: {}, seeds, seed_stride, name, "
                      "description, and [[run]] tables with label",
                      where(file, node), k, did_you_mean(k), known_experiment_keys())};
    }
    auto s = setting_from_toml(file, k, node);
    if (!s) return s.error();
    settings[option_key(*s->option)] = std::move(s).value();  // `seeds` after `seed`: it wins
  }
  return {};
}

std::string slugify(const std::string& label) {
  std::string s;
  for (char c : label) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!s.empty() && s.back() != '-') {
      s += '-';
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "run" : s;
}

// The experiment in a parsed document; `path` names the file in messages and gives the base
// directory of trace files and the default name.
Result<Experiment> from_document(const toml::table& doc, const fs::path& path,
                                 const std::vector<std::string>& set) {
  const fs::path base = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  for (const char* key : {"name", "description"}) {
    if (auto s = check_string(path, doc, key); !s) return s.error();
  }
  Experiment ex;
  ex.set = set;
  ex.name = path.stem().string();
  if (auto n = doc["name"].value_exact<std::string>()) ex.name = *n;
  if (auto d = doc["description"].value_exact<std::string>()) ex.description = *d;

  SeedCells seeds;
  if (const toml::node* n = doc.get("seed_stride")) {
    const auto v = n->value_exact<std::int64_t>();
    if (!v || *v < 0) {
      return Error{fmt::format("{}: key 'seed_stride' must be an integer >= 0, not {}",
                               where(path, *n), shown_value(*n))};
    }
    seeds.stride = static_cast<std::uint64_t>(*v);
  }
  Settings shared;
  if (auto s = add_settings(path, doc, {"name", "description", "run", "seed_stride"}, shared); !s)
    return s.error();
  Settings overrides;  // race --set, in the order given
  for (std::size_t i = 0; i < set.size(); ++i) {
    auto s = setting_from_arg(set[i], i);
    if (!s) return s.error();
    overrides[option_key(*s->option)] = std::move(s).value();
  }

  const toml::node* runs_node = doc.get("run");
  const toml::array* runs = runs_node ? runs_node->as_array() : nullptr;
  if (runs_node != nullptr &&
      (runs == nullptr || (!runs->empty() && !runs->is_array_of_tables()))) {
    return Error{fmt::format(
        "{}: key 'run' must be [[run]] tables, each with a label and a rule, "
        "not {}",
        where(path, *runs_node), runs == nullptr ? shown_value(*runs_node) : "an array of values")};
  }
  if (runs == nullptr || runs->empty() || !runs->is_array_of_tables()) {
    return Error{fmt::format("{}: no runs; add at least one [[run]] table with a label and a rule",
                             path.string())};
  }
  std::map<std::string, std::string> labels;  // label -> where its [[run]] is
  std::set<std::string> slugs;
  for (const auto& node : *runs) {
    const auto& table = *node.as_table();
    if (auto s = check_string(path, table, "label"); !s) return s.error();
    auto label = table["label"].value_exact<std::string>();
    if (!label || label->empty()) {
      return Error{fmt::format("{}: [[run]] needs a label = \"...\" naming it in the results",
                               where(path, node))};
    }
    auto tmpl = LabelTemplate::parse(*label);
    if (!tmpl) {
      return Error{fmt::format("{}: label '{}': {}", where(path, *table.get("label")), *label,
                               tmpl.error().message)};
    }
    Settings settings = shared;
    if (auto s = add_settings(path, table, {"label"}, settings); !s) return s.error();
    for (const auto& [key, s] : overrides) settings[key] = s;
    auto points = expand_sweep(settings, *tmpl, where(path, node), base, seeds);
    if (!points) return points.error();
    for (auto& p : *points) {
      if (auto [it, fresh] = labels.emplace(p.label, where(path, node)); !fresh) {
        return Error{fmt::format(
            "{}: two runs are labelled '{}' (the other from the [[run]] at {}); make the "
            "labels differ, e.g. with a placeholder such as {{k}} or {{seed}}",
            where(path, node), p.label, it->second)};
      }
      std::string slug = slugify(p.label);
      for (int i = 2; slugs.count(slug); ++i) slug = fmt::format("{}-{}", slugify(p.label), i);
      slugs.insert(slug);
      ex.runs.push_back({std::move(p.label), slug, std::move(p.run)});
    }
  }
  return ex;
}

Error syntax_error(const fs::path& path, const toml::parse_error& e) {
  return Error{fmt::format("{}:{}: TOML syntax error: {}", path.string(), e.source().begin.line,
                           e.description())};
}

// An Error is one line, but toml++'s descriptions, keys and values echo the file's bytes, a
// newline among them (a fuzzer finding, docs/reliability.md): control characters become '?'.
Error printable(Error e) {
  e.message = stalesgd::printable(e.message);
  return e;
}

// The experiment in `text`, the bytes of the file `path`; every error on one line.
Result<Experiment> load(const fs::path& path, std::string_view text,
                        const std::vector<std::string>& set, bool plugins) {
  toml::table doc;
  try {
    doc = toml::parse(text, path.string());
  } catch (const toml::parse_error& e) {
    return printable(syntax_error(path, e));
  }
  // The plug-ins its `plugin` keys name, before the keys of their rules are read.
  if (plugins) {
    if (auto s = load_plugins_in_toml(doc); !s) {
      return printable(Error{fmt::format("{}: {}", path.string(), s.error().message)});
    }
  }
  auto ex = from_document(doc, path, set);
  if (!ex) return printable(ex.error());
  ex->source_text = std::string(text);
  return ex;
}

}  // namespace

Result<Experiment> load_experiment(const fs::path& path, const std::vector<std::string>& set) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Error{
        fmt::format("{}: config file not found; give the path of a .toml file, e.g. "
                    "experiments/quickstart.toml",
                    path.string())};
  }
  // Read whole, so that the copy a race keeps is the text that was parsed.
  auto text = read_user_file(path, "", "give the path of a .toml file", kTextFileMost);
  if (!text) return text.error();
  return load(path, *text, set, /*plugins=*/true);
}

Result<Experiment> parse_experiment(std::string_view text, const fs::path& path,
                                    const std::vector<std::string>& set) {
  return load(path, text, set, /*plugins=*/false);
}

}  // namespace stalesgd

// TOML experiment files: top-level keys are shared by every run, [[run]] tables override them.
#include "stalesgd/experiment/experiment.hpp"

#include <toml++/toml.h>

#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "experiment/experiment_text.hpp"

namespace stalesgd {
namespace {

namespace fs = std::filesystem;

// Where a key is, for messages: "experiments/x.toml:12".
std::string where(const fs::path& file, const toml::node& node) {
  return fmt::format("{}:{}", file.string(), node.source().begin.line);
}

// The option that TOML key `key` sets, or null when it is no experiment key.
const OptionDecl* toml_option(std::string_view key) {
  for (const auto& d : train_options()) {
    if (d.toml && option_key(d) == key) return &d;
  }
  return nullptr;
}

// A train flag that experiment files do not take (out, sequential, no_progress), or null.
const OptionDecl* cli_only_option(std::string_view key) {
  for (const auto& d : train_options()) {
    if (!d.toml && option_key(d) == key) return &d;
  }
  return nullptr;
}

std::string known_keys() {
  std::string keys;
  for (const auto& d : train_options()) {
    if (d.toml) keys += (keys.empty() ? "" : ", ") + option_key(d);
  }
  return keys;
}

// What a value is, for "must be ..., not <it>": `the integer 5`, `the string "4"`, `an array`.
std::string shown(const toml::node& node) {
  std::ostringstream value;
  node.visit([&](const auto& v) {
    if constexpr (toml::is_value<decltype(v)>) value << v;  // as TOML writes it
  });
  switch (node.type()) {
    case toml::node_type::string:
      return "the string " + value.str();
    case toml::node_type::integer:
      return "the integer " + value.str();
    case toml::node_type::floating_point:
      return "the number " + value.str();
    case toml::node_type::boolean:
      return value.str();
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:  // dates and times
      return "the date or time " + value.str();
  }
}

// Whether `node` has the TOML type `option` takes (its value may still be out of range).
bool has_toml_type(const OptionDecl& option, const toml::node& node) {
  switch (option.type) {
    case OptionType::kString:
    case OptionType::kChoice:
    case OptionType::kDuration:
      return node.is_string();
    case OptionType::kInteger:
    case OptionType::kUnsigned:
      return node.is_integer();
    case OptionType::kNumber:
      return node.is_integer() || node.is_floating_point();
    case OptionType::kIntList:
      return node.is_array();
    case OptionType::kSwitch:
      return node.is_boolean();
  }
  return false;
}

// A top-level or [[run]] key that must be a string when present (name, description, label).
Status check_string(const fs::path& file, const toml::table& table, const char* key) {
  const toml::node* n = table.get(key);
  if (n != nullptr && !n->is_string()) {
    return Error{
        fmt::format("{}: key '{}' must be a string, not {}", where(file, *n), key, shown(*n))};
  }
  return {};
}

// Applies every key of `table` but those in `skip` to `o`.
Status apply_table(const fs::path& file, const toml::table& table,
                   const std::set<std::string>& skip, TrainerOptions& o) {
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    if (skip.count(k)) continue;
    const OptionDecl* option = toml_option(k);
    if (option == nullptr) {
      if (const OptionDecl* flag = cli_only_option(k)) {
        return Error{fmt::format("{}: key '{}' is a command-line flag only (--{}); drop it",
                                 where(file, node), k, flag->name)};
      }
      return Error{
          fmt::format("{}: unknown key '{}'; known keys: {}, seeds, name, description, "
                      "and [[run]] tables with label",
                      where(file, node), k, known_keys())};
    }
    if (auto s = set_from_toml(*option, node, o); !s) {
      // A value of the wrong type says what it is; one of the right type was out of range.
      const std::string what =
          has_toml_type(*option, node) ? std::string() : ", not " + shown(node);
      return Error{fmt::format("{}: key '{}' {}{}", where(file, node), k, s.error().message, what)};
    }
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
Result<Experiment> from_document(const toml::table& doc, const fs::path& path) {
  const fs::path base = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  for (const char* key : {"name", "description"}) {
    if (auto s = check_string(path, doc, key); !s) return s.error();
  }
  Experiment ex;
  ex.name = path.stem().string();
  if (auto n = doc["name"].value_exact<std::string>()) ex.name = *n;
  if (auto d = doc["description"].value_exact<std::string>()) ex.description = *d;

  TrainerOptions shared;
  shared.progress = false;
  if (auto s = apply_table(path, doc, {"name", "description", "run", "seeds"}, shared); !s)
    return s.error();

  std::vector<std::uint64_t> seeds{shared.seed};
  if (const toml::node* n = doc.get("seeds")) {
    const auto* a = n->as_array();
    if (a == nullptr || a->empty()) {
      return Error{fmt::format(
          "{}: key 'seeds' must be a non-empty array of integers, e.g. [1, 2, 3], not {}",
          where(path, *n), a == nullptr ? shown(*n) : "an empty array")};
    }
    seeds.clear();
    for (const auto& e : *a) {
      auto v = e.value_exact<std::int64_t>();
      if (!v || *v < 0) {
        return Error{fmt::format("{}: key 'seeds' must hold integers >= 0", where(path, *n))};
      }
      seeds.push_back(static_cast<std::uint64_t>(*v));
    }
  }

  const toml::node* runs_node = doc.get("run");
  const toml::array* runs = runs_node ? runs_node->as_array() : nullptr;
  if (runs_node != nullptr &&
      (runs == nullptr || (!runs->empty() && !runs->is_array_of_tables()))) {
    return Error{fmt::format(
        "{}: key 'run' must be [[run]] tables, each with a label and a rule, "
        "not {}",
        where(path, *runs_node), runs == nullptr ? shown(*runs_node) : "an array of values")};
  }
  if (runs == nullptr || runs->empty() || !runs->is_array_of_tables()) {
    return Error{fmt::format("{}: no runs; add at least one [[run]] table with a label and a rule",
                             path.string())};
  }
  std::set<std::string> slugs;
  for (const auto& node : *runs) {
    const auto& table = *node.as_table();
    if (auto s = check_string(path, table, "label"); !s) return s.error();
    auto label = table["label"].value_exact<std::string>();
    if (!label || label->empty()) {
      return Error{fmt::format("{}: [[run]] needs a label = \"...\" naming it in the results",
                               where(path, node))};
    }
    TrainerOptions o = shared;
    if (auto s = apply_table(path, table, {"label"}, o); !s) return s.error();
    o.delay_base_dir = base;
    for (std::uint64_t seed : seeds) {
      TrainerOptions run_options = o;
      if (doc.get("seeds")) run_options.seed = seed;
      const std::string run_label =
          seeds.size() > 1 ? fmt::format("{} (seed {})", *label, seed) : *label;
      // Resolved once here; the race trains, predicts and writes from it.
      auto resolved = ResolvedRun::resolve(run_options);
      if (!resolved) {
        return Error{fmt::format("{}: run '{}': {}", where(path, node), run_label,
                                 resolved.error().message)};
      }
      std::string slug = slugify(run_label);
      for (int i = 2; slugs.count(slug); ++i) slug = fmt::format("{}-{}", slugify(run_label), i);
      slugs.insert(slug);
      ex.runs.push_back({run_label, slug, std::move(resolved).value()});
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
  for (char& c : e.message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return e;
}

// The experiment of the document that `parse` returns (toml::parse_file or toml::parse), every
// error on one line.
template <class Parse>
Result<Experiment> load(const fs::path& path, Parse parse) {
  toml::table doc;
  try {
    doc = parse();
  } catch (const toml::parse_error& e) {
    return printable(syntax_error(path, e));
  }
  auto ex = from_document(doc, path);
  if (!ex) return printable(ex.error());
  return ex;
}

}  // namespace

Result<Experiment> load_experiment(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Error{
        fmt::format("{}: config file not found; give the path of a .toml file, e.g. "
                    "experiments/quickstart.toml",
                    path.string())};
  }
  return load(path, [&] { return toml::parse_file(path.string()); });
}

Result<Experiment> parse_experiment(std::string_view text, const fs::path& path) {
  return load(path, [&] { return toml::parse(text, path.string()); });
}

}  // namespace stalesgd

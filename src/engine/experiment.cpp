// TOML experiment files: top-level keys are shared by every run, [[run]] tables override them.
#include "stalesgd/engine/experiment.hpp"

#include <toml++/toml.h>

#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {

namespace fs = std::filesystem;

// Where a key is, for messages: "experiments/x.toml:12".
std::string where(const fs::path& file, const toml::node& node) {
  return fmt::format("{}:{}", file.string(), node.source().begin.line);
}

// One setting: how to apply a TOML value to TrainerOptions, and what it expects.
struct Setting {
  const char* expects;
  std::function<Status(const toml::node&, TrainerOptions&)> apply;
};

Setting string_setting(std::string TrainerOptions::*field) {
  return {"a string", [field](const toml::node& n, TrainerOptions& o) -> Status {
            auto v = n.value_exact<std::string>();
            if (!v) return Error{"must be a string"};
            o.*field = *v;
            return {};
          }};
}

Setting duration_setting(double TrainerOptions::*field) {
  return {"a duration string such as \"20s\"",
          [field](const toml::node& n, TrainerOptions& o) -> Status {
            auto v = n.value_exact<std::string>();
            if (!v) return Error{"must be a duration string with a unit, e.g. \"20s\" or \"500ms\""};
            auto d = parse_duration(*v);
            if (!d) return Error{d.error().message};
            o.*field = *d;
            return {};
          }};
}

Setting integer_setting(std::function<void(TrainerOptions&, std::int64_t)> set, std::int64_t min) {
  return {"an integer", [set, min](const toml::node& n, TrainerOptions& o) -> Status {
            auto v = n.value_exact<std::int64_t>();
            if (!v) return Error{"must be an integer"};
            if (*v < min) return Error{fmt::format("must be at least {}", min)};
            set(o, *v);
            return {};
          }};
}

Setting number_setting(std::function<void(TrainerOptions&, double)> set) {
  return {"a number", [set](const toml::node& n, TrainerOptions& o) -> Status {
            auto v = n.value<double>();  // integers widen
            if (!v || !(n.is_floating_point() || n.is_integer())) return Error{"must be a number"};
            set(o, *v);
            return {};
          }};
}

const std::map<std::string, Setting>& settings() {
  static const std::map<std::string, Setting> table = [] {
    std::map<std::string, Setting> t;
    t["dataset"] = string_setting(&TrainerOptions::dataset);
    t["data_dir"] = {"a string", [](const toml::node& n, TrainerOptions& o) -> Status {
                       auto v = n.value_exact<std::string>();
                       if (!v) return Error{"must be a string"};
                       o.data_dir = *v;
                       return {};
                     }};
    t["model"] = {"a string", [](const toml::node& n, TrainerOptions& o) -> Status {
                    auto v = n.value_exact<std::string>();
                    if (!v) return Error{"must be a string"};
                    o.model.name = *v;
                    return {};
                  }};
    t["hidden"] = {"an array of layer sizes", [](const toml::node& n, TrainerOptions& o) -> Status {
                     const auto* a = n.as_array();
                     if (a == nullptr) return Error{"must be an array of positive integers, e.g. [256, 128]"};
                     o.model.hidden.clear();
                     for (const auto& e : *a) {
                       auto v = e.value_exact<std::int64_t>();
                       if (!v || *v < 1 || *v > 1 << 20) {
                         return Error{"must be an array of positive integers, e.g. [256, 128]"};
                       }
                       o.model.hidden.push_back(static_cast<int>(*v));
                     }
                     return {};
                   }};
    t["l2"] = number_setting([](TrainerOptions& o, double v) { o.model.l2 = static_cast<float>(v); });
    t["rule"] = {"a string", [](const toml::node& n, TrainerOptions& o) -> Status {
                   auto v = n.value_exact<std::string>();
                   if (!v) return Error{"must be a string"};
                   o.rule.name = *v;
                   return {};
                 }};
    t["k"] = integer_setting([](TrainerOptions& o, std::int64_t v) { o.rule.k = static_cast<int>(v); }, 1);
    t["workers"] = integer_setting([](TrainerOptions& o, std::int64_t v) { o.workers = static_cast<int>(std::min<std::int64_t>(v, 1 << 20)); }, 1);
    t["batch"] = integer_setting([](TrainerOptions& o, std::int64_t v) { o.batch = static_cast<int>(std::min<std::int64_t>(v, 1 << 20)); }, 1);
    t["lr"] = number_setting([](TrainerOptions& o, double v) { o.lr = v; });
    t["lr_rule"] = string_setting(&TrainerOptions::lr_rule);
    t["delay"] = string_setting(&TrainerOptions::delay);
    t["delay_mode"] = {"\"pad\" or \"add\"", [](const toml::node& n, TrainerOptions& o) -> Status {
                         auto v = n.value_exact<std::string>();
                         if (!v || (*v != "pad" && *v != "add")) return Error{"must be \"pad\" or \"add\""};
                         o.delay_mode = *v == "pad" ? DelayMode::kPad : DelayMode::kAdd;
                         return {};
                       }};
    t["adasync_every"] = duration_setting(&TrainerOptions::adasync_every_s);
    t["iterations"] = integer_setting([](TrainerOptions& o, std::int64_t v) { o.iterations = static_cast<std::uint64_t>(v); }, 1);
    t["time"] = duration_setting(&TrainerOptions::time_s);
    t["target_error"] = number_setting([](TrainerOptions& o, double v) { o.target_error = v; });
    t["clock"] = {"\"real\" or \"virtual\"", [](const toml::node& n, TrainerOptions& o) -> Status {
                    auto v = n.value_exact<std::string>();
                    if (!v || (*v != "real" && *v != "virtual")) return Error{"must be \"real\" or \"virtual\""};
                    o.clock = *v == "real" ? ClockKind::kReal : ClockKind::kVirtual;
                    return {};
                  }};
    t["compute_time"] = duration_setting(&TrainerOptions::compute_time_s);
    t["eval_every"] = duration_setting(&TrainerOptions::eval_every_s);
    t["eval_samples"] = integer_setting([](TrainerOptions& o, std::int64_t v) { o.eval_test_samples = static_cast<std::size_t>(v); }, 0);
    t["seed"] = integer_setting([](TrainerOptions& o, std::int64_t v) { o.seed = static_cast<std::uint64_t>(v); }, 0);
    return t;
  }();
  return table;
}

std::string known_keys() {
  std::string keys;
  for (const auto& [k, s] : settings()) keys += (keys.empty() ? "" : ", ") + k;
  return keys;
}

// Applies every key of `table` but those in `skip` to `o`.
Status apply_table(const fs::path& file, const toml::table& table, const std::set<std::string>& skip,
                   TrainerOptions& o) {
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    if (skip.count(k)) continue;
    auto it = settings().find(k);
    if (it == settings().end()) {
      return Error{fmt::format("{}: unknown key '{}'; known keys: {}, seeds, name, description, "
                               "and [[run]] tables with label",
                               where(file, node), k, known_keys())};
    }
    if (auto s = it->second.apply(node, o); !s) {
      return Error{fmt::format("{}: key '{}' {}", where(file, node), k, s.error().message)};
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

}  // namespace

Result<Experiment> load_experiment(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Error{fmt::format("{}: config file not found; give the path of a .toml file, e.g. "
                             "experiments/quickstart.toml",
                             path.string())};
  }
  toml::table doc;
  try {
    doc = toml::parse_file(path.string());
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}: TOML syntax error: {}", path.string(), e.source().begin.line,
                             e.description())};
  }
  const fs::path base = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  Experiment ex;
  ex.name = path.stem().string();
  if (auto n = doc["name"].value_exact<std::string>()) ex.name = *n;
  if (auto d = doc["description"].value_exact<std::string>()) ex.description = *d;

  TrainerOptions shared;
  shared.progress = false;
  if (auto s = apply_table(path, doc, {"name", "description", "run", "seeds"}, shared); !s) return s.error();

  std::vector<std::uint64_t> seeds{shared.seed};
  if (const toml::node* n = doc.get("seeds")) {
    const auto* a = n->as_array();
    if (a == nullptr || a->empty()) {
      return Error{fmt::format("{}: key 'seeds' must be a non-empty array of integers, e.g. [1, 2, 3]",
                               where(path, *n))};
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
  if (runs == nullptr || runs->empty() || !runs->is_array_of_tables()) {
    return Error{fmt::format("{}: no runs; add at least one [[run]] table with a label and a rule",
                             path.string())};
  }
  std::set<std::string> slugs;
  for (const auto& node : *runs) {
    const auto& table = *node.as_table();
    auto label = table["label"].value_exact<std::string>();
    if (!label || label->empty()) {
      return Error{fmt::format("{}: [[run]] needs a label = \"...\" naming it in the results",
                               where(path, node))};
    }
    TrainerOptions o = shared;
    if (auto s = apply_table(path, table, {"label"}, o); !s) return s.error();
    o.delay_base_dir = base;
    for (std::uint64_t seed : seeds) {
      ExperimentRun run;
      run.options = o;
      if (doc.get("seeds")) run.options.seed = seed;
      run.label = seeds.size() > 1 ? fmt::format("{} (seed {})", *label, seed) : *label;
      if (auto s = validate(run.options); !s) {
        return Error{fmt::format("{}: run '{}': {}", where(path, node), run.label, s.error().message)};
      }
      std::string slug = slugify(run.label);
      for (int i = 2; slugs.count(slug); ++i) slug = fmt::format("{}-{}", slugify(run.label), i);
      slugs.insert(slug);
      run.slug = slug;
      ex.runs.push_back(std::move(run));
    }
  }
  return ex;
}

}  // namespace stalesgd

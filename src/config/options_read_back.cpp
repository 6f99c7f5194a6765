// options_from_args and options_from_json: a run's options read back from what recorded them
// (a checkpoint's command line, summary.json's "config") through the option table, for
// `train --resume`, `race --resume` and `theory --fit`.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "config/plugins.hpp"

namespace stalesgd {
namespace {

// A JSON value as the option's type holds it (options_to_json's inverse); nullopt: wrong type.
std::optional<OptionValue> json_value(const OptionDecl& d, const nlohmann::json& v) {
  switch (d.type) {
    case OptionType::kSwitch:
      if (v.is_boolean()) return v.get<bool>();
      return std::nullopt;
    case OptionType::kInteger:
      if (!v.is_number_integer()) return std::nullopt;
      if (v.get<std::int64_t>() < d.min || v.get<std::int64_t>() > d.max) return std::nullopt;
      return v.get<std::int64_t>();
    case OptionType::kUnsigned:
      if (!v.is_number_unsigned()) return std::nullopt;
      return v.get<std::uint64_t>();
    case OptionType::kNumber:
    case OptionType::kDuration:
      if (!v.is_number()) return std::nullopt;
      return v.get<double>();
    case OptionType::kString:
      if (!v.is_string()) return std::nullopt;
      return v.get<std::string>();
    case OptionType::kChoice:
      if (!v.is_string() ||
          std::find(d.choices.begin(), d.choices.end(), v.get<std::string>()) == d.choices.end()) {
        return std::nullopt;
      }
      return v.get<std::string>();
    case OptionType::kIntList: {
      if (!v.is_array()) return std::nullopt;
      std::vector<int> list;
      for (const auto& x : v) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < d.min ||
            x.get<std::int64_t>() > d.max) {
          return std::nullopt;
        }
        list.push_back(x.get<int>());
      }
      return list;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<TrainerOptions> options_from_args(const std::vector<std::string>& args) {
  // A checkpoint's recorded --plugin first: its rules' flags follow.
  if (auto s = load_plugins_in_args(args); !s) return s.error();
  TrainerOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const OptionDecl* d = arg.rfind("--", 0) == 0 ? find_option(arg.substr(2)) : nullptr;
    if (d == nullptr) return Error{fmt::format("unknown flag '{}'", arg)};
    if (d->type == OptionType::kSwitch) {
      set_switch(*d, true, o);
    } else if (i + 1 >= args.size()) {
      return Error{fmt::format("flag '{}' without its value", arg)};
    } else if (auto s = set_from_text(*d, args[++i], o); !s) {
      return s.error();
    }
  }
  return o;
}

Result<TrainerOptions> options_from_json(const nlohmann::json& config) {
  if (!config.is_object()) return Error{"the config is not a JSON object"};
  TrainerOptions o;
  for (const auto& [key, value] : config.items()) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    // The evaluation's training sample count is a resolved value summary.json's config records
    // (output/run_writer.cpp), not an option.
    if (key == "eval_train_samples") continue;
    const OptionDecl* d = find_option(flag);
    if (d == nullptr || !d->json) return Error{fmt::format("unknown key '{}'", key)};
    if (value.is_null()) continue;  // summary.json's way of saying "not set" (e.g. no AdaSync)
    // --sequential runs record their clock as "sequential", which no --clock takes.
    if (key == "clock" && value.is_string() && value.get<std::string>() == "sequential") {
      o.sequential = true;
      continue;
    }
    const auto v = json_value(*d, value);
    if (!v) return Error{fmt::format("'{}' is {}, not a valid {}", key, value.dump(), flag)};
    d->set(o, *v);
  }
  return o;
}

}  // namespace stalesgd

// The flag parsing every subcommand shares: parse(), usage errors, the logging flags.
#include "cli/flag_parsing.hpp"
#include "cli/man_page.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/option_table.hpp"
#include "experiment/setting.hpp"
#include "util/logging.hpp"

namespace stalesgd::cli {

// Parses argv with `options`; unknown flags and stray arguments become usage errors.
// cxxopts only knows one-letter options as short flags (-k), but the documented CLI spells
// K as --k: rewrite "--k" and "--k=V" to "-k" before parsing.
cxxopts::ParseResult parse(cxxopts::Options& options, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (auto& a : args) {
    if (a == "--k") a = "-k";
    if (a.rfind("--k=", 0) == 0) a = "-k" + a.substr(4);
  }
  std::vector<char*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  auto result = options.parse(static_cast<int>(ptrs.size()), ptrs.data());
  if (!result.unmatched().empty()) {
    throw cxxopts::exceptions::parsing(
        fmt::format("unexpected argument '{}'", result.unmatched().front()));
  }
  // cxxopts keeps the last of a repeated flag; which one the user meant is a guess, so refuse.
  for (const auto& kv : result.arguments()) {
    if (result.count(kv.key()) > 1) {
      throw DuplicateFlag(fmt::format("--{} given twice; give it once", kv.key()));
    }
  }
  return result;
}

// -q, -v and --log-level: what stderr shows, for every command.
void add_logging_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options(kLogGroup)
      ("q,quiet", "Print only the result: no progress, only warnings and errors on stderr")
      ("v,verbose", "Also log debug messages on stderr (snapshots, checkpoints)")
      ("log-level", "What stderr shows: trace, debug, info, warn, error or off (default info; "
                    "run.log records debug and up)", cxxopts::value<std::string>());
  // clang-format on
}

namespace {

// Sets what stderr shows from -q, -v or --log-level.
Status apply_logging(const cxxopts::ParseResult& r) {
  const auto given = r.count("quiet") + r.count("verbose") + r.count("log-level");
  if (given > 1) return Error{"-q, -v and --log-level exclude each other; give one"};
  auto level = spdlog::level::info;
  if (r.count("quiet")) level = spdlog::level::warn;
  if (r.count("verbose")) level = spdlog::level::debug;
  if (r.count("log-level")) {
    auto parsed = logging::parse_level(r["log-level"].as<std::string>());
    if (!parsed) return parsed.error();
    level = *parsed;
  }
  logging::set_stderr_level(level);
  return {};
}

}  // namespace

std::optional<int> help_or_logging(const cxxopts::Options& options, const cxxopts::ParseResult& r,
                                   const std::vector<std::string>& groups) {
  if (r.count("help")) {
    if (writing_man_page()) {
      add_man_section(options, groups);
      return 0;
    }
    fmt::print("{}", options.help(groups));  // no groups: all of them
    return 0;
  }
  if (auto s = apply_logging(r); !s) return fail(s.error().message, 2);
  return std::nullopt;
}

Result<std::vector<std::string>> take_repeated(std::vector<std::string>& args,
                                               const std::string& flag) {
  std::vector<std::string> values, rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--" + flag) {
      if (i + 1 >= args.size()) return Error{fmt::format("--{} needs a value", flag)};
      values.push_back(args[++i]);
    } else if (args[i].rfind("--" + flag + "=", 0) == 0) {
      values.push_back(args[i].substr(flag.size() + 3));
    } else {
      rest.push_back(args[i]);
    }
  }
  args = std::move(rest);
  return values;
}

std::vector<std::string> take_bare_settings(std::vector<std::string>& args,
                                            const std::vector<std::string>& switches) {
  std::vector<std::string> values, rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const bool after_value_flag =
        i > 0 && args[i - 1].rfind("-", 0) == 0 && args[i - 1].find('=') == std::string::npos &&
        std::find(switches.begin(), switches.end(), args[i - 1]) == switches.end();
    if (i > 0 && !a.starts_with('-') && eq != std::string::npos && !after_value_flag &&
        (key == "seeds" || experiment_option(key) != nullptr)) {
      values.push_back(a);
    } else {
      rest.push_back(a);
    }
  }
  args = std::move(rest);
  return values;
}

int usage_error(const std::string& command, const std::string& what) {
  return fail(fmt::format("{}; see `stalesgd {} --help`", what, command), 2);
}

int usage_error(const std::string& command, const cxxopts::exceptions::exception& e) {
  if (dynamic_cast<const DuplicateFlag*>(&e) != nullptr) return fail(e.what(), 2);
  return usage_error(command, std::string(e.what()));
}

void add_train_flags(cxxopts::Options& options, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const OptionDecl* d = find_option(name);
    auto value = cxxopts::value<std::string>();
    if (!d->default_text.empty()) value->default_value(std::string(d->default_text));
    options.add_options()(name, std::string(d->help), value);
  }
}

std::vector<std::string> rule_option_names() {
  std::vector<std::string> names;
  for (const auto& d : train_options()) {
    if (d.rule_option) names.emplace_back(d.name);
  }
  return names;
}

Status set_train_flags(const cxxopts::ParseResult& r, const std::vector<std::string>& names,
                       TrainerOptions& o) {
  for (const auto& name : names) {
    if (r.count(name) == 0) continue;
    if (auto s = set_from_text(*find_option(name), r[name].as<std::string>(), o); !s) return s;
  }
  return {};
}

}  // namespace stalesgd::cli

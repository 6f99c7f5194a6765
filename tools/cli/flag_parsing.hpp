// The flag parsing every subcommand shares (cxxopts is confined to args.cpp, train_args.cpp,
// race_args.cpp, theory_error.cpp and flag_parsing.cpp, since it is slow to compile): one parse
// that refuses repeated flags and spells K as --k, one-line usage errors, and the logging flags of
// every command.
#pragma once

#include <cxxopts.hpp>

#include <optional>
#include <string>
#include <vector>

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd::cli {

// The --help group of -q, -v and --log-level.
inline constexpr const char* kLogGroup = "Logging (docs/cli.md)";

// A flag given more than once; its message is the whole error line.
struct DuplicateFlag : cxxopts::exceptions::parsing {
  using cxxopts::exceptions::parsing::parsing;
};

// Parses argv with `options`; unknown flags, stray arguments and repeated flags become usage
// errors (exceptions for usage_error()).
cxxopts::ParseResult parse(cxxopts::Options& options, int argc, char** argv);

// -q, -v and --log-level: what stderr shows, for every command; help_or_logging() sets it.
void add_logging_options(cxxopts::Options& options);

// What every command does first with its parsed flags: --help prints the help (of `groups`, or
// all) and ends the command with 0; otherwise the logging flags are applied, and a bad one
// ends it with its one line and 2. nullopt: go on.
std::optional<int> help_or_logging(const cxxopts::Options& options, const cxxopts::ParseResult& r,
                                   const std::vector<std::string>& groups = {});

// Train's flags `names` (the option table's help and defaults), for a command that takes some of
// them (eval, calibrate), so that their values read the same; set_train_flags sets the given
// ones into `o` (a bad value is its one line).
void add_train_flags(cxxopts::Options& options, const std::vector<std::string>& names);
// The flags of the rules' own options in train's table (--staleness-bound, a plug-in's --cap).
std::vector<std::string> rule_option_names();
Status set_train_flags(const cxxopts::ParseResult& r, const std::vector<std::string>& names,
                       TrainerOptions& o);

// The values of a flag that may be given many times (--set, --only), taken out of `args`: the
// shared parse() refuses any repeated flag. "--flag V" and "--flag=V" both count.
Result<std::vector<std::string>> take_repeated(std::vector<std::string>& args,
                                               const std::string& flag);
// `race --config F lr=0.1`, `train lr=0.1`: a bare KEY=VALUE whose key is an experiment file's is
// a --set, taken out of `args`, unless it is the value of the flag before it (a flag that is not
// one of `switches`, which take no value).
std::vector<std::string> take_bare_settings(std::vector<std::string>& args,
                                            const std::vector<std::string>& switches);

// "stalesgd: error: <what>; see `stalesgd <command> --help`", exit 2.
int usage_error(const std::string& command, const std::string& what);
int usage_error(const std::string& command, const cxxopts::exceptions::exception& e);

// `stalesgd eval ...` (eval_command.cpp).
int eval_command(int argc, char** argv);

// `stalesgd export ...` (export_command.cpp).
int export_command(int argc, char** argv);

// `stalesgd train ...` (train_args.cpp).
int train_command(int argc, char** argv, const std::vector<std::string>& command_line);

// `stalesgd race ...` (race_args.cpp).
int race_command(int argc, char** argv, const std::vector<std::string>& command_line);

// `stalesgd theory --error ...` (theory_error.cpp).
int theory_error_command(int argc, char** argv);

}  // namespace stalesgd::cli

// `stalesgd theory` on a modelled machine (theory_machine.cpp; docs/machine.md).
#pragma once

#include <cxxopts.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::cli {

// The flags theory takes from train's option table (add_train_flags): the machine and the data
// set that --model is read on.
inline const std::vector<std::string> kTheoryMachineFlags{
    "cores", "server-time", "link", "shards", "machine", "compute-time", "dataset", "data-dir"};

// kTheoryMachineFlags, --model and --saturation-max into args (a bad value, e.g. --cores 0, is
// its one line; the machine as a whole is checked when it is resolved).
Status theory_machine_flags(const cxxopts::ParseResult& r, TheoryArgs& args);

// The machine of `args.machine`'s flags and file, messages sized by --model, --server-time auto
// measured. One line on a bad value or a missing --model.
Result<Machine> theory_machine(const TheoryArgs& args);

// The rule's server columns: the saturation point (smallest P = 1, 2, 4, ... up to
// --saturation-max whose server is busy 90% of the time; null when none) and updates/s at
// args.workers with 1, 2, 4, 8 and 16 shards.
Result<nlohmann::json> server_rows(const RuleConfig& rule, const StragglerProfile& profile,
                                   const TheoryArgs& args, const Machine& machine);

// The table of server_rows for every rule of `out` (run_theory's JSON).
void print_server_table(const nlohmann::json& out);

}  // namespace stalesgd::cli

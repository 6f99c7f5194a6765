// `stalesgd theory` on a modelled machine (theory_machine.cpp; docs/machine.md).
#pragma once

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::cli {

// --cores, --server-time, --link, --shards, --machine, --compute-time, --model, --dataset,
// --data-dir and --saturation-max into args.machine (checked when the machine is resolved;
// --cores 0 and a bad --compute-time here).
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

// A plug-in: a shared library that the `stalesgd` CLI loads with --plugin PATH (every command,
// every MPI rank; an experiment file's `plugin` key for a race), in which a researcher's own
// rules register themselves through the library's public API exactly as the built-in rules do
// (rules/rule_registry.hpp; docs/architecture.md, "A rule as a plug-in"), models with
// register_model (model/model.hpp; examples/custom_model/plugin.cpp) and delay families with
// register_delay_family (straggler/delay_family.hpp; examples/custom_delay). Built against the
// installed package (find_package(stalesgd), linking stalesgd::core), one source file:
//
//   stalesgd::Status register_mine() {
//     return stalesgd::register_rule({.name = "capped-k-async", ...});
//   }
//   STALESGD_PLUGIN(register_mine)
//
// The CLI refuses, in one line and exit 2, a file that is not a shared library, one without
// this entry point, one built against another STALESGD_PLUGIN_ABI, and one whose registration
// fails (a name that exists, an option that clashes with train's own) or throws.
#pragma once

#include "stalesgd/util/result.hpp"

// The plug-in interface's version: raised whenever a type a plug-in shares with the library
// (RuleInfo, Rule, RuleState, ...) changes its layout, so that a plug-in built against another
// one is refused instead of misread.
#define STALESGD_PLUGIN_ABI 2

// Defines the entry points the CLI looks for: the interface version the plug-in was built
// against, and `register_fn`, a `stalesgd::Status()` that registers the plug-in's rules.
#define STALESGD_PLUGIN(register_fn)                                     \
  extern "C" int stalesgd_plugin_abi() {                                 \
    return STALESGD_PLUGIN_ABI;                                          \
  }                                                                      \
  extern "C" void stalesgd_plugin_register(::stalesgd::Status* status) { \
    *status = register_fn();                                             \
  }

// A delay family of one's own (docs/stragglers.md, "Your own delay family"): registered under a
// name, `NAME:PARAMS` is then a distribution wherever a delay spec is read in this process
// (--delay, per-worker clauses, mixtures, experiment files, theory), like exp or pareto. A
// program linking the library registers it before parsing specs; the CLI gets one from a
// plug-in (stalesgd/plugin.hpp; examples/custom_delay).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// Gets the text after "NAME:", trimmed and non-empty; an Error says what is wrong with it, in
// one line, without the spec (the caller prefixes "delay spec '...': NAME: "). The
// distribution's describe() must parse back to the same describe().
using DelayFamilyParser =
    std::function<Result<std::unique_ptr<Distribution>>(std::string_view params)>;

// Makes NAME a delay family in this process, for every spec parsed from then on. `usage` is the
// family's form for messages ("weibull:scale=<time>,shape=<s>, e.g. weibull:scale=10ms,shape=2").
// Refused with one line: a name that is empty or not lower case letters, digits and '-', a
// built-in family's, or one registered already; an empty parser. Thread-safe.
Status register_delay_family(std::string name, std::string usage, DelayFamilyParser parse);

// The names register_delay_family() added, in order.
std::vector<std::string> registered_delay_families();

}  // namespace stalesgd

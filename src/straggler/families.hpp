// The distribution families: each file (constant.cpp, exponential.cpp, ...) defines one
// FamilyEntry, and parse_family (distribution.cpp) dispatches on the name before the ':'.
// Adding a family is one new file and one line in kFamilies.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include "stalesgd/straggler/distribution.hpp"
#include "straggler/spec_text.hpp"

namespace stalesgd::straggler {

using DistPtr = std::unique_ptr<Distribution>;

struct ParseContext {
  std::filesystem::path base_dir;  // trace files resolve against it
  bool in_mixture = false;         // mixtures neither nest nor hold traces
};

struct FamilyEntry {
  spec::Family info;
  bool takes_params;  // false only for "none"
  // Gets the text after "<name>:"; the error is "<problem>; <fix>" without the spec prefix.
  Result<DistPtr> (*parse)(std::string_view params, const ParseContext& ctx);
};

extern const FamilyEntry kNoneFamily;
extern const FamilyEntry kConstantFamily;
extern const FamilyEntry kUniformFamily;
extern const FamilyEntry kExponentialFamily;
extern const FamilyEntry kShiftedExponentialFamily;
extern const FamilyEntry kParetoFamily;
extern const FamilyEntry kLognormalFamily;
extern const FamilyEntry kMixtureFamily;
extern const FamilyEntry kTraceFamily;

// "<name>[:<params>]" -> a distribution; the error has no "delay spec '...'" prefix.
Result<DistPtr> parse_family(std::string_view text, const ParseContext& ctx);
// The family name of a spec text (before the first ':'), trimmed.
std::string_view family_name(std::string_view text);

// A draw capped at the largest finite double: heavy tails (pareto with a small shape) can
// overflow, and a delay must stay a number an engine can sleep on or add.
double finite_draw(double x);

// p clamped to [0, 1] (NaN stays NaN): every quantile() accepts any double without UB.
double clamp_probability(double p);

}  // namespace stalesgd::straggler

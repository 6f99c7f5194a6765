// parse_distribution: the family registry and the dispatch on "<name>:".
#include "stalesgd/straggler/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "straggler/families.hpp"

namespace stalesgd {
namespace straggler {
namespace {

// The order here is the order the "unknown distribution" message lists them in.
const std::array<const FamilyEntry*, 9> kFamilies{&kNoneFamily,
                                                  &kConstantFamily,
                                                  &kUniformFamily,
                                                  &kExponentialFamily,
                                                  &kShiftedExponentialFamily,
                                                  &kParetoFamily,
                                                  &kLognormalFamily,
                                                  &kMixtureFamily,
                                                  &kTraceFamily};

}  // namespace

std::string_view family_name(std::string_view text) {
  return spec::trim(text.substr(0, std::min(text.find(':'), text.size())));
}

double finite_draw(double x) {
  return std::min(x, std::numeric_limits<double>::max());
}

double clamp_probability(double p) {
  return p < 0 ? 0.0 : (p > 1 ? 1.0 : p);
}

Result<DistPtr> parse_family(std::string_view text, const ParseContext& ctx) {
  text = spec::trim(text);
  if (text.empty()) {
    return Error{"missing distribution; write one, e.g. exp:mean=20ms, or none for no delay"};
  }
  const std::string_view name = family_name(text);
  const auto colon = text.find(':');
  for (const FamilyEntry* family : kFamilies) {
    if (family->info.name != name) continue;
    if (!family->takes_params) {
      if (colon != std::string_view::npos) {
        return Error{fmt::format("{} takes no parameters; write {}", name, family->info.usage)};
      }
      return family->parse("", ctx);
    }
    if (colon == std::string_view::npos || spec::trim(text.substr(colon + 1)).empty()) {
      return Error{fmt::format("{} needs parameters; use {}", name, family->info.usage)};
    }
    return family->parse(spec::trim(text.substr(colon + 1)), ctx);
  }
  std::string names;
  for (const FamilyEntry* family : kFamilies) {
    names += names.empty() ? "" : ", ";
    names += family->info.name;
  }
  return Error{fmt::format("unknown distribution '{}'; use one of {}, e.g. exp:mean=20ms",
                           spec::printable(name), names)};
}

}  // namespace straggler

Result<std::unique_ptr<Distribution>> parse_distribution(std::string_view text,
                                                         const std::filesystem::path& base_dir) {
  if (spec::trim(text).empty()) {
    return Error{
        "delay spec is empty; write a distribution, e.g. exp:mean=20ms, or none for no delay"};
  }
  auto dist = straggler::parse_family(text, {base_dir, false});
  if (!dist) {
    return Error{fmt::format("delay spec '{}': {}", spec::printable(spec::trim(text)),
                             dist.error().message)};
  }
  return dist;
}

}  // namespace stalesgd

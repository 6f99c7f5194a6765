// parse_distribution: the family registry and the dispatch on "<name>:".
#include "stalesgd/straggler/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <mutex>

#include "stalesgd/straggler/delay_family.hpp"
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

// The families register_delay_family() added: kept for the process's life, so that a parser
// found under the lock may be called after it is released.
struct OwnFamily {
  std::string name;
  std::string usage;
  DelayFamilyParser parse;
};
std::mutex own_mutex;
std::vector<std::unique_ptr<OwnFamily>>& own_families() {
  static std::vector<std::unique_ptr<OwnFamily>> families;  // GUARDED_BY(own_mutex)
  return families;
}

const OwnFamily* find_own(std::string_view name) {
  std::lock_guard lock(own_mutex);
  for (const auto& f : own_families()) {
    if (f->name == name) return f.get();
  }
  return nullptr;
}

bool is_builtin(std::string_view name) {
  return std::any_of(kFamilies.begin(), kFamilies.end(),
                     [&](const FamilyEntry* f) { return f->info.name == name; });
}

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
  if (const OwnFamily* own = find_own(name)) {
    if (colon == std::string_view::npos || spec::trim(text.substr(colon + 1)).empty()) {
      return Error{fmt::format("{} needs parameters; use {}", name, own->usage)};
    }
    auto dist = own->parse(spec::trim(text.substr(colon + 1)));
    if (!dist) return Error{fmt::format("{}: {}", name, spec::printable(dist.error().message))};
    if (*dist == nullptr)
      return Error{fmt::format("{}: its parser returned no distribution", name)};
    return std::move(dist).value();
  }
  std::string names;
  for (const FamilyEntry* family : kFamilies) {
    names += names.empty() ? "" : ", ";
    names += family->info.name;
  }
  for (const std::string& own : registered_delay_families()) names += ", " + own;
  return Error{fmt::format("unknown distribution '{}'; use one of {}, e.g. exp:mean=20ms",
                           spec::printable(name), names)};
}

}  // namespace straggler

Status register_delay_family(std::string name, std::string usage, DelayFamilyParser parse) {
  const bool well_formed = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (!well_formed) {
    return Error{fmt::format("delay family '{}': a name is lower case letters, digits and '-'",
                             spec::printable(name))};
  }
  if (!parse) return Error{fmt::format("delay family '{}' has no parser", name)};
  if (straggler::is_builtin(name)) {
    return Error{fmt::format("delay family '{}' is a built-in one; choose another name", name)};
  }
  std::lock_guard lock(straggler::own_mutex);
  auto& own = straggler::own_families();
  if (std::any_of(own.begin(), own.end(), [&](const auto& f) { return f->name == name; })) {
    return Error{fmt::format("delay family '{}' is registered already", name)};
  }
  own.push_back(std::make_unique<straggler::OwnFamily>(
      straggler::OwnFamily{std::move(name), std::move(usage), std::move(parse)}));
  return {};
}

std::vector<std::string> registered_delay_families() {
  std::lock_guard lock(straggler::own_mutex);
  std::vector<std::string> names;
  for (const auto& f : straggler::own_families()) names.push_back(f->name);
  return names;
}

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

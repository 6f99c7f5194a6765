// RuleState's reading side: a field by name and type (rule_state.hpp).
#include "stalesgd/rules/rule_state.hpp"

#include <type_traits>

#include <fmt/format.h>

namespace stalesgd {
namespace {

template <class T>
constexpr const char* type_of() {
  if constexpr (std::is_same_v<T, std::int64_t>) return "an integer";
  if constexpr (std::is_same_v<T, double>) return "a number";
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) return "a list of integers";
  if constexpr (std::is_same_v<T, std::vector<double>>) return "a list of numbers";
  return "?";
}

template <class T>
std::optional<T> get(RuleState& s, std::string_view name) {
  for (const auto& [field, value] : s.fields()) {
    if (field != name) continue;
    if (const auto* v = std::get_if<T>(&value)) return *v;
    s.fail(fmt::format("field '{}' is not {}", name, type_of<T>()));
    return std::nullopt;
  }
  s.fail(fmt::format("no field '{}'", name));
  return std::nullopt;
}

template <class T>
std::optional<std::vector<T>> get_list(RuleState& s, std::string_view name, std::int64_t size) {
  auto v = get<std::vector<T>>(s, name);
  if (v && size >= 0 && v->size() != static_cast<std::size_t>(size)) {
    s.fail(fmt::format("field '{}' holds {} values, not {}", name, v->size(), size));
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::optional<std::int64_t> RuleState::integer(std::string_view name) {
  return get<std::int64_t>(*this, name);
}

std::optional<double> RuleState::number(std::string_view name) {
  return get<double>(*this, name);
}

std::optional<std::string> RuleState::text(std::string_view name) {
  return get<std::string>(*this, name);
}

std::optional<std::vector<std::int64_t>> RuleState::integers(std::string_view name,
                                                             std::int64_t size) {
  return get_list<std::int64_t>(*this, name, size);
}

std::optional<std::vector<double>> RuleState::numbers(std::string_view name, std::int64_t size) {
  return get_list<double>(*this, name, size);
}

std::optional<std::vector<bool>> RuleState::flags(std::string_view name, std::int64_t size) {
  const auto v = integers(name, size);
  if (!v) return std::nullopt;
  std::vector<bool> out;
  out.reserve(v->size());
  for (const std::int64_t x : *v) {
    if (x != 0 && x != 1) {
      fail(fmt::format("field '{}' holds {}, not a flag (0 or 1)", name, x));
      return std::nullopt;
    }
    out.push_back(x == 1);
  }
  return out;
}

}  // namespace stalesgd

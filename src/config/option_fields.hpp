// The option table's generic accessors: an OptionDecl whose setter and getter go straight to a
// TrainerOptions field by a path of member pointers (field<&TrainerOptions::batch>), so that
// a plain option is declared once (train_option_decls.cpp). Private to src/config/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <type_traits>

#include "config/option_table.hpp"

namespace stalesgd::option_fields {

// How a TrainerOptions field of type F is held in an OptionValue.
template <class F>
using Stored = std::conditional_t<
    std::is_same_v<F, bool>, bool,
    std::conditional_t<
        std::is_floating_point_v<F>, double,
        std::conditional_t<
            std::is_integral_v<F> && std::is_unsigned_v<F>, std::uint64_t,
            std::conditional_t<
                std::is_integral_v<F>, std::int64_t,
                std::conditional_t<std::is_same_v<F, std::filesystem::path>, std::string, F>>>>>;

// The member reached by a path of member pointers: member_of<&A::b, &B::c>(a) is a.b.c.
template <auto First, auto... Rest>
auto& member_of(auto& object) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*First;
  } else {
    return member_of<Rest...>(object.*First);
  }
}

template <auto... Path>
void set_field(TrainerOptions& o, const OptionValue& v) {
  auto& field = member_of<Path...>(o);
  using F = std::remove_reference_t<decltype(field)>;
  field = static_cast<F>(std::get<Stored<F>>(v));
}

template <auto... Path>
std::optional<OptionValue> get_field(const TrainerOptions& o) {
  const auto& field = member_of<Path...>(o);
  using F = std::remove_cvref_t<decltype(field)>;
  if constexpr (std::is_same_v<F, std::filesystem::path>) {
    return OptionValue{field.string()};
  } else {
    return OptionValue{static_cast<Stored<F>>(field)};
  }
}

// A declaration whose setter and getter go straight to the field at Path.
template <auto... Path>
OptionDecl field(OptionDecl d) {
  d.set = set_field<Path...>;
  d.get = get_field<Path...>;
  return d;
}

}  // namespace stalesgd::option_fields

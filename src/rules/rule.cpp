// Rule: the state every rule shares (K and the round's count) and the rule's own fields
// (save_state, rule_state.hpp), saved in checkpoints.
#include "stalesgd/rules/rule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"
#include "util/printable.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {
namespace {

// The kinds of RuleState::Value, in the variant's order, as the checkpoint stores them.
enum class Kind : std::uint64_t { kInteger, kNumber, kString, kIntegers, kNumbers };

int state_version_of(std::string_view name) {
  const RuleInfo* info = find_rule(name);
  return info != nullptr ? info->state_version : 1;
}

}  // namespace

void Rule::save(StateWriter& out) const {
  out.tag("rule");
  out.str(name());
  out.i64(state_version_of(name()));
  out.i64(k_);
  out.i64(pending_);
  RuleState state;
  save_state(state);
  out.u64(state.fields().size());
  for (const auto& [field, value] : state.fields()) {
    out.str(field);
    out.u64(value.index());
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::int64_t>) {
            out.i64(v);
          } else if constexpr (std::is_same_v<V, double>) {
            out.f64(v);
          } else if constexpr (std::is_same_v<V, std::string>) {
            out.str(v);
          } else {
            out.values(v);
          }
        },
        value);
  }
}

void Rule::load(StateReader& in) {
  if (!in.tag("rule")) return;
  const std::string rule = in.str();
  const std::int64_t version = in.i64();
  const std::int64_t k = in.i64();
  const std::int64_t pending = in.i64();
  const std::uint64_t n = in.u64();
  if (!in.ok()) return;
  if (rule != name()) {
    in.fail(fmt::format("the checkpoint holds rule '{}', not {}", printable(rule), name()));
    return;
  }
  if (version > state_version_of(name()) || version < 1) {
    in.fail(
        fmt::format("rule {}'s state is of version {}, which this build does not read (it "
                    "writes version {})",
                    rule, version, state_version_of(name())));
    return;
  }
  // K is at most P, or the K the rule was made with (rennala's and malenia's S may exceed P).
  if (k < 1 || k > std::max(workers_, k_) || pending < 0 || pending > most_pending()) {
    in.fail("K or the round's count out of range for this rule");
    return;
  }
  std::vector<std::pair<std::string, RuleState::Value>> fields;
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    std::string field = in.str();
    switch (static_cast<Kind>(in.u64())) {
      case Kind::kInteger:
        fields.emplace_back(std::move(field), in.i64());
        break;
      case Kind::kNumber:
        fields.emplace_back(std::move(field), in.f64());
        break;
      case Kind::kString:
        fields.emplace_back(std::move(field), in.str());
        break;
      case Kind::kIntegers:
        fields.emplace_back(std::move(field), in.values<std::int64_t>());
        break;
      case Kind::kNumbers:
        fields.emplace_back(std::move(field), in.values<double>());
        break;
      default:
        in.fail("a rule state field of an unknown kind");
    }
  }
  if (!in.ok()) return;
  k_ = static_cast<int>(k);
  pending_ = static_cast<int>(pending);
  RuleState state(static_cast<int>(version), std::move(fields));
  load_state(state);
  if (!state.ok()) in.fail(fmt::format("rule {}'s state: {}", rule, state.error()));
}

}  // namespace stalesgd

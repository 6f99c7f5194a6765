// A rule's own state in a checkpoint (docs/reliability.md, "Checkpoint and resume"): named
// fields of a few types, written by Rule::save_state and given back to Rule::load_state when a
// run resumes (rule.hpp), so that a rule in the tree and a plug-in's alike resume exactly where
// they stopped. The checkpoint keeps the rule's name, its RuleInfo::state_version and the
// fields in the order written; a resume finds the version it was written with in version(), and
// a field that is missing, of another type or of another length marks the state bad, which
// refuses the resume in one line naming the rule and the field.
//
// Thread safety: none; the server's thread alone saves and loads a rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace stalesgd {

class RuleState {
 public:
  using Value = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                             std::vector<double>>;

  RuleState() = default;
  // A state read from a checkpoint, written with `version` of the rule's state.
  RuleState(int version, std::vector<std::pair<std::string, Value>> fields)
      : version_(version), fields_(std::move(fields)) {}

  // Writing (Rule::save_state): each name once.
  void put(std::string name, std::int64_t v) { fields_.emplace_back(std::move(name), v); }
  void put(std::string name, double v) { fields_.emplace_back(std::move(name), v); }
  void put(std::string name, std::string v) { fields_.emplace_back(std::move(name), std::move(v)); }
  void put(std::string name, std::vector<std::int64_t> v) {
    fields_.emplace_back(std::move(name), std::move(v));
  }
  void put(std::string name, std::vector<double> v) {
    fields_.emplace_back(std::move(name), std::move(v));
  }
  // A list of flags, stored as integers 0 and 1.
  void put(std::string name, const std::vector<bool>& v) {
    put(std::move(name), std::vector<std::int64_t>(v.begin(), v.end()));
  }

  // Reading (Rule::load_state): the field's value, or nullopt with the state marked bad when
  // it is missing, of another type, or (`size` >= 0) of another length.
  std::optional<std::int64_t> integer(std::string_view name);
  std::optional<double> number(std::string_view name);
  std::optional<std::string> text(std::string_view name);
  std::optional<std::vector<std::int64_t>> integers(std::string_view name, std::int64_t size = -1);
  std::optional<std::vector<double>> numbers(std::string_view name, std::int64_t size = -1);
  // Integers 0 and 1 as flags; another integer marks the state bad.
  std::optional<std::vector<bool>> flags(std::string_view name, std::int64_t size = -1);

  // The version of the rule's state the checkpoint was written with (RuleInfo::state_version).
  int version() const { return version_; }
  // Marks the state bad: the resume is refused with "... rule state: `why`".
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::vector<std::pair<std::string, Value>>& fields() const { return fields_; }

 private:
  int version_ = 1;
  std::vector<std::pair<std::string, Value>> fields_;
  std::string error_;
};

}  // namespace stalesgd

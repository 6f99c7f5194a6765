// Text helpers shared by the delay-spec parsers: trimming, splitting, plain numbers, and the
// "key=value,..." parameter lists of the distribution families.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stalesgd/util/result.hpp"
#include "util/printable.hpp"

namespace stalesgd::spec {

std::string_view trim(std::string_view s);
// Every piece between separators, untrimmed ("a,,b" gives three pieces).
std::vector<std::string_view> split(std::string_view s, char sep);
// `s` with control characters replaced by '?', so an echoed input keeps a message on one line.
using stalesgd::printable;

// A finite plain number (no unit). `what` names it in the error, e.g. "shape".
Result<double> parse_number(std::string_view text, std::string_view what);
// Shortest text that parses back to exactly `v` ("1.5", "0.1", "1e-07").
std::string format_number(double v);

// What an error about a family says as the fix: its syntax with an example.
struct Family {
  std::string_view name;   // "exp"
  std::string_view usage;  // "exp:mean=<time>, e.g. exp:mean=20ms"
};

enum class Bound { kNonNegative, kPositive };

// The parameters of one distribution, e.g. "shift=5ms,mean=10ms" (any order).
class ParamList {
 public:
  // Rejects empty items, items without '=', unknown keys (not in `keys`) and repeated keys.
  static Result<ParamList> parse(std::string_view text, const Family& family,
                                 std::initializer_list<std::string_view> keys);

  bool has(std::string_view key) const;
  // A required time or number, checked against `bound`.
  Result<double> time(std::string_view key, Bound bound) const;
  Result<double> number(std::string_view key, Bound bound) const;

 private:
  Result<std::string_view> raw(std::string_view key) const;
  Family family_;
  std::vector<std::pair<std::string_view, std::string_view>> items_;  // views into the spec
};

// "<family> <what> must be > 0, got '<text>'; use <usage>" and friends.
Error bound_error(const Family& family, std::string_view what, std::string_view text, Bound bound);

}  // namespace stalesgd::spec

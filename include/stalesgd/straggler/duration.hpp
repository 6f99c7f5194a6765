// Times with a unit ("10ms", "1.5s", "1h30m"): the only way a delay spec writes a time, also
// handy for command-line flags such as --time 60s or --time 2h.
#pragma once

#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// "<number><unit>", unit one of ns, us, ms, s, m (minutes), h; or several such terms from the
// largest unit down ("1h30m", "2m30s"), summed. The result is in seconds, finite and >= 0.
// A bare number is an error ("write 10ms"), as are other units, a unit repeated or out of
// order, negative and non-finite values and times over kMaxDurationSeconds.
// The message is "<problem>; <fix>", without a prefix, for the caller to put in context.
Result<double> parse_duration(std::string_view text);

// The longest time parse_duration accepts: the engines' clocks count nanoseconds in 64 bits
// (about 292 years), and a deadline is a start plus such a time; far below that, far above any
// run.
inline constexpr double kMaxDurationSeconds = 1e9;

// Text in one of the four units that parse_duration maps back to exactly `seconds`: the unit
// that puts the value in [1, 1000) when exact, else the shortest exact text (0.01 -> "10ms",
// 0.5 -> "500ms", 90 -> "90s", 0 -> "0s"). `seconds` must be finite and >= 0.
std::string format_duration(double seconds);

}  // namespace stalesgd

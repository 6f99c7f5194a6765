// VirtualWatchdog: a virtual-clock run that cannot move is stopped (see virtual_watchdog.hpp).
#include "engine/virtual_watchdog.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {

std::string VirtualWatchdog::check(double t, std::uint64_t version) {
  // Progress: the clock moves, or (with an --iterations budget, which updates alone reach) an
  // update is applied.
  if (t > t_ || (o_.iterations > 0 && version != version_)) {
    t_ = t;
    version_ = version;
    quiet_ = 0;
  } else if (++quiet_ >= quiet_limit_) {
    return fmt::format(
        "the run stalled: its virtual clock stood at {:.6g} s for {} events{} (iteration {}); "
        "the delays drew no time: give each gradient a time (e.g. --compute-time 10ms) or a "
        "--delay that draws one",
        t, quiet_, o_.iterations > 0 ? " without an update" : "", version);
  }
  // Snapshot n is due at n * eval_every; none at or past --time (RunSupervisor).
  const double upto = o_.time_s > 0.0 ? std::min(t, o_.time_s) : t;
  const double due = std::floor(upto / o_.eval_every_s);
  if (due > kMaxVirtualEvaluations) {
    return fmt::format(
        "the run stalled: by {:.6g} s of its virtual clock --eval-every {} asks for {:.3g} "
        "evaluations, over the {:.0f} a virtual-clock run scores (each at once and in full); "
        "raise --eval-every, or give --time so that it is checked before the run",
        t, format_duration(o_.eval_every_s), due, kMaxVirtualEvaluations);
  }
  return {};
}

}  // namespace stalesgd

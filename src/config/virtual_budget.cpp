// check_virtual_budget: a virtual-clock run's budgets are ones its clock can reach.
#include "config/virtual_budget.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {

// Whether every minibatch takes 0 s of virtual time: every worker's delay a constant 0 (none,
// const:0s), no compute time, and no server time or link to add any. A spec that draws (even
// one whose draws all turn out 0, a trace of zeros) is left to the engine's watchdog.
bool clock_stands_still(const TrainerOptions& o, const StragglerProfile& delays,
                        const Machine& machine) {
  const auto fixed = delays.fixed_times();
  if (!fixed || std::any_of(fixed->begin(), fixed->end(), [](double x) { return x != 0.0; })) {
    return false;
  }
  return machine.compute_s == 0.0 && machine.server_gradient_s == 0.0 &&
         machine.server_update_s == 0.0 && machine.link.free() && o.server_time != "auto";
}

}  // namespace

Status check_virtual_budget(const TrainerOptions& o, const StragglerProfile& delays,
                            const Machine& machine) {
  if (o.clock != ClockKind::kVirtual) return {};
  const double compute_s = machine.compute_s;
  if (compute_s > kMaxComputeTimeSeconds) {
    return Error{fmt::format(
        "--compute-time {:g}s is over {}, the most one gradient may take on the virtual clock; "
        "give a gradient's time, e.g. --compute-time 10ms",
        compute_s, format_duration(kMaxComputeTimeSeconds))};
  }
  if (o.time_s > 0.0 && compute_s >= o.time_s) {
    return Error{fmt::format(
        "--compute-time {} is not shorter than --time {}: no gradient would arrive; lower "
        "--compute-time or raise --time",
        format_duration(compute_s), format_duration(o.time_s))};
  }
  if (o.iterations == 0 && o.time_s > 0.0 && clock_stands_still(o, delays, machine)) {
    return Error{fmt::format(
        "--clock virtual --time {}: nothing advances the virtual clock (every delay 0, no "
        "--compute-time, server time or link), so the run would never reach its --time; give "
        "each gradient a time (e.g. --compute-time 10ms), a --delay, or --iterations N",
        format_duration(o.time_s))};
  }
  // The longest stretch the run is known to span: its --time, else one gradient.
  const double span_s = o.time_s > 0.0 ? o.time_s : compute_s;
  if (span_s / o.eval_every_s > kMaxVirtualEvaluations) {
    return Error{fmt::format(
        "--eval-every {} asks for {:.3g} evaluations in {} {}, over the {:.0f} a virtual-clock "
        "run scores (each at once and in full); raise --eval-every to at least {}",
        format_duration(o.eval_every_s), span_s / o.eval_every_s,
        o.time_s > 0.0 ? "--time" : "one gradient's --compute-time", format_duration(span_s),
        kMaxVirtualEvaluations, format_duration(span_s / kMaxVirtualEvaluations))};
  }
  return {};
}

}  // namespace stalesgd

#include "stalesgd/engine/trainer_options.hpp"

#include <cmath>

#include <fmt/format.h>

#include "stalesgd/data/catalog.hpp"
#include "stalesgd/lr/learning_rate.hpp"
#include "stalesgd/straggler/profile.hpp"

namespace stalesgd {

const char* to_string(ClockKind clock) { return clock == ClockKind::kReal ? "real" : "virtual"; }
const char* to_string(DelayMode mode) { return mode == DelayMode::kPad ? "pad" : "add"; }

Status validate(const TrainerOptions& o) {
  if (auto s = check_dataset_name(o.dataset); !s) return s;
  if (o.workers < 1 || o.workers > 4096) {
    return Error{fmt::format("--workers {} is out of range; use 1 to 4096", o.workers)};
  }
  if (auto rule = make_rule(o.rule, o.workers); !rule) return rule.error();
  if (o.batch < 1 || o.batch > 65536) {
    return Error{fmt::format("--batch {} must be a positive number of samples, e.g. --batch 32", o.batch)};
  }
  if (auto lr = make_learning_rate(o.lr, o.lr_rule); !lr) return lr.error();
  if (auto delay = StragglerProfile::parse(o.delay, o.workers, o.delay_base_dir); !delay) return delay.error();
  if (!(o.model.l2 >= 0.0f) || !std::isfinite(o.model.l2)) {
    return Error{fmt::format("--l2 {} must be >= 0", o.model.l2)};
  }
  if (!o.model.hidden.empty() && o.model.name != "mlp") {
    return Error{fmt::format("--hidden applies to --model mlp only, not {}", o.model.name)};
  }
  if (o.adasync_every_s != 0.0) {
    if (!(o.adasync_every_s > 0.0) || !std::isfinite(o.adasync_every_s)) {
      return Error{"--adasync-every must be a positive duration such as 5s"};
    }
    if (o.rule.name != "k-sync" && o.rule.name != "k-async") {
      return Error{fmt::format("--adasync-every adapts K for k-sync and k-async, not {}; use "
                               "--rule k-sync or --rule k-async with --k K0",
                               o.rule.name)};
    }
  }
  if (o.compute_time_s < 0.0 || !std::isfinite(o.compute_time_s)) {
    return Error{"--compute-time must be a duration >= 0, e.g. 2ms"};
  }
  if (o.iterations == 0 && !(o.time_s > 0.0)) {
    return Error{"no budget: give --iterations N or --time T (with --target-error they cap the run)"};
  }
  if (!std::isfinite(o.time_s) || o.time_s < 0.0) {
    return Error{fmt::format("--time must be a positive duration such as 60s, not {}", o.time_s)};
  }
  if (!(o.target_error >= 0.0 && o.target_error < 1.0)) {
    return Error{fmt::format("--target-error {} must be a test error in (0, 1), e.g. 0.08", o.target_error)};
  }
  if (!(o.eval_every_s > 0.0) || !std::isfinite(o.eval_every_s)) {
    return Error{"--eval-every must be a positive duration such as 0.5s"};
  }
  if (o.sequential) {
    if (o.workers != 1 || o.rule.name != "sync" || o.delay != "none" || o.clock != ClockKind::kReal) {
      return Error{"--sequential is plain SGD in one thread: it takes --workers 1, --rule sync, "
                   "no --delay and the real clock; drop --sequential to use the parameter server"};
    }
  }
  return {};
}

}  // namespace stalesgd

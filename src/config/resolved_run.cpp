// ResolvedRun::resolve: the one place a run's options are validated and parsed.
#include "stalesgd/config/resolved_run.hpp"
#include "config/machine_options.hpp"
#include "config/option_table.hpp"
#include "config/plugins.hpp"
#include "config/virtual_budget.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stalesgd/data/partition.hpp"

#include "stalesgd/data/catalog.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {

// The default --worker-timeout (docs/cli.md): a minibatch overdue by 20 times the longest delay
// a worker draws once in a thousand (plus the virtual clock's compute time) is no straggler,
// and never less than 10 s, which no gradient on this machine comes near.
double default_worker_timeout(const StragglerProfile& delays, double compute_s) {
  const double q = delays.quantile_bound(0.999) + compute_s;
  return std::min(kMaxDurationSeconds, std::max(10.0, 20.0 * q));
}

// Checks --fail, --worker-timeout and --stall-timeout and writes the timeouts in effect back.
Result<FailurePlan> resolve_failures(TrainerOptions& o, const StragglerProfile& delays) {
  // --engine mpi: rank 0 serves, ranks 1.. hold workers_per_rank workers each.
  const int ranks = o.engine == EngineKind::kMpi ? o.workers / o.workers_per_rank + 1 : 0;
  auto plan = parse_failure_plan(o.fail, o.workers, ranks);
  if (!plan) return plan.error();
  if (!plan->empty() && o.sequential) {
    return Error{
        "--fail makes workers of the parameter server fail; --sequential has none: drop one "
        "of them"};
  }
  if (!(o.worker_timeout_s >= 0.0) || o.worker_timeout_s > kMaxDurationSeconds) {
    return Error{"--worker-timeout must be a duration such as 10s (0s: the default)"};
  }
  if (!(o.stall_timeout_s >= 0.0) || o.stall_timeout_s > kMaxDurationSeconds) {
    return Error{"--stall-timeout must be a duration such as 60s (0s: the default)"};
  }
  if (o.clock == ClockKind::kVirtual && o.stall_timeout_s != 0.0) {
    return Error{
        "--stall-timeout watches the real clock; a virtual-clock run has its own watchdog "
        "(docs/reliability.md): drop --stall-timeout or add --clock real"};
  }
  if (o.worker_timeout_s == 0.0) {
    o.worker_timeout_s = default_worker_timeout(delays, o.compute_time_s);
  }
  if (o.clock == ClockKind::kReal && o.stall_timeout_s == 0.0) {
    o.stall_timeout_s = std::min(kMaxDurationSeconds, std::max(60.0, 2.0 * o.worker_timeout_s));
  }
  return plan;
}

}  // namespace

Result<ResolvedRun> ResolvedRun::resolve(TrainerOptions o) {
  if (auto s = check_dataset_name(o.dataset); !s) return s.error();
  if (o.workers_per_rank < 1 || o.workers_per_rank > 4096) {
    return Error{
        fmt::format("--workers-per-rank {} is out of range; use 1 to 4096", o.workers_per_rank)};
  }
  if (o.workers < 1 || o.workers > 4096) {
    return Error{fmt::format("--workers {} is out of range; use 1 to 4096", o.workers)};
  }
  if (o.engine == EngineKind::kMpi && o.workers % o.workers_per_rank != 0) {
    return Error{
        fmt::format("--workers {} is not a multiple of --workers-per-rank {}: with "
                    "--engine mpi P = worker ranks x workers per rank",
                    o.workers, o.workers_per_rank)};
  }
  // The plug-ins the options name (the CLI loaded them already), then a rule's option that
  // clashes with train's own (a plug-in's --batch) is refused.
  if (auto s = load_plugins(o.plugin); !s) return s.error();
  auto rule = resolve_rule(o.rule, o.workers);
  if (!rule) return rule.error();
  // What the rest of the run needs of the rule, as its registration declares it.
  const RuleInfo& info = *find_rule(rule->rule);
  auto partition = parse_partition(o.partition);
  if (!partition) return partition.error();
  if (info.needs_partition && partition->kind == PartitionSpec::Kind::kNone) {
    return Error{
        fmt::format("--rule {} averages per worker over workers that hold different data: give "
                    "--partition iid, by-class or dirichlet:A",
                    info.name)};
  }
  if (o.batch < 1 || o.batch > 65536) {
    return Error{
        fmt::format("--batch {} must be a positive number of samples, e.g. --batch 32", o.batch)};
  }
  if (o.local_steps > 1 && !(o.local_lr > 0.0 && std::isfinite(o.local_lr))) {
    return Error{fmt::format(
        "--local-steps {} needs --local-lr, the workers' step size, e.g. --local-lr 0.05",
        o.local_steps)};
  }
  if (o.local_steps == 1 && o.local_lr != 0.0) {
    return Error{
        "--local-lr is the step size of --local-steps Q > 1: add --local-steps or drop "
        "--local-lr"};
  }
  if (static_cast<std::int64_t>(o.batch) * o.local_steps > 65536) {
    return Error{fmt::format("--batch {} x --local-steps {} draws more than 65536 samples a job",
                             o.batch, o.local_steps)};
  }
  auto lr = make_learning_rate(o.lr, o.lr_rule);
  if (!lr) return lr.error();
  // The one parse of the delay spec in a run: trace files are read here and nowhere else.
  // A job of Q local steps takes Q minibatches' delays.
  auto delays = StragglerProfile::parse(o.delay, o.workers, o.delay_base_dir);
  if (!delays) return delays.error();
  if (o.local_steps > 1) delays = delays->with_draws_per_job(o.local_steps);
  if (info.check_delays) {
    if (auto s = info.check_delays(*rule, *delays); !s) return s.error();
  }
  if (!(o.model.l2 >= 0.0f) || !std::isfinite(o.model.l2)) {
    return Error{fmt::format("--l2 {} must be >= 0", o.model.l2)};
  }
  // The model's name here, with the other flags, so that a misspelt one is a usage error
  // before --out is touched.
  if (!is_model_name(o.model.name)) return Error{unknown_model_message(o.model.name)};
  if (!o.model.hidden.empty() && o.model.name != "mlp") {
    return Error{fmt::format("--hidden applies to --model mlp only, not {}", o.model.name)};
  }
  if (o.adasync_every_s != 0.0) {
    if (!(o.adasync_every_s > 0.0) || !std::isfinite(o.adasync_every_s)) {
      return Error{"--adasync-every must be a positive duration such as 5s"};
    }
    if (!info.takes_adasync) {
      return Error{
          fmt::format("--adasync-every adapts K for {}, not {}; use one of them with --k K0",
                      rules_that([](const RuleInfo& r) { return r.takes_adasync; }), o.rule.name)};
    }
  }
  if (o.compute_time_s < 0.0 || !std::isfinite(o.compute_time_s)) {
    return Error{"--compute-time must be a duration >= 0, e.g. 2ms"};
  }
  if (o.iterations == 0 && !(o.time_s > 0.0)) {
    return Error{
        "no budget: give --iterations N or --time T (with --target-error they cap the run)"};
  }
  if (!std::isfinite(o.time_s) || o.time_s < 0.0) {
    return Error{fmt::format("--time must be a positive duration such as 60s, not {}", o.time_s)};
  }
  if (!(o.target_error >= 0.0 && o.target_error < 1.0)) {
    return Error{
        fmt::format("--target-error {} must be a test error in (0, 1), e.g. 0.08", o.target_error)};
  }
  if (!(o.progress_every_s > 0.0) || !std::isfinite(o.progress_every_s)) {
    return Error{"--progress-every must be a positive duration such as 10s"};
  }
  if (!(o.eval_every_s > 0.0) || !std::isfinite(o.eval_every_s)) {
    return Error{"--eval-every must be a positive duration such as 0.5s"};
  }
  if (o.engine == EngineKind::kMpi) {
    // The MPI engine is the real-clock parameter server with workers in other processes; the
    // options that choose another engine or another server placement do not apply.
    if (o.sequential) {
      return Error{
          "--sequential is plain SGD in one process; --engine mpi runs a parameter "
          "server across processes: drop one of them"};
    }
    if (o.clock == ClockKind::kVirtual) {
      return Error{
          "--clock virtual runs every worker on one discrete-event clock in one "
          "process; --engine mpi runs on the real clock: drop one of them"};
    }
    if (o.server != ServerPlacement::kInline) {
      return Error{
          fmt::format("--server {} places the server among the threads of one "
                      "process; with --engine mpi the server is rank 0: drop --server",
                      to_string(o.server))};
    }
  } else if (o.workers_per_rank != 1) {
    return Error{
        fmt::format("--workers-per-rank {} applies to --engine mpi only; with --engine "
                    "thread use --workers P",
                    o.workers_per_rank)};
  }
  if (o.sequential) {
    if (o.workers != 1 || !info.plain_sgd || o.delay != "none" || o.clock != ClockKind::kReal) {
      return Error{fmt::format(
          "--sequential is plain SGD in one thread: it takes --workers 1, --rule {}, no --delay "
          "and the real clock; drop --sequential to use the parameter server",
          rules_that([](const RuleInfo& r) { return r.plain_sgd; }))};
    }
  }
  if (o.record_drift && (o.sequential || o.server == ServerPlacement::kHogwild)) {
    return Error{fmt::format(
        "--record-drift measures what the server applies against the parameters each gradient "
        "was computed on; {} has no server: drop --record-drift or use --server inline",
        o.sequential ? "--sequential" : "--server hogwild")};
  }
  if (o.server == ServerPlacement::kHogwild && !info.lock_free) {
    return Error{fmt::format(
        "--server hogwild has no server to collect gradients or hold a worker back, so it runs "
        "--rule {} only, not {}; use --server inline or thread",
        rules_that([](const RuleInfo& r) { return r.lock_free; }), o.rule.name)};
  }
  if (o.server != ServerPlacement::kInline && (o.clock == ClockKind::kVirtual || o.sequential)) {
    return Error{
        fmt::format("--server {} places the server on the real clock's threads; the "
                    "{} has none: drop --server",
                    to_string(o.server), o.sequential ? "sequential trainer" : "virtual clock")};
  }
  if (o.clock == ClockKind::kReal && o.compute_time_s != 0.0) {
    return Error{
        "--compute-time models a gradient's compute on the virtual clock; on the real "
        "clock compute takes what it takes: drop --compute-time or add --clock virtual"};
  }
  auto failures = resolve_failures(o, *delays);
  if (!failures) return failures.error();
  auto machine = resolve_machine(o);
  if (!machine) return machine.error();
  if (auto s = check_virtual_budget(o, *delays, *machine); !s) return s.error();
  if ((!machine->free() || !o.server_time.empty() || o.shards != 1 || !o.machine.empty()) &&
      o.clock != ClockKind::kVirtual) {
    return Error{
        "--cores, --server-time, --link, --shards and --machine model a machine on the virtual "
        "clock; the real clock runs on this one: add --clock virtual or drop them"};
  }
  if ((!machine->free() || !o.server_time.empty()) && !failures->failures.empty()) {
    return Error{
        "--fail is not simulated on a modelled machine yet: drop --fail or the machine flags "
        "(docs/machine.md)"};
  }
  o.rule.k = rule->k;
  o.model = with_defaults(o.model);
  std::shared_ptr<const LearningRate> shared_lr = std::move(lr).value();
  return ResolvedRun(std::move(o), *rule, std::move(delays).value(), std::move(shared_lr),
                     std::move(failures).value(), std::move(machine).value());
}

}  // namespace stalesgd

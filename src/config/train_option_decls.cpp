// `stalesgd train`'s own options, declared once each in --help order (docs/cli.md): name, type,
// default, help, group, and how each sets and reads TrainerOptions. The table that appends the
// rules' own options to these is option_table.cpp.
#include "config/train_option_decls.hpp"

#include <algorithm>
#include <filesystem>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/option_fields.hpp"
#include "config/plugins.hpp"
#include "rules/reference_rules.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {
using namespace option_fields;

constexpr std::string_view kDataGroup = "Data and model";
constexpr std::string_view kServerGroup = "Parameter server";
constexpr std::string_view kBudgetGroup = "Budget (the first reached stops the run)";
constexpr std::string_view kFailureGroup = "Failed workers (docs/rules.md)";
constexpr std::string_view kEngineGroup = "Engine and output";

const std::string& word(const OptionValue& v) {
  return std::get<std::string>(v);
}

// GCC 12 warns about designated initializers that leave members to their default initializers,
// which is what every entry below means to do.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
}  // namespace

std::deque<OptionDecl> train_option_decls() {
  using T = OptionType;
  using O = TrainerOptions;
  std::deque<OptionDecl> t;
  // clang-format off
  t.push_back(field<&O::dataset>({.name = "dataset", .type = T::kString, .default_text = "mnist",
      .help = "mnist | fashion-mnist | cifar10 | npz:PATH (your own arrays, an .npz file)",
      .group = kDataGroup}));
  t.push_back(field<&O::data_dir>({.name = "data-dir", .type = T::kString, .default_text = "data",
      .help = "Directory holding the data sets", .group = kDataGroup}));
  t.push_back(field<&O::model, &ModelSpec::name>({.name = "model", .type = T::kString,
      .default_text = "softmax", .help = "softmax | mlp | lenet | cifar-cnn | torchscript:PATH", .group = kDataGroup}));
  t.push_back({.name = "hidden", .type = T::kIntList,
      .help = "mlp hidden layer sizes, e.g. 256,128 (default 128)", .group = kDataGroup,
      .min = 1, .max = 1 << 16,
      .set = [](O& o, const OptionValue& v) { o.model.hidden = std::get<std::vector<int>>(v); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        const ModelSpec spec = with_defaults(o.model);  // an mlp's real layers, not "none given"
        if (spec.hidden.empty()) return std::nullopt;
        return spec.hidden;
      }});
  t.push_back(field<&O::model, &ModelSpec::l2>({.name = "l2", .type = T::kNumber,
      .default_text = "0", .help = "L2 coefficient lambda (adds lambda/2 ||W||^2)", .group = kDataGroup}));
  t.push_back(field<&O::partition>({.name = "partition", .type = T::kString, .default_text = "none",
      .help = "none | iid | by-class | dirichlet:A: each worker samples its own shard", .group = kDataGroup}));

  // The registry's names (rules/rule_registry.hpp); the table lives as long as the process.
  static const std::string rule_help = rule_choices();
  static const std::string kDefaultRule = all_workers_rule().name;
  t.push_back(field<&O::rule, &RuleSpec::name>({.name = "rule", .type = T::kString,
      .default_text = kDefaultRule, .help = rule_help, .group = kServerGroup}));
  // Not field<>: --engine mpi needs to know whether P was given or is the ranks'.
  t.push_back({.name = "workers", .type = T::kInteger, .default_text = "1",
      .help = "Number of worker threads P", .group = kServerGroup, .min = 1, .max = 4096,
      .set = [](O& o, const OptionValue& v) {
        o.workers = static_cast<int>(std::get<std::int64_t>(v));
        o.workers_given = true;
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{static_cast<std::int64_t>(o.workers)};
      }});
  t.push_back(field<&O::workers_per_rank>({.name = "workers-per-rank", .type = T::kInteger,
      .default_text = "1",
      .help = "--engine mpi: worker threads per worker rank W; P = (ranks - 1) * W",
      .group = kServerGroup, .min = 1, .max = 4096}));
  // No default text: K = 0 in RuleSpec means "the rule's own", which the user cannot write.
  t.push_back(field<&O::rule, &RuleSpec::k>({.name = "k", .type = T::kInteger,
      .help = "Gradients per update K, 1 <= K <= P (sync: P, async: 1)", .group = kServerGroup,
      .min = 1, .max = 4096, .expects = "an integer K with 1 <= K <= P"}));
  t.push_back(field<&O::batch>({.name = "batch", .type = T::kInteger, .default_text = "32",
      .help = "Minibatch size per gradient", .group = kServerGroup, .min = 1, .max = 65536}));
  // Left out of summary.json and run.toml while unset, so runs without local steps read as
  // they always did.
  t.push_back({.name = "local-steps", .type = T::kInteger, .default_text = "1",
      .help = "Local SGD: each job is Q steps of --local-lr on Q minibatches, delivering the "
              "change, which the server applies with --lr (FedBuff's clients; 1 = a gradient)",
      .group = kServerGroup, .min = 1, .max = 4096,
      .set = [](O& o, const OptionValue& v) {
        o.local_steps = static_cast<int>(std::get<std::int64_t>(v));
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (o.local_steps == 1) return std::nullopt;
        return OptionValue{static_cast<std::int64_t>(o.local_steps)};
      }});
  t.push_back({.name = "local-lr", .type = T::kNumber,
      .help = "The workers' step size of --local-steps Q > 1", .group = kServerGroup,
      .set = [](O& o, const OptionValue& v) { o.local_lr = std::get<double>(v); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (o.local_lr == 0.0) return std::nullopt;
        return OptionValue{o.local_lr};
      }});
  t.push_back(field<&O::lr>({.name = "lr", .type = T::kNumber, .default_text = "0.05",
      .help = "Learning rate (the cap lr_max for --lr-rule dutta:...)", .group = kServerGroup}));
  t.push_back(field<&O::lr_rule>({.name = "lr-rule", .type = T::kString, .default_text = "fixed",
      .help = "fixed | step:every=N,factor=F | exp:decay=D | inv-staleness | dutta:c=C | delay-adaptive:c=C[,L=L] (with L: lr 1/(4LC), --lr unused)",
      .group = kServerGroup}));
  t.push_back(field<&O::delay>({.name = "delay", .type = T::kString, .default_text = "none",
      .help = "Straggler delay spec, e.g. 'exp:mean=10ms' (docs/stragglers.md)", .group = kServerGroup}));
  t.push_back({.name = "delay-mode", .type = T::kChoice, .default_text = "pad",
      .help = "pad: a minibatch takes max(compute, X); add: compute + X", .group = kServerGroup,
      .choices = {"pad", "add"},
      .set = [](O& o, const OptionValue& v) {
        o.delay_mode = word(v) == "pad" ? DelayMode::kPad : DelayMode::kAdd;
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(to_string(o.delay_mode))};
      }});
  t.push_back(field<&O::adasync_every_s>({.name = "adasync-every", .type = T::kDuration,
      .default_text = "0s",
      .help = "AdaSync for k-sync/k-async: every T raise K to min(P, ceil(K0 sqrt(F0/Ft))), "
              "K0 = --k (0s = off)",
      .group = kServerGroup}));
  t.push_back(field<&O::seed>({.name = "seed", .type = T::kUnsigned, .default_text = "1",
      .help = "Seed for initialisation, sampling and delays", .group = kServerGroup}));

  t.push_back(field<&O::iterations>({.name = "iterations", .type = T::kUnsigned,
      .default_text = "0", .help = "Number of server updates (0 = no limit)", .group = kBudgetGroup}));
  t.push_back(field<&O::time_s>({.name = "time", .type = T::kDuration, .default_text = "0s",
      .help = "Training time, e.g. 60s (virtual seconds with --clock virtual; 0s = no limit)",
      .group = kBudgetGroup}));
  t.push_back(field<&O::target_error>({.name = "target-error", .type = T::kNumber,
      .default_text = "0",
      .help = "Stop once the test error is at most this, e.g. 0.08 (needs --iterations or --time "
              "as a cap; 0 = off)",
      .group = kBudgetGroup}));

  t.push_back(field<&O::fail>({.name = "fail", .type = T::kString, .default_text = "none",
      .help = "Workers made to fail: wN:crash@TIME or wN:hang@TIME (--engine mpi also a whole "
              "rank: rankN:crash@TIME or rankN:hang@TIME), ';'-separated, e.g. "
              "'w3:crash@2s;w5:hang@4s'",
      .group = kFailureGroup}));
  t.push_back(field<&O::worker_timeout_s>({.name = "worker-timeout", .type = T::kDuration,
      .default_text = "0s",
      .help = "A worker whose minibatch is this long past its end without a gradient has hung "
              "(0s = max(10s, 20 x the delay's 0.999 quantile))",
      .group = kFailureGroup}));
  t.push_back(field<&O::stall_timeout_s>({.name = "stall-timeout", .type = T::kDuration,
      .default_text = "0s",
      .help = "Real clock: no update for this long ends the run, naming who is stuck "
              "(0s = max(60s, 2 x the worker timeout))",
      .group = kFailureGroup}));

  t.push_back({.name = "clock", .type = T::kChoice, .default_text = "real",
      .help = "real: threads and sleeps; virtual: discrete-event clock, repeatable",
      .group = kEngineGroup, .choices = {"real", "virtual"},
      .set = [](O& o, const OptionValue& v) {
        o.clock = word(v) == "real" ? ClockKind::kReal : ClockKind::kVirtual;
      },
      // A --sequential run has no clock of its own; the reader of summary.json learns it here.
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(o.sequential ? "sequential" : to_string(o.clock))};
      }});
  t.push_back({.name = "server", .type = T::kChoice, .default_text = "inline",
      .help = "Real clock: where the server runs: inline (the delivering worker runs the server "
              "step; fastest on few cores), thread (a dedicated server thread), hogwild (async "
              "only: lock-free in-place updates)",
      .group = kEngineGroup, .choices = {"inline", "thread", "hogwild"},
      .set = [](O& o, const OptionValue& v) {
        o.server = word(v) == "inline"   ? ServerPlacement::kInline
                   : word(v) == "thread" ? ServerPlacement::kThread
                                         : ServerPlacement::kHogwild;
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(to_string(o.server))};
      }});
  t.push_back({.name = "engine", .type = T::kChoice, .default_text = "thread",
      .help = "Real clock: thread (workers are threads of this process) or mpi (workers are "
              "the ranks 1.. of an mpirun, rank 0 the server; docs/distributed.md)",
      .group = kEngineGroup, .choices = {"thread", "mpi"},
      .set = [](O& o, const OptionValue& v) {
        o.engine = word(v) == "thread" ? EngineKind::kThread : EngineKind::kMpi;
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(to_string(o.engine))};
      }});
  t.push_back(field<&O::compute_time_s>({.name = "compute-time", .type = T::kDuration,
      .default_text = "0s", .help = "Virtual clock: the time one gradient's compute takes",
      .group = kEngineGroup}));
  // The machine's options are left out of run.toml and an MPI rank's flags while unset.
  t.push_back({.name = "cores", .type = T::kInteger,
      .help = "Virtual clock: the cores the workers' compute and the server share "
              "(docs/machine.md); default: a core each",
      .group = kEngineGroup, .min = 1, .max = 1 << 20,
      .set = [](O& o, const OptionValue& v) { o.cores = static_cast<int>(std::get<std::int64_t>(v)); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (o.cores == 0) return std::nullopt;
        return OptionValue{static_cast<std::int64_t>(o.cores)};
      }});
  t.push_back({.name = "server-time", .type = T::kString,
      .help = "Virtual clock: the server's time per gradient and per update: "
              "DURATION, gradient=D,update=D, or auto (measured for the model)",
      .group = kEngineGroup,
      .set = [](O& o, const OptionValue& v) { o.server_time = word(v); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (o.server_time.empty()) return std::nullopt;
        return OptionValue{o.server_time};
      }});
  t.push_back(field<&O::link>({.name = "link", .type = T::kString, .default_text = "none",
      .help = "Virtual clock: each worker's link to the server, e.g. 'latency=1ms,bandwidth=1Gbit' "
              "(medium=memory: one host, its copies are CPU work)",
      .group = kEngineGroup}));
  t.push_back(field<&O::shards>({.name = "shards", .type = T::kInteger, .default_text = "1",
      .help = "Virtual clock: server shards S, each holding 1/S of the parameters",
      .group = kEngineGroup, .min = 1, .max = 4096}));
  t.push_back({.name = "machine", .type = T::kString,
      .help = "Virtual clock: a machine file from `stalesgd calibrate` (the flags above override it)",
      .group = kEngineGroup,
      .set = [](O& o, const OptionValue& v) { o.machine = word(v); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (o.machine.empty()) return std::nullopt;
        return OptionValue{o.machine.string()};
      }});
  t.push_back(field<&O::sequential>({.name = "sequential", .type = T::kSwitch,
      .default_text = "false", .help = "Plain SGD in one thread without a server (the P = 1 reference)",
      .group = kEngineGroup, .toml = false}));
  t.push_back(field<&O::record_drift>({.name = "record-drift", .type = T::kSwitch,
      .default_text = "false",
      .help = "Record per update the squared distance of its stale gradients' parameters from "
              "the current ones and its gradients' squared norm (updates.csv drift_sq, grad_sq: "
              "the error theory's gamma, measured); two passes over the parameters per gradient",
      .group = kEngineGroup}));
  t.push_back(field<&O::eval_every_s>({.name = "eval-every", .type = T::kDuration,
      .default_text = "0.5s", .help = "Time between parameter snapshots for evaluation",
      .group = kEngineGroup}));
  t.push_back(field<&O::eval_test_samples>({.name = "eval-samples", .type = T::kUnsigned,
      .default_text = "0", .help = "Test samples per evaluation (0 = all)", .group = kEngineGroup}));
  t.push_back({.name = "eval-sizing", .type = T::kChoice, .default_text = "auto",
      .help = "Real clock: auto scores intermediate snapshots, once evaluation falls behind "
              "training, on the first samples that fit its share of --eval-every (the final one "
              "on all); full: every snapshot on all of them",
      .group = kEngineGroup,
      .choices = {"auto", "full"},
      .set = [](O& o, const OptionValue& v) { o.eval_sizing = word(v) == "auto"; },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(o.eval_sizing ? "auto" : "full")};
      }});
  t.push_back(field<&O::holdout>({.name = "holdout", .type = T::kUnsigned, .default_text = "0",
      .help = "Hold out the last N training samples: never trained on, evaluated at every "
              "snapshot (evals.csv val_loss, val_error) to choose a learning rate without the "
              "test set",
      .group = kEngineGroup}));
  // Where this invocation writes and what it shows: not part of what is trained.
  t.push_back(field<&O::out_dir>({.name = "out", .type = T::kString,
      .help = "Directory for updates.csv, gradients.csv, evals.csv, workers.csv, summary.json",
      .group = kEngineGroup, .toml = false, .json = false}));
  t.push_back(field<&O::save_model>({.name = "save-model", .type = T::kString,
      .help = "Write the final parameters to this .npy file (float32, the model's flat vector; "
              "stalesgd eval scores it)",
      .group = kEngineGroup, .toml = false, .json = false}));
  t.push_back(field<&O::checkpoint_every_s>({.name = "checkpoint-every", .type = T::kDuration,
      .default_text = "0s",
      .help = "With --out: write DIR/checkpoint.bin this often (run clock), so --resume DIR can "
              "continue the run; 0s = never",
      .group = kEngineGroup, .toml = false}));
  // Recorded, so that --resume, a race's jobs and every MPI rank load the same plug-ins; made
  // absolute, as they may run elsewhere (config/plugins.hpp).
  t.push_back({.name = "plugin", .type = T::kString,
      .help = "Load the rules, models and delay families of these plug-ins (.so files built "
              "with STALESGD_PLUGIN, colons between several): their names and options join "
              "these",
      .group = kEngineGroup,
      .set = [](O& o, const OptionValue& v) { o.plugin = absolute_plugin_paths(word(v)); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (o.plugin.empty()) return std::nullopt;
        return OptionValue{o.plugin};
      }});
  t.push_back(field<&O::resume_dir>({.name = "resume", .type = T::kString,
      .help = "Continue the run in DIR from its checkpoint, with the flags it was started with",
      .group = kEngineGroup, .toml = false, .json = false}));
  t.push_back(field<&O::force>({.name = "force", .type = T::kSwitch, .default_text = "false",
      .help = "Replace a run already in --out (without it such an --out is refused)",
      .group = kEngineGroup, .toml = false, .json = false}));
  t.push_back({.name = "no-progress", .type = T::kSwitch, .default_text = "false",
      .help = "No progress on stderr (run.log still records it)", .group = kEngineGroup,
      .toml = false, .json = false,
      .set = [](O& o, const OptionValue& v) { o.progress = !std::get<bool>(v); },
      .get = [](const O& o) -> std::optional<OptionValue> { return !o.progress; }});
  t.push_back(field<&O::progress_every_s>({.name = "progress-every", .type = T::kDuration,
      .default_text = "10s",
      .help = "Seconds between progress lines in the log (stderr when it is not a terminal, and "
              "run.log)",
      .group = kEngineGroup, .toml = false, .json = false}));
  // clang-format on
  return t;
}
#pragma GCC diagnostic pop

}  // namespace stalesgd

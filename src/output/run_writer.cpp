// The run's output files and summary.json (the JSON is built here: no JSON in public headers).
#include "stalesgd/output/run_writer.hpp"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <fmt/os.h>

#include <nlohmann/json.hpp>
#include "config/option_table.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

nlohmann::json theory_json(const std::optional<RuntimePrediction>& theory) {
  if (!theory) return nullptr;
  nlohmann::json j;
  j["note"] = "per-minibatch time X only: compute time is not modelled";
  j["seconds_per_iteration"] = theory->seconds_per_iteration;
  j["method"] = to_string(theory->method);
  if (!theory->formula.empty()) j["formula"] = theory->formula;
  if (theory->upper_bound) j["upper_bound"] = *theory->upper_bound;
  if (const auto& mc = theory->monte_carlo) {
    j["monte_carlo"] = {{"seconds_per_iteration", mc->seconds},
                        {"ci95", mc->ci95},
                        {"iterations", mc->iterations},
                        {"mean_staleness", mc->mean_staleness}};
  }
  return j;
}

nlohmann::json run_summary(const ResolvedRun& config, const RunRecord& run,
                           const std::optional<RuntimePrediction>& theory) {
  nlohmann::json j;
  j["config"] = options_to_json(config.options());
  j["model"] = run.model;
  j["num_params"] = run.num_params;
  j["stop_reason"] = to_string(run.stop_reason);
  if (!run.divergence.empty()) j["divergence"] = run.divergence;
  if (!run.stop_message.empty()) j["stop_message"] = run.stop_message;
  j["iterations"] = run.updates.empty() ? 0 : run.updates.back().iteration;
  j["wall_s"] = run.wall_s;
  j["seconds_per_iteration"] = seconds_per_iteration(run);
  const auto st = staleness_stats(run);
  j["staleness"] = {{"mean", st.mean}, {"p95", st.p95}, {"max", st.max}};
  const auto g = gradient_totals(run);
  j["gradients"] = {{"started", g.started},
                    {"computed", g.computed},
                    {"pushed", g.pushed},
                    {"applied", g.applied},
                    {"cancelled", g.cancelled}};
  if (!run.evals.empty()) {
    j["final_test_error"] = run.evals.back().test_error;
    j["final_test_loss"] = run.evals.back().test_loss;
  } else {
    j["final_test_error"] = nullptr;
  }
  j["time_to_target_s"] =
      run.time_to_target_s ? nlohmann::json(*run.time_to_target_s) : nlohmann::json(nullptr);
  j["failures"] = nlohmann::json::array();  // docs/rules.md, "Failed workers"
  for (const auto& w : run.workers) {
    if (w.failed)
      j["failures"].push_back({{"worker", w.worker}, {"at_s", w.failed_at_s}, {"how", w.failure}});
  }
  j["param_buffers"] = run.param_buffers;
  j["theory"] = theory_json(theory);
  return j;
}

// Writes through a temporary file and renames, so a crash never leaves a truncated output.
template <class Fn>
Status write_file(const fs::path& path, Fn&& body) {
  const fs::path tmp = fs::path(path).concat(".tmp");
  {
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
      return Error{fmt::format("cannot write {}; check that --out is writable", path.string())};
    }
    body(f);
    const bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) return Error{fmt::format("error writing {} (disk full?)", path.string())};
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Error{fmt::format("cannot rename {} ({})", tmp.string(), ec.message())};
  return {};
}

}  // namespace

Status write_run_outputs(const fs::path& dir, const ResolvedRun& config, const RunRecord& run,
                         const std::optional<RuntimePrediction>& theory) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Error{fmt::format("cannot create output dir {} ({}); pass a writable --out",
                             dir.string(), ec.message())};
  }
  Status s = write_file(dir / "updates.csv", [&](std::FILE* f) {
    fmt::print(f, "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss\n");
    for (const auto& u : run.updates) {
      fmt::print(f, "{},{:.6f},{},{:.4f},{},{:.6g},{:.6g}\n", u.iteration, u.wall_s, u.n_grads,
                 u.mean_staleness, u.max_staleness, u.lr, u.minibatch_loss);
    }
  });
  if (!s) return s;
  s = write_file(dir / "gradients.csv", [&](std::FILE* f) {
    fmt::print(f, "iteration,worker,computed_on_version,staleness\n");
    for (const auto& g : run.gradients) {
      fmt::print(f, "{},{},{},{}\n", g.iteration, g.worker, g.computed_on, g.staleness);
    }
  });
  if (!s) return s;
  s = write_file(dir / "evals.csv", [&](std::FILE* f) {
    fmt::print(f, "wall_s,iteration,train_loss,test_loss,test_error\n");
    for (const auto& e : run.evals) {
      fmt::print(f, "{:.6f},{},{:.6g},{:.6g},{:.6g}\n", e.wall_s, e.iteration, e.train_loss,
                 e.test_loss, e.test_error);
    }
  });
  if (!s) return s;
  s = write_file(dir / "workers.csv", [&](std::FILE* f) {
    fmt::print(f,
               "worker,started,computed,pushed,applied,cancelled,busy_s,idle_s,failed,"
               "failed_at_s,failure\n");
    for (const auto& w : run.workers) {
      fmt::print(f, "{},{},{},{},{},{},{:.6f},{:.6f},{},{:.6f},{}\n", w.worker, w.started,
                 w.computed, w.pushed, w.applied, w.cancelled, w.busy_s, w.idle_s, w.failed ? 1 : 0,
                 w.failed_at_s, w.failure);
    }
  });
  if (!s) return s;
  return write_file(dir / "summary.json", [&](std::FILE* f) {
    fmt::print(f, "{}\n", run_summary(config, run, theory).dump(2));
  });
}

}  // namespace stalesgd

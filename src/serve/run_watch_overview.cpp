// RunWatch::overview(): a run's entry of /api/runs, from its journals, summary.json, workers.csv
// and options (docs/serve.md, "Endpoints").
#include <algorithm>
#include <cmath>

#include "serve/run_watch.hpp"

namespace stalesgd::serve {

namespace {

// A value of summary.json as JSON, null when absent.
nlohmann::json summary_value(const std::optional<nlohmann::json>& s,
                             std::initializer_list<const char*> keys) {
  if (!s) return nullptr;
  const auto* v = json_at(*s, keys);
  return v ? *v : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json RunWatch::overview() const {
  nlohmann::json j;
  j["id"] = entry_.id;
  j["label"] = entry_.label;
  j["group"] = entry_.group;
  j["race"] = entry_.race;
  for (const char* key : {"rule", "k", "workers", "seed", "clock", "delay", "model"}) {
    const auto v = setting(key);
    const double n = v ? csv_number(*v) : std::nan("");
    j[key] = std::isfinite(n) && std::string(key) != "rule" ? nlohmann::json(n)
             : v && !v->empty()                             ? nlohmann::json(*v)
                                                            : nlohmann::json(nullptr);
  }
  const std::string st = status();
  j["status"] = st;
  j["started"] = entry_.pending ? false : started();
  j["stop_reason"] = summary_value(summary_, {"stop_reason"});
  nlohmann::json message = summary_value(summary_, {"stop_message"});
  if (message.is_null()) message = summary_value(summary_, {"divergence"});
  if (message.is_null()) message = summary_value(summary_, {"error"});
  const auto refused = unreadable();
  if (message.is_null() && !refused.empty()) message = refused.front();
  if (st == "missing") {
    message =
        "runs.csv names this run, but it has no folder and its race is not running: the "
        "race stopped before it, or the folder was deleted";
  }
  j["message"] = message;
  j["unreadable"] = refused;
  j["rows"] = {
      {"updates", updates_.rows()}, {"evals", evals_.rows()}, {"gradients", gradients_.rows()}};
  const auto from_summary = [&](std::initializer_list<const char*> keys, double fallback) {
    const auto v = summary_value(summary_, keys);
    return v.is_number() ? v : json_number(fallback);
  };
  j["iterations"] = from_summary({"iterations"}, stats_.last_iteration);
  j["wall_s"] = from_summary({"wall_s"}, stats_.last_update_s);
  j["seconds_per_iteration"] = from_summary(
      {"seconds_per_iteration"},
      stats_.last_iteration > 0 ? stats_.last_update_s / stats_.last_iteration : std::nan(""));
  const auto predicted = summary_value(summary_, {"theory", "seconds_per_iteration"});
  const double csv_predicted =
      csv_number(setting("predicted_seconds_per_iteration").value_or(std::string()));
  // summary.json's theory; else results.csv's; else the theory for the options the run was
  // started with (the same prediction, before the run has written it).
  if (predicted.is_number()) {
    j["predicted"] = {{"seconds_per_iteration", predicted},
                      {"method", summary_value(summary_, {"theory", "method"})},
                      {"formula", summary_value(summary_, {"theory", "formula"})},
                      {"source", "summary.json"}};
  } else if (std::isfinite(csv_predicted)) {
    j["predicted"] = {{"seconds_per_iteration", csv_predicted},
                      {"method", setting("predicted_method").value_or("")},
                      {"formula", nullptr},
                      {"source", "results.csv"}};
  } else if (early_prediction_ && !summary_) {
    j["predicted"] = *early_prediction_;
    j["predicted"]["source"] = "options";
  } else {
    j["predicted"] = nullptr;
  }
  j["test_error"] = stats_.test_error >= 0 ? json_number(stats_.test_error) : nullptr;
  j["test_loss"] = stats_.test_loss >= 0 ? json_number(stats_.test_loss) : nullptr;
  j["best_test_error"] =
      stats_.best_test_error >= 0 ? json_number(stats_.best_test_error) : nullptr;
  j["final_test_error"] = summary_value(summary_, {"final_test_error"});
  const auto p95 = stats_.staleness_quantile(0.95);
  j["staleness"] = {
      {"mean",
       from_summary({"staleness", "mean"}, stats_.staleness_weight > 0
                                               ? stats_.staleness_sum / stats_.staleness_weight
                                               : std::nan(""))},
      {"p95", from_summary({"staleness", "p95"}, p95.value_or(std::nan("")))},
      {"max", from_summary({"staleness", "max"},
                           stats_.staleness_weight > 0 ? stats_.max_staleness : std::nan(""))}};
  // Cancelled work is known when the run ends (workers.csv, summary.json).
  nlohmann::json started = summary_value(summary_, {"gradients", "started"});
  nlohmann::json cancelled = summary_value(summary_, {"gradients", "cancelled"});
  if (workers_ && !started.is_number()) started = workers_->started;
  if (workers_ && !cancelled.is_number()) cancelled = workers_->cancelled;
  j["gradients"] = {{"applied", stats_.gradients}, {"started", started}, {"cancelled", cancelled}};
  j["cancelled_fraction"] =
      started.is_number() && cancelled.is_number() && started.get<double>() > 0
          ? nlohmann::json(cancelled.get<double>() / started.get<double>())
          : nlohmann::json(nullptr);
  j["idle_fraction"] =
      workers_ && workers_->busy_s + workers_->idle_s > 0
          ? nlohmann::json(workers_->idle_s / (workers_->busy_s + workers_->idle_s))
          : nlohmann::json(nullptr);
  const Budget b = budget();
  j["budget"] = {{"time_s", b.time_s > 0 ? nlohmann::json(b.time_s) : nullptr},
                 {"iterations", b.iterations > 0 ? nlohmann::json(b.iterations) : nullptr},
                 {"target_error", b.target_error > 0 ? nlohmann::json(b.target_error) : nullptr}};
  nlohmann::json ttt = summary_value(summary_, {"time_to_target_s"});
  if (!summary_ && stats_.reached_target_s) ttt = *stats_.reached_target_s;
  j["time_to_target_s"] = ttt;
  const auto p = progress();
  j["progress"] = p ? nlohmann::json(*p) : nlohmann::json(nullptr);
  nlohmann::json eta = nullptr;
  if (st == "running" && p && first_progress_ && last_progress_) {
    const auto [t0, p0] = *first_progress_;
    const auto [t1, p1] = *last_progress_;
    if (t1 - t0 > 0.5 && p1 > p0) eta = (1.0 - p1) * (t1 - t0) / (p1 - p0);
  } else if (p && *p >= 1.0) {
    eta = 0.0;
  }
  j["eta_s"] = eta;
  return j;
}

}  // namespace stalesgd::serve

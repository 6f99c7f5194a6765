// One run followed while it goes: status, progress and ETA, and its rows for the page.
#include "serve/run_watch.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "serve/run_options.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd::serve {

namespace {

const std::vector<std::string> kUpdateSeries{"iteration",      "wall_s",        "n_grads",
                                             "mean_staleness", "max_staleness", "minibatch_loss"};
const std::vector<std::string> kEvalSeries{"wall_s", "iteration", "test_error", "test_loss",
                                           "train_loss"};

// A budget's text as seconds or a count: a number (summary.json, runs.csv's counts) or a
// duration (runs.csv's "20s"); 0 for none, empty or unreadable.
double budget_value(const std::optional<std::string>& text) {
  if (!text || text->empty()) return 0.0;
  if (const double v = csv_number(*text); std::isfinite(v)) return std::max(v, 0.0);
  const auto d = parse_duration(*text);
  return d ? *d : 0.0;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

const nlohmann::json* find_path(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object() || !at->contains(k)) return nullptr;
    at = &(*at)[k];
  }
  return at;
}

// A value of summary.json as JSON, null when absent.
nlohmann::json summary_value(const std::optional<nlohmann::json>& s,
                             std::initializer_list<const char*> keys) {
  if (!s) return nullptr;
  const auto* v = find_path(*s, keys);
  return v ? *v : nlohmann::json(nullptr);
}

}  // namespace

SeriesCursor SeriesCursor::parse(const std::string& text) {
  SeriesCursor c;
  std::istringstream in(text);
  char comma1 = 0, comma2 = 0;
  if (!(in >> c.updates >> comma1 >> c.evals >> comma2 >> c.generation) || comma1 != ',' ||
      comma2 != ',') {
    return {};
  }
  return c;
}

std::string SeriesCursor::text() const {
  return std::to_string(updates) + "," + std::to_string(evals) + "," + std::to_string(generation);
}

RunWatch::RunWatch(RunEntry entry)
    : entry_(std::move(entry)),
      updates_(entry_.dir / "updates.csv"),
      evals_(entry_.dir / "evals.csv"),
      gradients_(entry_.dir / "gradients.csv") {}

void RunWatch::set_entry(RunEntry entry) {
  const bool moved = entry.dir != entry_.dir;
  entry_ = std::move(entry);
  if (moved) restart_stats();
}

std::uint64_t RunWatch::generation() const {
  return stats_generation_;
}

void RunWatch::restart_stats() {
  ++stats_generation_;
  stats_ = {};
  update_columns_ = {};
  eval_columns_ = {};
  staleness_column_ = -1;
  updates_ = CsvJournal(entry_.dir / "updates.csv");
  evals_ = CsvJournal(entry_.dir / "evals.csv");
  gradients_ = CsvJournal(entry_.dir / "gradients.csv");
  first_progress_.reset();
}

void RunWatch::refresh(double now_s) {
  if (entry_.pending) return;
  if (const auto stamp = FileStamp::of(entry_.dir / "summary.json"); stamp != summary_stamp_) {
    summary_stamp_ = stamp;
    summary_refused_.clear();
    summary_ =
        stamp.exists ? read_summary(entry_.dir / "summary.json", &summary_refused_) : std::nullopt;
    // Written with "running" at the start (docs/outputs.md): nothing in it yet that the
    // journals do not say but the run's options, and whether the run goes on is the folder
    // lock's to tell.
    if (summary_ && summary_->value("status", "") == std::string("running")) {
      if (const auto it = summary_->find("config"); it != summary_->end() && it->is_object()) {
        started_config_ = *it;
      }
      summary_.reset();
    }
  }
  if (const auto stamp = FileStamp::of(entry_.dir / "workers.csv"); stamp != workers_stamp_) {
    workers_stamp_ = stamp;
    workers_refused_.clear();
    workers_ = stamp.exists ? read_worker_totals(entry_.dir / "workers.csv", &workers_refused_)
                            : std::nullopt;
  }
  if (!summary_ && !early_prediction_tried_ && (!entry_.settings.empty() || started_config_)) {
    // Once: the options do not change while the run goes.
    early_prediction_tried_ = true;
    early_prediction_ = entry_.settings.empty() ? predict_from_config(*started_config_)
                                                : predict_from_settings(entry_.settings);
  }
  lock_alive_ = summary_ ? -1 : lock_holder_alive(entry_.dir);
  const double target = budget().target_error;
  const auto read_all = [&] {
    updates_.refresh([&](std::span<const double> row) {
      if (update_columns_.iteration < 0) {
        update_columns_ = {updates_.column("iteration"), updates_.column("wall_s"),
                           updates_.column("n_grads"), updates_.column("mean_staleness"),
                           updates_.column("max_staleness")};
      }
      stats_.on_update(update_columns_, row);
    });
    evals_.refresh([&](std::span<const double> row) {
      if (eval_columns_.wall_s < 0) {
        eval_columns_ = {evals_.column("wall_s"), evals_.column("iteration"),
                         evals_.column("test_error"), evals_.column("test_loss")};
      }
      stats_.on_eval(eval_columns_, row, target);
    });
    gradients_.refresh([&](std::span<const double> row) {
      if (staleness_column_ < 0) staleness_column_ = gradients_.column("staleness");
      stats_.on_gradient(staleness_column_, row);
    });
  };
  const auto before = updates_.generation() + evals_.generation() + gradients_.generation();
  read_all();
  if (updates_.generation() + evals_.generation() + gradients_.generation() != before) {
    // A file was replaced or cut back: everything derived from it starts again.
    restart_stats();
    read_all();
  }
  if (status() == "running") {
    if (const auto p = progress()) {
      if (!first_progress_) first_progress_ = {now_s, *p};
      last_progress_ = {now_s, *p};
    }
  }
}

std::optional<std::string> RunWatch::setting(const std::string& key) const {
  const auto from_config = [&](const nlohmann::json& config) -> std::optional<std::string> {
    const auto it = config.find(key);
    if (it == config.end()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    if (it->is_null()) return std::string();
    return std::nullopt;
  };
  if (const auto* config = summary_ ? find_path(*summary_, {"config"}) : nullptr) {
    if (auto v = from_config(*config)) return v;
  }
  if (const auto it = entry_.settings.find(key); it != entry_.settings.end()) return it->second;
  if (started_config_) return from_config(*started_config_);
  return std::nullopt;
}

RunWatch::Budget RunWatch::budget() const {
  return {budget_value(setting("time")), budget_value(setting("iterations")),
          budget_value(setting("target_error"))};
}

std::string RunWatch::status() const {
  if (entry_.pending) return "pending";
  if (summary_ && summary_->contains("status") && (*summary_)["status"].is_string()) {
    return (*summary_)["status"].get<std::string>();
  }
  // A summary.json that is a FIFO, a device or too large says nothing (regular_file.hpp).
  if (!summary_ && !summary_refused_.empty()) return "unreadable";
  // No final summary.json: running, unless the process that locked the folder is gone.
  return lock_alive_ == 0 ? "stopped" : "running";
}

std::optional<double> RunWatch::progress() const {
  const std::string s = status();
  if (s == "pending") return 0.0;
  if (s == "unreadable") return std::nullopt;
  if (s != "running") return 1.0;
  const Budget b = budget();
  std::optional<double> p;
  const double t = std::max(stats_.last_update_s, std::isfinite(stats_.eval_s) ? stats_.eval_s : 0);
  if (b.time_s > 0.0) p = t / b.time_s;
  if (b.iterations > 0.0) p = std::max(p.value_or(0.0), stats_.last_iteration / b.iterations);
  if (p) p = std::clamp(*p, 0.0, 1.0);
  return p;
}

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
  j["stop_reason"] = summary_value(summary_, {"stop_reason"});
  nlohmann::json message = summary_value(summary_, {"stop_message"});
  if (message.is_null()) message = summary_value(summary_, {"divergence"});
  if (message.is_null()) message = summary_value(summary_, {"error"});
  const auto refused = unreadable();
  if (message.is_null() && !refused.empty()) message = refused.front();
  j["message"] = message;
  j["unreadable"] = refused;
  j["rows"] = {
      {"updates", updates_.rows()}, {"evals", evals_.rows()}, {"gradients", gradients_.rows()}};
  const auto from_summary = [&](std::initializer_list<const char*> keys, double fallback) {
    const auto v = summary_value(summary_, keys);
    return v.is_number() ? v : number_or_null(fallback);
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
  j["test_error"] = stats_.test_error >= 0 ? number_or_null(stats_.test_error) : nullptr;
  j["test_loss"] = stats_.test_loss >= 0 ? number_or_null(stats_.test_loss) : nullptr;
  j["best_test_error"] =
      stats_.best_test_error >= 0 ? number_or_null(stats_.best_test_error) : nullptr;
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

std::vector<std::string> RunWatch::unreadable() const {
  std::vector<std::string> out;
  for (const std::string* why : {&summary_refused_, &workers_refused_, &updates_.refused(),
                                 &evals_.refused(), &gradients_.refused()}) {
    if (!why->empty()) out.push_back(*why);
  }
  return out;
}

nlohmann::json RunWatch::series(const SeriesCursor& since, std::uint64_t limit) const {
  SeriesCursor from = since;
  nlohmann::json j;
  j["id"] = entry_.id;
  j["reset"] = false;
  if (from.generation != generation()) {
    j["reset"] = from.updates > 0 || from.evals > 0;
    from = {0, 0, generation()};
  }
  const auto columns = [](const std::vector<std::string>& names,
                          std::vector<std::vector<double>> values) {
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i = 0; i < names.size(); ++i) {
      nlohmann::json a = nlohmann::json::array();
      for (double v : values[i]) a.push_back(number_or_null(v));
      out[names[i]] = std::move(a);
    }
    return out;
  };
  const auto u = updates_.read(from.updates, limit, kUpdateSeries);
  const auto e = evals_.read(from.evals, limit, kEvalSeries);
  // A column a journal lacks comes back empty: count the rows by the first one it always has.
  const auto u_rows = static_cast<std::uint64_t>(u[0].size());
  const auto e_rows = static_cast<std::uint64_t>(e[0].size());
  j["updates"] = columns(kUpdateSeries, u);
  j["evals"] = columns(kEvalSeries, e);
  j["updates"]["first"] = from.updates;
  j["evals"]["first"] = from.evals;
  const SeriesCursor next{from.updates + u_rows, from.evals + e_rows, generation()};
  j["cursor"] = next.text();
  j["more"] = next.updates < updates_.rows() || next.evals < evals_.rows();
  j["staleness_histogram"] = stats_.staleness_histogram;
  return j;
}

}  // namespace stalesgd::serve

// One run followed while it goes: reading what its files gained, its status and progress
// (its /api/runs entry is run_watch_overview.cpp, its rows for the page run_watch_series.cpp).
#include "serve/run_watch.hpp"

#include <algorithm>
#include <cmath>

#include "serve/run_options.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd::serve {

namespace {

// A budget's text as seconds or a count: a number (summary.json, runs.csv's counts) or a
// duration (runs.csv's "20s"); 0 for none, empty or unreadable.
double budget_value(const std::optional<std::string>& text) {
  if (!text || text->empty()) return 0.0;
  if (const double v = csv_number(*text); std::isfinite(v)) return std::max(v, 0.0);
  const auto d = parse_duration(*text);
  return d ? *d : 0.0;
}

}  // namespace

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
  if (entry_.pending) {
    // The race holds its folder's lock while it runs (docs/reliability.md).
    race_alive_ = lock_holder_alive(entry_.dir.parent_path());
    return;
  }
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
  if (const auto* config = summary_ ? json_at(*summary_, {"config"}) : nullptr) {
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
  // Named by runs.csv, with no folder: to come while its race runs, else it never will (the
  // race stopped before it) or its folder was deleted.
  if (entry_.pending) return race_alive_ == 1 ? "pending" : "missing";
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
  if (s == "pending" || s == "missing") return 0.0;
  if (s == "unreadable") return std::nullopt;
  if (s == "complete") return 1.0;
  // Running, or ended short of its budget (stopped, interrupted, failed, incomplete): the share
  // of the budget it got through, so that a run refused before its first step shows none.
  if (s != "running" && !started()) return 0.0;
  const Budget b = budget();
  std::optional<double> p;
  const double t = std::max(stats_.last_update_s, std::isfinite(stats_.eval_s) ? stats_.eval_s : 0);
  if (b.time_s > 0.0) p = t / b.time_s;
  if (b.iterations > 0.0) p = std::max(p.value_or(0.0), stats_.last_iteration / b.iterations);
  if (p) p = std::clamp(*p, 0.0, 1.0);
  return p;
}

bool RunWatch::started() const {
  const auto iterations = summary_ ? json_at(*summary_, {"iterations"}) : nullptr;
  if (iterations && iterations->is_number()) return iterations->get<double>() > 0;
  return stats_.last_iteration > 0;
}

std::vector<std::string> RunWatch::unreadable() const {
  std::vector<std::string> out;
  for (const std::string* why : {&summary_refused_, &workers_refused_, &updates_.refused(),
                                 &evals_.refused(), &gradients_.refused()}) {
    if (!why->empty()) out.push_back(*why);
  }
  return out;
}

}  // namespace stalesgd::serve

#include "engine/server_core.hpp"
#include "util/state_stream.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>

namespace stalesgd {

ServerCore::ServerCore(RunContext& ctx, ParameterStore& store, RunRecord& run)
    : ctx_(ctx),
      lr_(ctx.run.learning_rate()),
      rule_(ctx.run.make_rule()),
      protocol_(*rule_, ctx.run.workers()),
      store_(store),
      run_(run),
      acc_(ctx.model->num_params(), ctx.model->num_state()),
      applied_(static_cast<std::size_t>(ctx.run.workers()), 0),
      failures_(ctx.run.workers(), ctx.options.worker_timeout_s),
      k0_(rule_->k()),
      next_adapt_s_(ctx.options.adasync_every_s) {
  round_.reserve(static_cast<std::size_t>(ctx.run.workers()));
  if (rule_->averages_per_worker()) {
    means_.emplace(ctx.run.workers(), ctx.model->num_params(), ctx.model->num_state());
  }
  rule_->use_delays(ctx.run.delays());
}

void ServerCore::count(int worker, WorkerRecord& rec) const {
  rec.worker = worker;
  rec.started = protocol_.started(worker);
  rec.pushed = protocol_.pushed(worker);
  rec.cancelled = protocol_.cancelled(worker);
  rec.applied = applied_[static_cast<std::size_t>(worker)];
  failures_.fill(rec);
}

Result<ServerCore::Outcome> ServerCore::on_gradient(double now_s, int worker,
                                                    std::uint64_t computed_on, float loss,
                                                    double duration_s, std::span<const float> grad,
                                                    std::span<const float> computed_params,
                                                    int attempts, bool abandoned) {
  const std::uint64_t current = store_.version();
  Outcome out;
  out.step = protocol_.on_arrival(worker, computed_on, current, attempts, abandoned);
  out.version = current;
  const Decision& decision = out.step.decision;
  if (!decision.accept) {
    if (decision.apply) apply_round(now_s, current, out);  // the round ends without this push
    return out;
  }
  const std::uint64_t staleness = current - computed_on;
  LrContext lr_ctx{current, staleness, 0.0};
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double drift_sq = kNaN, grad_sq = kNaN;
  // Over the trained parameters only: a model's state (its buffers) is not descended on.
  const auto n = static_cast<Eigen::Index>(grad.size() - ctx_.model->num_state());
  if ((lr_.needs_distance() || ctx_.options.record_drift) && staleness > 0) {
    Eigen::Map<const Eigen::VectorXf> w(store_.current().data(), n);
    Eigen::Map<const Eigen::VectorXf> w_tau(computed_params.data(), n);
    lr_ctx.distance_sq = static_cast<double>((w - w_tau).squaredNorm());
    if (ctx_.options.record_drift) drift_sq = lr_ctx.distance_sq;
  }
  if (ctx_.options.record_drift) {
    grad_sq = static_cast<double>(Eigen::Map<const Eigen::VectorXf>(grad.data(), n).squaredNorm());
  }
  const double lr = lr_.rate(lr_ctx);
  if (diverged(loss, ctx_.data.num_classes)) return divergence_error(current + 1, loss, worker, lr);
  round_.push_back({worker, computed_on, lr, loss, duration_s, drift_sq, grad_sq});
  if (means_) means_->add(worker, grad, static_cast<float>(lr));
  if (!decision.apply) {
    if (!means_) acc_.add(grad, static_cast<float>(lr));  // the worker reuses `grad` after
    return out;
  }
  std::span<float> next = store_.begin_update();
  if (means_) {
    means_->apply(store_.current(), next);
  } else {
    acc_.add_and_apply(grad, static_cast<float>(lr), store_.current(), next,
                       rule_->update_divisor(acc_.count() + 1));
  }
  store_.publish();
  out.version = store_.version();
  record_update(now_s, current, out.version);
  return out;
}

Result<ServerCore::Outcome> ServerCore::retire(double now_s, int worker, FailureKind kind) {
  const std::uint64_t current = store_.version();
  failures_.record(worker, now_s, kind);
  const auto r = protocol_.retire(worker, current);
  if (!r.runs_on)
    return Error{failures_.stop_message(ctx_.run.rule(), rule_->k(), protocol_.live())};
  Outcome out;
  out.step = r.step;
  out.version = current;
  if (r.step.decision.apply) apply_round(now_s, current, out);
  return out;
}

void ServerCore::apply_round(double now_s, std::uint64_t current, Outcome& out) {
  std::span<float> next = store_.begin_update();
  if (means_) {
    means_->apply(store_.current(), next);
  } else {
    acc_.apply(store_.current(), next, rule_->update_divisor(acc_.count()));
  }
  store_.publish();
  out.version = store_.version();
  record_update(now_s, current, out.version);
}

void ServerCore::record_update(double now_s, std::uint64_t current, std::uint64_t version) {
  UpdateRecord u;
  u.iteration = version;
  u.wall_s = now_s;
  u.n_grads = static_cast<int>(round_.size());
  double lr_sum = 0.0, loss_sum = 0.0, st_sum = 0.0;
  double drift_sum = 0.0, drift_n = 0.0, grad_sum = 0.0, grad_n = 0.0;
  for (const auto& a : round_) {
    if (!std::isnan(a.drift_sq)) drift_sum += a.drift_sq, drift_n += 1.0;
    if (!std::isnan(a.grad_sq)) grad_sum += a.grad_sq, grad_n += 1.0;
    const std::uint64_t st = current - a.computed_on;
    run_.gradients.push_back({version, a.worker, a.computed_on, st, a.duration_s});
    ++applied_[static_cast<std::size_t>(a.worker)];
    u.max_staleness = std::max(u.max_staleness, st);
    st_sum += static_cast<double>(st);
    lr_sum += a.lr;
    loss_sum += a.loss;
  }
  // A round may keep no gradient (mindflayer): its means are 0, its loss unknown.
  const auto kept = static_cast<double>(round_.size());
  const double n = std::max(1.0, kept);
  u.mean_staleness = st_sum / n;
  u.lr = lr_sum / n;
  u.minibatch_loss = round_.empty() ? std::numeric_limits<double>::quiet_NaN() : loss_sum / n;
  if (drift_n > 0.0) u.drift_sq = drift_sum / drift_n;
  if (grad_n > 0.0) u.grad_sq = grad_sum / grad_n;
  staleness_sum_ += st_sum;
  staleness_count_ += kept;
  run_.updates.push_back(u);
  round_.clear();
  if (ctx_.options.adasync_every_s > 0.0) {
    // F(w_0): the first update's gradients were all computed on w_0, so the mean of their
    // minibatch losses is an unbiased estimate of the training loss at w_0.
    if (initial_loss_ == 0.0) initial_loss_ = loss_sum / n;
    window_loss_sum_ += loss_sum;
    window_loss_count_ += kept;
    adapt_k(now_s);
  }
}

// AdaSync (Dutta et al., journal version): K <- min(P, ceil(K0 sqrt(F(w_0) / F(w_t)))) every
// t0 seconds. F is the training loss; the server estimates F(w_t) by the mean minibatch loss of
// the gradients it applied in the last window (no extra evaluation on the training path), and
// F(w_0) by the first update's. K only rises: a noisy window never undoes synchrony.
void ServerCore::adapt_k(double now_s) {
  if (now_s < next_adapt_s_ || window_loss_count_ == 0.0) return;
  const double f = window_loss_sum_ / window_loss_count_;
  window_loss_sum_ = 0.0;
  window_loss_count_ = 0.0;
  while (next_adapt_s_ <= now_s) next_adapt_s_ += ctx_.options.adasync_every_s;
  if (!(f > 0.0)) return;
  const double target = std::ceil(k0_ * std::sqrt(initial_loss_ / f));
  const int k = static_cast<int>(std::min<double>(protocol_.live(), target));  // failed ones out
  if (k > rule_->k()) rule_->set_k(k);
}

void ServerCore::save(StateWriter& out) const {
  rule_->save(out);
  protocol_.save(out);
  acc_.save(out);
  if (means_) means_->save(out);
  out.tag("server");
  out.u64(round_.size());
  for (const auto& a : round_) {
    out.i64(a.worker);
    out.u64(a.computed_on);
    out.f64(a.lr);
    out.f64(a.loss);
    out.f64(a.duration_s);
    out.f64(a.drift_sq);
    out.f64(a.grad_sq);
  }
  out.values(applied_);
  out.f64(staleness_sum_);
  out.f64(staleness_count_);
  out.f64(next_adapt_s_);
  out.f64(window_loss_sum_);
  out.f64(window_loss_count_);
  out.f64(initial_loss_);
  failures_.save(out);
}

void ServerCore::load(StateReader& in) {
  rule_->load(in);
  protocol_.load(in);
  acc_.load(in);
  if (means_) means_->load(in);
  if (!in.tag("server")) return;
  const std::uint64_t n = in.u64();
  if (n > (std::uint64_t{1} << 24)) {  // rennala's and malenia's rounds may exceed P
    in.fail("a round out of range");
    return;
  }
  round_.clear();
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    Accepted a{};
    const std::int64_t w = in.i64();
    if (w < 0 || w >= static_cast<std::int64_t>(applied_.size())) in.fail("a worker out of range");
    a.worker = static_cast<int>(w);
    a.computed_on = in.u64();
    a.lr = in.f64();
    a.loss = static_cast<float>(in.f64());
    a.duration_s = in.f64();
    a.drift_sq = in.f64();
    a.grad_sq = in.f64();
    round_.push_back(a);
  }
  auto applied = in.values<std::uint64_t>(static_cast<std::int64_t>(applied_.size()));
  if (in.ok()) applied_ = std::move(applied);
  staleness_sum_ = in.f64();
  staleness_count_ = in.f64();
  next_adapt_s_ = in.f64();
  window_loss_sum_ = in.f64();
  window_loss_count_ = in.f64();
  initial_loss_ = in.f64();
  failures_.load(in);
}

void ServerCore::save_server(StateWriter& out) const {
  out.tag("server-parameters");
  out.u64(store_.version());
  out.values(store_.current());
  save(out);
}

void ServerCore::load_server(StateReader& in) {
  if (in.tag("server-parameters")) {
    const std::uint64_t version = in.u64();
    const auto params = in.values<float>(static_cast<std::int64_t>(store_.current().size()));
    if (in.ok()) store_.restore(version, params, 1);
  }
  load(in);
}

void ServerCore::restart() {
  std::vector<int> dropped;
  for (const auto& a : round_) dropped.push_back(a.worker);
  round_.clear();
  acc_.clear();
  if (means_) means_->clear();
  rule_->clear_round();
  protocol_.restart(store_.version(), dropped);
}

}  // namespace stalesgd

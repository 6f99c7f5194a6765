// The JSON of an error prediction; error_prediction_json.hpp.
#include "theory/error_prediction_json.hpp"

namespace stalesgd {

nlohmann::json error_prediction_json(const ErrorPrediction& p) {
  const EstimatedConstants& est = p.constants;
  nlohmann::json out;
  out["constants"] = {{"c", est.k.c},
                      {"L", est.k.L},
                      {"L_w0", est.L_w0},
                      {"L_star", est.L_star},
                      {"sigma2", est.k.sigma2},
                      {"sigma2_batch", est.sigma2_batch},
                      {"f0", est.f0},
                      {"f_star", est.f_star},
                      {"grad_norm_star", est.grad_norm_star},
                      {"train_loss_star", est.train_loss_star},
                      {"l2_term_star", est.l2_term_star},
                      {"train_objective_star", est.train_objective_star}};
  for (const auto& e : p.rules) {
    out["rules"].push_back({{"rule", e.rule.rule},
                            {"k", e.rule.k},
                            {"seconds_per_iteration", e.seconds_per_iteration},
                            {"runtime_method", e.runtime_method},
                            {"mean_staleness", e.mean_staleness},
                            {"p0", e.staleness.p0},
                            {"gamma", e.staleness.gamma},
                            {"gamma_prime", e.bound.gamma_prime},
                            {"floor", e.bound.floor},
                            {"rate", e.bound.rate},
                            {"theorem", e.bound.theorem},
                            {"warnings", e.bound.warnings}});
  }
  for (const auto& b : p.budgets) {
    out["budgets"].push_back({{"seconds", b.seconds}, {"errors", b.errors}, {"best_k", b.best_k}});
  }
  return out;
}

}  // namespace stalesgd

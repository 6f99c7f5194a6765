// RunWatch::series() and its cursor: the rows of a run's journals that a page has not seen yet
// (docs/serve.md, "Endpoints").
#include <sstream>

#include "serve/run_watch.hpp"

namespace stalesgd::serve {

namespace {

const std::vector<std::string> kUpdateSeries{"iteration",      "wall_s",        "n_grads",
                                             "mean_staleness", "max_staleness", "minibatch_loss"};
const std::vector<std::string> kEvalSeries{"wall_s", "iteration", "test_error", "test_loss",
                                           "train_loss"};

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
      for (double v : values[i]) a.push_back(json_number(v));
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

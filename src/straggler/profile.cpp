// StragglerProfile: parses "<base>;<clause>;..." and resolves, once, each worker's timeline of
// (source, factor) segments. Clauses apply in the order written: for worker w at time t,
// start from (base, x1); each clause naming w with time <= t then either replaces the
// distribution (and resets the factor to x1) or sets the factor. So later clauses win.
#include "stalesgd/straggler/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <tuple>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "straggler/profile_state.hpp"
#include "straggler/spec_text.hpp"
#include "straggler/worker_target.hpp"

namespace stalesgd {
namespace {

using detail::DelaySource;
using detail::ProfileState;
using detail::Segment;

constexpr std::string_view kClauseUsage =
    "write <workers>[@<time>]=<spec or x<factor>>, e.g. w3=x5, w0-3=const:50ms or "
    "w2@30s=x10";

// One ';'-separated clause after the base, parsed.
struct Clause {
  int first = 0;  // workers first..last
  int last = 0;
  double at_s = 0;               // from this time on
  std::optional<double> factor;  // "x5", or else
  std::size_t source = 0;        // a distribution (index into sources)
};

bool looks_like_target(std::string_view text) {
  return !text.empty() &&
         (text.front() == '*' || (text.size() >= 2 && text[0] == 'w' &&
                                  std::isdigit(static_cast<unsigned char>(text[1])) != 0));
}

std::string target_text(const Clause& c, int workers) {
  if (c.first == 0 && c.last == workers - 1 && workers > 1) return "*";
  return c.first == c.last ? fmt::format("w{}", c.first) : fmt::format("w{}-{}", c.first, c.last);
}

// Parses one clause into `state` (a new source when it names a distribution).
Result<Clause> parse_clause(std::string_view text, ProfileState& state,
                            const std::filesystem::path& base_dir) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return Error{fmt::format("no '='; {}", kClauseUsage)};
  std::string_view lhs = spec::trim(text.substr(0, eq));
  const std::string_view rhs = spec::trim(text.substr(eq + 1));
  Clause clause;
  if (const auto at = lhs.find('@'); at != std::string_view::npos) {
    auto time = parse_duration(lhs.substr(at + 1));
    if (!time) return Error{fmt::format("after '@': {}", time.error().message)};
    clause.at_s = *time;
    lhs = spec::trim(lhs.substr(0, at));
  }
  auto target = spec::parse_target(lhs, state.workers);
  if (!target) return target.error();
  std::tie(clause.first, clause.last) = *target;
  if (rhs.empty()) {
    return Error{
        "nothing after '='; give a distribution or a factor, e.g. w3=x5 or "
        "w3=const:50ms"};
  }
  if (rhs.front() == 'x') {
    auto factor = spec::parse_number(rhs.substr(1), "factor");
    if (!factor) return Error{fmt::format("{}; write x<number>, e.g. x5", factor.error().message)};
    if (*factor <= 0) {
      return Error{
          fmt::format("factor '{}' must be > 0; write e.g. x5 (5x slower) or x0.5, or "
                      "=none for no delay",
                      spec::printable(rhs))};
    }
    clause.factor = *factor;
    return clause;
  }
  auto dist = straggler::parse_family(rhs, {base_dir, false});
  if (!dist) return dist.error();
  const straggler::TraceTable* trace = straggler::trace_table(**dist);
  state.sources.push_back({std::shared_ptr<const Distribution>(std::move(*dist)), trace});
  clause.source = state.sources.size() - 1;
  return clause;
}

// Worker w's segments: one per distinct clause time, merged when nothing changes.
std::vector<Segment> resolve_timeline(int w, const std::vector<Clause>& clauses) {
  std::vector<double> times{0.0};
  for (const Clause& c : clauses) {
    if (c.first <= w && w <= c.last) times.push_back(c.at_s);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<Segment> out;
  for (const double t : times) {
    Segment s{t, 0, 1.0};
    for (const Clause& c : clauses) {
      if (c.first > w || w > c.last || c.at_s > t) continue;
      if (c.factor) {
        s.factor = *c.factor;
      } else {
        s.source = c.source;
        s.factor = 1.0;
      }
    }
    if (out.empty() || out.back().source != s.source || out.back().factor != s.factor) {
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace

StragglerProfile::StragglerProfile(std::shared_ptr<const detail::ProfileState> state)
    : state_(std::move(state)) {}

Result<StragglerProfile> StragglerProfile::parse(std::string_view spec_text, int workers,
                                                 const std::filesystem::path& base_dir) {
  const std::string_view text = spec::trim(spec_text);
  if (text.empty()) {
    return Error{
        "delay spec is empty; write a distribution, e.g. exp:mean=20ms, or none for no delay"};
  }
  const auto fail = [&](const std::string& what) {
    return Error{fmt::format("delay spec '{}': {}", spec::printable(text), what)};
  };
  if (workers < 1) return fail(fmt::format("the run has {} workers; use at least 1", workers));

  const auto pieces = spec::split(text, ';');
  const std::string_view base = spec::trim(pieces.front());
  if (base.empty() || looks_like_target(base)) {
    return fail(
        "start with the distribution every worker uses, then the overrides, "
        "e.g. exp:mean=10ms;w3=x5");
  }
  auto state = std::make_shared<ProfileState>();
  state->workers = workers;
  auto base_dist = straggler::parse_family(base, {base_dir, false});
  if (!base_dist) return fail(base_dist.error().message);
  const straggler::TraceTable* base_trace = straggler::trace_table(**base_dist);
  state->sources.push_back(
      {std::shared_ptr<const Distribution>(std::move(*base_dist)), base_trace});
  state->description = state->sources.front().dist->describe();

  std::vector<Clause> clauses;
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    const std::string_view piece = spec::trim(pieces[i]);
    if (piece.empty()) return fail("empty clause (an extra ';'); remove it");
    auto clause = parse_clause(piece, *state, base_dir);
    if (!clause) {
      return fail(fmt::format("clause '{}': {}", spec::printable(piece), clause.error().message));
    }
    state->description += fmt::format(
        ";{}{}={}", target_text(*clause, workers),
        clause->at_s > 0 ? fmt::format("@{}", format_duration(clause->at_s)) : std::string(),
        clause->factor ? fmt::format("x{}", spec::format_number(*clause->factor))
                       : state->sources[clause->source].dist->describe());
    clauses.push_back(*clause);
  }

  state->timeline.reserve(static_cast<std::size_t>(workers));
  bool iid = base_trace == nullptr;
  for (int w = 0; w < workers; ++w) {
    state->timeline.push_back(resolve_timeline(w, clauses));
    const auto& t = state->timeline.back();
    // An override with the base's own spec changes nothing, so it keeps the profile i.i.d.
    iid = iid && t.size() == 1 && t.front().factor == 1.0 &&
          state->sources[t.front().source].dist->describe() ==
              state->sources.front().dist->describe();
  }
  if (iid) state->iid = state->sources.front().dist.get();
  return StragglerProfile(std::move(state));
}

int StragglerProfile::workers() const {
  return state_->workers;
}

const Distribution* StragglerProfile::iid() const {
  return state_->draws_per_job == 1 ? state_->iid : nullptr;
}

StragglerProfile StragglerProfile::with_draws_per_job(int draws) const {
  auto state = std::make_shared<detail::ProfileState>(*state_);
  state->draws_per_job = std::max(1, draws);
  return StragglerProfile(std::move(state));
}

int StragglerProfile::draws_per_job() const {
  return state_->draws_per_job;
}

std::optional<std::vector<double>> StragglerProfile::fixed_times() const {
  std::vector<double> times;
  for (const auto& timeline : state_->timeline) {
    if (timeline.size() != 1) return std::nullopt;
    const auto& source = state_->sources[timeline[0].source];
    const double lo = source.dist->quantile(0.0);
    if (source.trace != nullptr || !std::isfinite(lo) || source.dist->quantile(1.0) != lo) {
      return std::nullopt;
    }
    times.push_back(lo * timeline[0].factor * state_->draws_per_job);
  }
  return times;
}

double StragglerProfile::quantile_bound(double p) const {
  double bound = 0.0;
  for (const auto& timeline : state_->timeline) {
    for (const Segment& s : timeline) {
      bound = std::max(bound, s.factor * state_->sources[s.source].dist->quantile(p));
    }
  }
  return bound * state_->draws_per_job;
}

std::optional<double> StragglerProfile::chance_within(int worker, double limit_s) const {
  if (worker < 0 || worker >= state_->workers || state_->draws_per_job != 1) return std::nullopt;
  const auto& timeline = state_->timeline[static_cast<std::size_t>(worker)];
  if (timeline.size() != 1) return std::nullopt;
  const Segment& s = timeline.front();
  const DelaySource& source = state_->sources[s.source];
  if (source.trace != nullptr) return std::nullopt;
  if (!(s.factor > 0.0)) return 1.0;  // "x0": every delay is 0
  return source.dist->cdf(limit_s / s.factor);
}

std::string StragglerProfile::describe() const {
  return state_->description;
}

}  // namespace stalesgd

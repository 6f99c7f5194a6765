// The --fail grammar (see failure_plan.hpp; docs/cli.md, docs/rules.md "Failed workers").
#include "stalesgd/straggler/failure_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/spec_text.hpp"

namespace stalesgd {
namespace {

constexpr std::string_view kUsage =
    "write wN:crash@TIME or wN:hang@TIME (with --engine mpi also rankN:crash@TIME or "
    "rankN:hang@TIME), separated by ';', e.g. 'w3:crash@2s;w5:hang@4s'";

Error item_error(std::string_view item, std::string_view problem) {
  return Error{fmt::format("--fail '{}': {}", spec::printable(item), problem)};
}

}  // namespace

const char* to_string(FailureKind kind) {
  return kind == FailureKind::kCrash ? "crash" : "hang";
}

const PlannedFailure* FailurePlan::of(int worker) const {
  for (const auto& f : failures) {
    if (f.worker == worker) return &f;
  }
  return nullptr;
}

const PlannedRankFailure* FailurePlan::of_rank(int rank) const {
  for (const auto& f : ranks) {
    if (f.rank == rank) return &f;
  }
  return nullptr;
}

std::string FailurePlan::describe() const {
  if (empty()) return "none";
  std::string out;
  for (const auto& f : failures) {
    if (!out.empty()) out += ';';
    out += fmt::format("w{}:{}@{}", f.worker, to_string(f.kind), format_duration(f.at_s));
  }
  for (const auto& f : ranks) {
    if (!out.empty()) out += ';';
    out += fmt::format("rank{}:{}@{}", f.rank, to_string(f.kind), format_duration(f.at_s));
  }
  return out;
}

Result<FailurePlan> parse_failure_plan(std::string_view spec_text, int workers, int ranks) {
  FailurePlan plan;
  const std::string_view whole = spec::trim(spec_text);
  if (whole.empty() || whole == "none") return plan;
  for (const std::string_view raw : spec::split(whole, ';')) {
    const std::string_view item = spec::trim(raw);
    if (item.empty()) return item_error(whole, fmt::format("empty item; {}", kUsage));
    const auto colon = item.find(':');
    const auto at = item.find('@');
    const bool rank_item = item.starts_with("rank");
    if ((item.front() != 'w' && !rank_item) || colon == std::string_view::npos ||
        at == std::string_view::npos || at < colon) {
      return item_error(item, fmt::format("not a failure; {}", kUsage));
    }
    const std::size_t prefix = rank_item ? 4 : 1;
    const std::string_view number = item.substr(prefix, colon - prefix);
    int n = -1;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() || n < 0) {
      return item_error(item, fmt::format("unknown {} '{}{}'; {}", rank_item ? "rank" : "worker",
                                          rank_item ? "rank" : "w", number, kUsage));
    }
    if (rank_item) {
      if (ranks == 0) {
        return item_error(item,
                          "a whole rank fails only with --engine mpi; for a worker thread "
                          "write wN:crash@TIME or wN:hang@TIME");
      }
      if (n == 0 || n >= ranks) {
        return item_error(item, n == 0 ? fmt::format("rank 0 is the server; the worker ranks "
                                                     "are rank1 to rank{}",
                                                     ranks - 1)
                                       : fmt::format("there is no rank {}: the worker ranks are "
                                                     "rank1 to rank{}",
                                                     n, ranks - 1));
      }
    } else if (n >= workers) {
      return item_error(item, workers == 1
                                  ? fmt::format("there is no worker {}: there is only worker 0", n)
                                  : fmt::format("there is no worker {}: the workers are w0 to w{}",
                                                n, workers - 1));
    }
    const std::string_view kind_text = item.substr(colon + 1, at - colon - 1);
    FailureKind kind = FailureKind::kCrash;
    if (kind_text == "crash") {
      kind = FailureKind::kCrash;
    } else if (kind_text == "hang") {
      kind = FailureKind::kHang;
    } else {
      return item_error(item, fmt::format("unknown failure '{}'; it is crash (the {} dies) or "
                                          "hang (it stops responding), e.g. {}{}:crash@2s",
                                          spec::printable(kind_text), rank_item ? "rank" : "worker",
                                          rank_item ? "rank" : "w", n));
    }
    auto when = parse_duration(item.substr(at + 1));
    if (!when) return item_error(item, when.error().message);
    if (rank_item) {
      if (const PlannedRankFailure* earlier = plan.of_rank(n)) {
        return item_error(item,
                          fmt::format("rank {} already fails ({}@{}); give each rank one "
                                      "failure",
                                      n, to_string(earlier->kind), format_duration(earlier->at_s)));
      }
      plan.ranks.push_back({n, kind, *when});
      continue;
    }
    if (const PlannedFailure* earlier = plan.of(n)) {
      return item_error(item,
                        fmt::format("worker {} already fails ({}@{}); give each worker one "
                                    "failure",
                                    n, to_string(earlier->kind), format_duration(earlier->at_s)));
    }
    plan.failures.push_back({n, kind, *when});
  }
  std::sort(plan.failures.begin(), plan.failures.end(),
            [](const auto& a, const auto& b) { return a.worker < b.worker; });
  std::sort(plan.ranks.begin(), plan.ranks.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return plan;
}

}  // namespace stalesgd

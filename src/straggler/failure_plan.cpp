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
    "write wN:crash@TIME or wN:hang@TIME, separated by ';', e.g. 'w3:crash@2s;w5:hang@4s'";

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

std::string FailurePlan::describe() const {
  if (failures.empty()) return "none";
  std::string out;
  for (const auto& f : failures) {
    if (!out.empty()) out += ';';
    out += fmt::format("w{}:{}@{}", f.worker, to_string(f.kind), format_duration(f.at_s));
  }
  return out;
}

Result<FailurePlan> parse_failure_plan(std::string_view spec_text, int workers) {
  FailurePlan plan;
  const std::string_view whole = spec::trim(spec_text);
  if (whole.empty() || whole == "none") return plan;
  for (const std::string_view raw : spec::split(whole, ';')) {
    const std::string_view item = spec::trim(raw);
    if (item.empty()) return item_error(whole, fmt::format("empty item; {}", kUsage));
    const auto colon = item.find(':');
    const auto at = item.find('@');
    if (item.front() != 'w' || colon == std::string_view::npos || at == std::string_view::npos ||
        at < colon) {
      return item_error(item, fmt::format("not a failure; {}", kUsage));
    }
    const std::string_view number = item.substr(1, colon - 1);
    int w = -1;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), w);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() || w < 0) {
      return item_error(item, fmt::format("unknown worker 'w{}'; {}", number, kUsage));
    }
    if (w >= workers) {
      return item_error(item, workers == 1
                                  ? fmt::format("there is no worker {}: there is only worker 0", w)
                                  : fmt::format("there is no worker {}: the workers are w0 to w{}",
                                                w, workers - 1));
    }
    const std::string_view kind = item.substr(colon + 1, at - colon - 1);
    PlannedFailure f;
    f.worker = w;
    if (kind == "crash") {
      f.kind = FailureKind::kCrash;
    } else if (kind == "hang") {
      f.kind = FailureKind::kHang;
    } else {
      return item_error(item, fmt::format("unknown failure '{}'; it is crash (the worker dies) or "
                                          "hang (it stops responding), e.g. w{}:crash@2s",
                                          spec::printable(kind), w));
    }
    auto when = parse_duration(item.substr(at + 1));
    if (!when) return item_error(item, when.error().message);
    f.at_s = *when;
    if (const PlannedFailure* earlier = plan.of(w)) {
      return item_error(item,
                        fmt::format("worker {} already fails ({}@{}); give each worker one "
                                    "failure",
                                    w, to_string(earlier->kind), format_duration(earlier->at_s)));
    }
    plan.failures.push_back(f);
  }
  std::sort(plan.failures.begin(), plan.failures.end(),
            [](const auto& a, const auto& b) { return a.worker < b.worker; });
  return plan;
}

}  // namespace stalesgd

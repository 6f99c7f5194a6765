// FailureLedger: failed workers and the messages about them (see failure_ledger.hpp).
#include "engine/failure_ledger.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

FailureLedger::FailureLedger(int workers, double worker_timeout_s)
    : worker_timeout_s_(worker_timeout_s), entries_(static_cast<std::size_t>(workers)) {}

void FailureLedger::record(int worker, double at_s, FailureKind kind) {
  Entry& e = entries_[ix(worker)];
  if (e.failed) return;
  e = {true, at_s, kind};
  order_.push_back(worker);
}

int FailureLedger::count() const {
  return static_cast<int>(order_.size());
}

void FailureLedger::fill(WorkerRecord& rec) const {
  const Entry& e = entries_[ix(rec.worker)];
  rec.failed = e.failed;
  rec.failed_at_s = e.failed ? e.at_s : 0.0;
  rec.failure = e.failed ? to_string(e.kind) : "";
}

std::string FailureLedger::describe() const {
  std::string out;
  for (const int w : order_) {
    const Entry& e = entries_[ix(w)];
    if (!out.empty()) out += ", ";
    if (e.kind == FailureKind::kCrash) {
      out += fmt::format("w{} crashed at {:.3f} s", w, e.at_s);
    } else {
      out += fmt::format("w{} hung (no gradient {} after its minibatch's end; found at {:.3f} s)",
                         w, format_duration(worker_timeout_s_), e.at_s);
    }
  }
  return out;
}

std::string FailureLedger::stop_message(const RuleConfig& rule, int k, int live) const {
  std::vector<int> sorted = order_;
  std::sort(sorted.begin(), sorted.end());
  std::string who;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) who += i + 1 == sorted.size() ? " and " : ", ";
    who += std::to_string(sorted[i]);
  }
  const std::string failed =
      live == 0 && rule.workers > 1
          ? fmt::format("all {} workers failed", rule.workers)
          : fmt::format("{} {} failed", sorted.size() == 1 ? "worker" : "workers", who);
  const std::string_view name = rule.name();
  if (live == 0) {
    return fmt::format("{} ({}); {} needs at least one live worker", failed, describe(), name);
  }
  // A rule whose K follows from its own option says which (backup: --backups).
  const RuleInfo* info = find_rule(rule.rule);
  const std::string fix = info != nullptr && info->fewer_workers_fix
                              ? info->fewer_workers_fix(rule, live)
                              : fmt::format("lower --k to {} or less", live);
  return fmt::format(
      "{} ({}); {} needs K = {} live workers and {} of {} are left: {} to run on "
      "without them",
      failed, describe(), name, k, live, rule.workers, fix);
}

void FailureLedger::save(StateWriter& out) const {
  out.tag("failures");
  out.u64(order_.size());
  for (const int w : order_) {
    const Entry& e = entries_[ix(w)];
    out.i64(w);
    out.f64(e.at_s);
    out.u64(e.kind == FailureKind::kCrash ? 0 : 1);
  }
}

void FailureLedger::load(StateReader& in) {
  if (!in.tag("failures")) return;
  const std::uint64_t n = in.u64();
  if (n > entries_.size()) in.fail("more failed workers than workers");
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    const std::int64_t w = in.i64();
    const double at = in.f64();
    const std::uint64_t kind = in.u64();
    if (w < 0 || w >= static_cast<std::int64_t>(entries_.size()) || kind > 1) {
      in.fail("a failed worker out of range");
      return;
    }
    record(static_cast<int>(w), at, kind == 0 ? FailureKind::kCrash : FailureKind::kHang);
  }
}

}  // namespace stalesgd

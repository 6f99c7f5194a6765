#include "straggler/worker_target.hpp"

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "straggler/spec_text.hpp"

namespace stalesgd::spec {
namespace {

Result<int> parse_worker(std::string_view text, std::string_view target) {
  int w = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), w);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || w < 0) {
    return Error{fmt::format("unknown workers '{}'; write wN, wA-B or *, e.g. w3=x5 or w0-3=x2",
                             printable(target))};
  }
  return w;
}

// "there are workers 0..7 (8 workers); name workers in w0-7", or the one-worker variant.
std::string existing_workers(int workers) {
  if (workers == 1) return "there is only worker 0; use w0";
  return fmt::format("there are workers 0..{} ({} workers); name workers in w0-{}", workers - 1,
                     workers, workers - 1);
}

// "w3", "w0-3" or "*" -> [first, last].
}  // namespace

Result<std::pair<int, int>> parse_target(std::string_view target, int workers) {
  if (target == "*") return std::pair{0, workers - 1};
  if (target.size() < 2 || target.front() != 'w') {
    return Error{fmt::format("unknown workers '{}'; write wN, wA-B or *, e.g. w3=x5 or w0-3=x2",
                             printable(target))};
  }
  const std::string_view body = target.substr(1);
  const auto dash = body.find('-');
  auto first = parse_worker(body.substr(0, dash), target);
  if (!first) return first.error();
  int last = *first;
  if (dash != std::string_view::npos) {
    auto l = parse_worker(body.substr(dash + 1), target);
    if (!l) return l.error();
    last = *l;
    if (last < *first) {
      return Error{
          fmt::format("worker range '{}' is reversed; write w{}-{}", target, last, *first)};
    }
  }
  for (const int w : {*first, last}) {
    if (w >= workers) {
      return Error{fmt::format("worker {} does not exist: {}", w, existing_workers(workers))};
    }
  }
  return std::pair{*first, last};
}

}  // namespace stalesgd::spec

// The machine of a run's options: its file first, the flags over it (config/machine_options.hpp).
#include "config/machine_options.hpp"

#include <fmt/format.h>

namespace stalesgd {

Result<Machine> resolve_machine(const TrainerOptions& o) {
  Machine m;
  if (!o.machine.empty()) {
    auto file = read_machine_file(o.machine, o.model.name);
    if (!file) return file.error();
    m = std::move(file).value();
  }
  if (o.cores < 0) return Error{fmt::format("--cores {} must be at least 1", o.cores)};
  if (o.cores > 0) m.cores = o.cores;
  if (!o.server_time.empty() && o.server_time != "auto") {
    auto t = parse_server_time(o.server_time);
    if (!t) return t.error();
    m.server_gradient_s = t->gradient_s;
    m.server_update_s = t->update_s;
  }
  if (o.link != "none") {
    auto link = parse_link(o.link);
    if (!link) return link.error();
    m.link = *link;
  }
  if (o.shards < 1) return Error{fmt::format("--shards {} must be at least 1", o.shards)};
  if (o.shards > 1) m.shards = o.shards;
  if (o.compute_time_s != 0.0 || o.machine.empty()) m.compute_s = o.compute_time_s;
  if (auto s = check_machine(m); !s) return s.error();
  return m;
}

}  // namespace stalesgd

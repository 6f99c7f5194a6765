// The machine a run ran on, for summary.json: host name, CPU model, logical cores, the kernel
// and the load average (docs/outputs.md). Linux: /proc/cpuinfo, uname(2), getloadavg(3).
#pragma once

#include <string>

namespace stalesgd {

struct HostInfo {
  std::string name;
  std::string cpu;  // /proc/cpuinfo's first "model name"; empty when unknown
  unsigned cores = 0;
  std::string os;  // "Linux 6.1.0-13-amd64"
};

HostInfo host_info();

// The 1-minute load average; < 0 when unavailable.
double load_average();

}  // namespace stalesgd

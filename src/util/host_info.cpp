// Host facts for summary.json's provenance.
#include "util/host_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace stalesgd {

HostInfo host_info() {
  HostInfo h;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) h.name = name;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    if (const auto colon = line.find(':'); colon != std::string::npos) {
      h.cpu = line.substr(line.find_first_not_of(" \t", colon + 1));
    }
    break;
  }
  h.cores = std::thread::hardware_concurrency();
  if (utsname u{}; uname(&u) == 0) h.os = std::string(u.sysname) + " " + u.release;
  return h;
}

double load_average() {
  double load[1];
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

}  // namespace stalesgd

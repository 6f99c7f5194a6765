// scratch_dir(): the folder made once per process, t.csv written into it by a rename.
#include "support/scratch_dir.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace stalesgd::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path made;

void remove_scratch() {
  std::error_code ec;
  fs::remove_all(made, ec);
}

}  // namespace

const fs::path& scratch_dir() {
  if (!made.empty()) return made;
  if (const char* dir = std::getenv("STALESGD_FUZZ_SCRATCH"); dir != nullptr && *dir != 0) {
    made = dir;
    std::error_code ec;
    fs::create_directories(made, ec);
  } else {
    std::string pattern = fs::temp_directory_path() / "stalesgd-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("scratch_dir: mkdtemp");
      std::abort();
    }
    made = pattern;
    std::atexit(remove_scratch);
  }
  // Written under a private name and renamed: parallel jobs sharing the folder never read a
  // half-written t.csv.
  const fs::path tmp = made / ("t.csv." + std::to_string(getpid()));
  std::ofstream(tmp) << "# a trace for the harnesses\nw0[ms],w1[us]\n12.5,900\n0,30\n";
  std::error_code ec;
  fs::rename(tmp, made / "t.csv", ec);
  if (ec) {
    std::fprintf(stderr, "scratch_dir: cannot write %s: %s\n", tmp.c_str(), ec.message().c_str());
    std::abort();
  }
  return made;
}

}  // namespace stalesgd::fuzz

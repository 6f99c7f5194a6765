// scratch_dir(): mkdtemp once, t.csv written, the folder removed by an atexit handler.
#include "support/scratch_dir.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace stalesgd::fuzz {
namespace {

std::filesystem::path made;

void remove_scratch() {
  std::error_code ec;
  std::filesystem::remove_all(made, ec);
}

}  // namespace

const std::filesystem::path& scratch_dir() {
  if (made.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "stalesgd-fuzz-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("scratch_dir: mkdtemp");
      std::abort();
    }
    made = pattern;
    std::ofstream(made / "t.csv") << "# a trace for the harnesses\nw0[ms],w1[us]\n12.5,900\n0,30\n";
    std::atexit(remove_scratch);
  }
  return made;
}

}  // namespace stalesgd::fuzz

// Fuzzes the delay-spec parser (StragglerProfile::parse, src/straggler/; the grammar is in
// docs/stragglers.md). Input: the spec text, parsed for 8 workers and for 1. trace:<file>
// resolves in a scratch folder holding t.csv; a spec with '/' is skipped, since a path out of
// that folder may name a device that never ends (/dev/zero).
// Property: an Error is one line; a profile's describe() parses back to the same describe(),
// and every worker's first draws (at t = 0 s and later) are finite and >= 0.
#include <cmath>
#include <string_view>

#include "stalesgd/straggler/profile.hpp"
#include "support/check.hpp"
#include "support/scratch_dir.hpp"

using namespace stalesgd;

namespace {

void check(std::string_view spec, int workers) {
  const auto& dir = fuzz::scratch_dir();
  auto profile = StragglerProfile::parse(spec, workers, dir);
  if (!profile) {
    FUZZ_CHECK(fuzz::one_line(profile.error().message));
    return;
  }
  FUZZ_CHECK(profile->workers() == workers);
  const std::string canonical = profile->describe();
  auto again = StragglerProfile::parse(canonical, workers, dir);
  if (!again) std::fprintf(stderr, "'%s': %s\n", canonical.c_str(), again.error().message.c_str());
  FUZZ_CHECK(again.ok());
  if (again->describe() != canonical) {
    std::fprintf(stderr, "'%s' -> '%s'\n", canonical.c_str(), again->describe().c_str());
  }
  FUZZ_CHECK(again->describe() == canonical);
  FUZZ_CHECK((profile->iid() == nullptr) == (again->iid() == nullptr));
  for (int w = 0; w < workers; ++w) {
    DelaySampler sampler(*profile, w, /*run_seed=*/1);
    for (const double t : {0.0, 0.0, 1.0, 60.0, 1e9}) {
      const double x = sampler.next(t);
      FUZZ_CHECK(std::isfinite(x) && x >= 0);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  if (spec.find('/') != std::string_view::npos) return 0;
  check(spec, 8);
  check(spec, 1);
  return 0;
}

// Fuzzes the TOML experiment loader (parse_experiment, src/experiment/experiment.cpp; toml++
// and the option table behind it; the keys are in docs/experiments.md). Input: the file's
// text, loaded as <scratch>/fuzz.toml so that trace:t.csv in a delay spec resolves.
// Property: an Error is one line; an Experiment has runs, each with a label and a distinct
// slug of [a-z0-9-], and each run's resolved options resolve again (summary.json's `config`
// is those options).
#include <set>
#include <string>
#include <string_view>

#include "experiment/experiment_text.hpp"
#include "support/check.hpp"
#include "support/scratch_dir.hpp"

using namespace stalesgd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ex = parse_experiment(text, fuzz::scratch_dir() / "fuzz.toml");
  if (!ex) {
    if (!fuzz::one_line(ex.error().message)) {
      std::fprintf(stderr, "message: %s\n", ex.error().message.c_str());
    }
    FUZZ_CHECK(fuzz::one_line(ex.error().message));
    return 0;
  }
  FUZZ_CHECK(!ex->runs.empty());
  std::set<std::string> slugs;
  for (const ExperimentRun& run : ex->runs) {
    FUZZ_CHECK(!run.label.empty());
    FUZZ_CHECK(!run.slug.empty() &&
               run.slug.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
                   std::string::npos);
    FUZZ_CHECK(slugs.insert(run.slug).second);
    auto again = ResolvedRun::resolve(run.options());
    if (!again) std::fprintf(stderr, "resolve again: %s\n", again.error().message.c_str());
    FUZZ_CHECK(again.ok());
  }
  return 0;
}

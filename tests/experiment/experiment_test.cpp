// Experiment files: shared keys and per-run overrides, seeds, slugs, and errors that name the
// file, the line and the key.
#include "stalesgd/experiment/experiment.hpp"

#include <algorithm>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

#include "experiment/experiment_text.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {
std::filesystem::path write_toml(const TempDir& dir, const std::string& text) {
  const auto path = dir / "exp.toml";
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kGood = R"(name = "demo"
model = "softmax"
workers = 4
delay = "exp:mean=5ms"
time = "2s"
seeds = [1, 2]

[[run]]
label = "sync"
rule = "sync"

[[run]]
label = "K-async, K=2"
rule = "k-async"
k = 2
lr = 0.02
lr_rule = "dutta:c=0.5"
adasync_every = "1s"
clock = "virtual"
)";
}  // namespace

TEST_CASE("experiment: shared keys, overrides, seeds and slugs", "[experiment]") {
  TempDir dir;
  auto ex = load_experiment(write_toml(dir, kGood));
  REQUIRE(ex.ok());
  CHECK(ex->name == "demo");
  REQUIRE(ex->runs.size() == 4);
  CHECK(ex->runs[0].label == "sync (seed 1)");
  CHECK(ex->runs[1].options().seed == 2);
  CHECK(ex->runs[0].slug == "sync-seed-1");
  const auto& o = ex->runs[2].options();
  CHECK(ex->runs[2].slug == "k-async-k-2-seed-1");
  CHECK(o.rule.name == "k-async");
  CHECK(o.rule.k == 2);
  CHECK(o.workers == 4);
  CHECK(o.lr == 0.02);
  CHECK(o.lr_rule == "dutta:c=0.5");
  CHECK(o.adasync_every_s == 1.0);
  CHECK(o.clock == ClockKind::kVirtual);
  CHECK(o.time_s == 2.0);
  CHECK(ex->runs[0].options().clock == ClockKind::kReal);
  CHECK(o.delay_base_dir == dir.path());
}

TEST_CASE("experiment: errors name the file, the line and the key", "[experiment]") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"wrkers = 4\n[[run]]\nlabel = \"a\"\n",
       "exp.toml:1: unknown key 'wrkers' (did you mean 'workers'?)"},
      {"time = \"2s\"\nworkers = \"four\"\n[[run]]\nlabel = \"a\"\n",
       "exp.toml:2: key 'workers' must be an integer"},
      {"time = 20\n[[run]]\nlabel = \"a\"\n", "exp.toml:1: key 'time' must be a duration string"},
      {"time = \"20 parsecs\"\n[[run]]\nlabel = \"a\"\n", "exp.toml:1: key 'time'"},
      {"time = \"2s\"\n", "no runs"},
      {"time = \"2s\"\n[[run]]\nrule = \"sync\"\n", "exp.toml:2: [[run]] needs a label"},
      {"time = \"2s\"\nworkers = 4\n\n[[run]]\nlabel = \"bad\"\nrule = \"k-sync\"\nk = 9\n",
       "exp.toml:4: run 'bad': --k 9 is out of range for --workers 4"},
      {"time = \"2s\"\n[[run]]\nlabel = \"x\"\ndelay = \"exp:mean=5\"\n", "run 'x': delay spec"},
      {"time = \"2s\"\n[[run]]\nlabel = \"x\"\nclock = \"fast\"\n",
       "exp.toml:4: key 'clock' must be \"real\" or \"virtual\""},
      {"time = \"2s\"\nseeds = []\n[[run]]\nlabel = \"x\"\n", "exp.toml:2: key 'seeds'"},
      {"time = \"2s\"\n[[run]]\nlabel = \"x\"\nhidden = [256, \"x\"]\n", "key 'hidden'"},
      {"time = \"2s\"\n[[run]\nlabel = \"x\"\n", "exp.toml:2: TOML syntax error"},
  };
  for (const auto& [text, expected] : cases) {
    auto ex = load_experiment(write_toml(dir, text));
    INFO(text);
    REQUIRE_FALSE(ex.ok());
    CHECK_THAT(ex.error().message, Contains(expected));
    CHECK(ex.error().message.find('\n') == std::string::npos);
  }
  CHECK_THAT(load_experiment(dir / "missing.toml").error().message,
             Contains("config file not found"));
}

TEST_CASE("experiment: a key of the wrong type says what it needs and what it got",
          "[experiment]") {
  TempDir dir;
  const std::string run = "[[run]]\nlabel = \"a\"\n";
  // One key of each type the file has, given a value of another type.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"name = 5\n" + run, "exp.toml:1: key 'name' must be a string, not the integer 5"},
      {"description = true\n" + run, "exp.toml:1: key 'description' must be a string, not true"},
      {"time = \"1s\"\n[[run]]\nlabel = 4\n",
       "exp.toml:3: key 'label' must be a string, not the integer 4"},
      // A list is a sweep: each element must have the key's type.
      {"dataset = [1]\n" + run, "exp.toml:1: key 'dataset' must be a string, not the integer 1"},
      {"workers = \"4\"\n" + run,
       "exp.toml:1: key 'workers' must be an integer from 1 to 4096, not the string '4'"},
      {"workers = 4.0\n" + run,
       "exp.toml:1: key 'workers' must be an integer from 1 to 4096, not the number 4.0"},
      {"seed = 1.5\n" + run, "exp.toml:1: key 'seed' must be an integer >= 0, not the number 1.5"},
      {"lr = \"0.1\"\n" + run,
       "exp.toml:1: key 'lr' must be a finite number, not the string '0.1'"},
      {"time = 20\n" + run,
       "exp.toml:1: key 'time' must be a duration string with a unit, e.g. \"20s\" or \"500ms\", "
       "not the integer 20"},
      {"clock = 1\n" + run,
       "exp.toml:1: key 'clock' must be \"real\" or \"virtual\", not the integer 1"},
      {"hidden = 128\n" + run,
       "exp.toml:1: key 'hidden' must be an array of integers from 1 to 65536, e.g. [256, 128], "
       "not the integer 128"},
      {"seeds = 5\n" + run,
       "exp.toml:1: key 'seeds' must be a non-empty array of integers, e.g. [1, 2, 3], not the "
       "integer 5"},
      {"time = \"1s\"\nrun = 5\n",
       "exp.toml:2: key 'run' must be [[run]] tables, each with a label and a rule, not the "
       "integer 5"},
      {"time = \"1s\"\nrun = [1, 2]\n",
       "exp.toml:2: key 'run' must be [[run]] tables, each with a label and a rule, not an array "
       "of values"},
      {"time = \"1s\"\n[[run]]\nlabel = \"a\"\nk = {a = 1}\n",
       "exp.toml:4: key 'k' must be an integer K with 1 <= K <= P, not a table"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    auto ex = load_experiment(write_toml(dir, text));
    REQUIRE_FALSE(ex.ok());
    CHECK(ex.error().message == (dir / expected).string());
  }
  // A value of the right type that is out of range names the range only.
  auto ex = load_experiment(write_toml(dir, "workers = 5000\n" + run));
  REQUIRE_FALSE(ex.ok());
  CHECK(ex.error().message ==
        (dir / "exp.toml:1: key 'workers' must be an integer from 1 to 4096").string());
}

TEST_CASE("every experiment shipped in experiments/ loads and expands to its runs",
          "[experiment]") {
  // Runs per file (sweeps and seeds expanded); a new file needs its line here.
  const std::map<std::string, std::size_t> expected{
      {"quickstart.toml", 4},
      {"paper-1-sync-vs-async.toml", 10},
      {"paper-2-k-sync-tradeoff.toml", 20},
      {"paper-3-k-batch-async.toml", 20},
      {"paper-4-runtime-ratio-real.toml", 50},
      {"paper-4-runtime-ratio-virtual.toml", 50},
      {"paper-5-staleness-lr.toml", 20},
      {"paper-6-adasync.toml", 35},
      {"paper-6-adasync-real.toml", 30},
      {"paper-7-shifted-exp.toml", 30},
      {"error-k-sync.toml", 20},
      {"error-k-async.toml", 20},
      {"error-k-batch-async.toml", 20},
      {"ssp-vs-k-async.toml", 25},
      {"the-field.toml", 220},
      {"tune-the-field.toml", 924},
      {"the-field-tuned.toml", 220},
      {"the-field-threads.toml", 55},
      {"tune-the-field-knobs.toml", 1256},
      {"the-field-best.toml", 280},
      {"tune-the-field-edges.toml", 448},
      {"tune-the-field-edges-2.toml", 36},
      {"tune-the-field-edges-3.toml", 6},
      {"k-batch-sync-vs-k-sync.toml", 20},
      {"fashion-1-sync-vs-async.toml", 10},
      {"fashion-2-k-sync-tradeoff.toml", 20},
      {"fashion-5-staleness-lr.toml", 15},
      {"fashion-six-rules.toml", 18},
      {"fashion-six-rules-cnn.toml", 18},
      {"error-grid.toml", 36},
      {"tune-paper-1.toml", 36},
      {"tune-paper-5.toml", 36},
      {"tune-fashion-1.toml", 30},
      {"tune-fashion-5.toml", 30},
      {"paper-1-tuned-lr.toml", 15},
      {"paper-5-tuned-lr.toml", 30},
      {"fashion-1-tuned-lr.toml", 20},
      {"fashion-5-tuned-lr.toml", 25},
  };
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(STALESGD_SOURCE_DIR) / "experiments")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path());
    auto ex = load_experiment(e.path());
    REQUIRE(ex.ok());
    REQUIRE(expected.count(e.path().filename().string()) == 1);
    CHECK(ex->runs.size() == expected.at(e.path().filename().string()));
    ++n;
  }
  CHECK(n == expected.size());
}

TEST_CASE("the paper's sweeps keep the labels its figures name", "[experiment]") {
  const auto dir = std::filesystem::path(STALESGD_SOURCE_DIR) / "experiments";
  auto four = load_experiment(dir / "paper-4-runtime-ratio-virtual.toml");
  REQUIRE(four.ok());
  // seed_stride = 100: cell c (a run but for its seed) runs seeds 1 + 100c to 5 + 100c.
  CHECK(four->runs[0].label == "P=2 sync (seed 1)");
  CHECK(four->runs[5].label == "P=2 async (seed 101)");
  CHECK(four->runs[49].label == "P=32 async (seed 905)");
  CHECK(four->runs[49].options().workers == 32);
  CHECK(four->runs[49].options().seed == 905);
  auto six = load_experiment(dir / "paper-6-adasync.toml");
  REQUIRE(six.ok());
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < six->runs.size(); i += 5) labels.push_back(six->runs[i].label);
  CHECK(labels == std::vector<std::string>{"K=1 (seed 1)", "K=2 (seed 101)", "K=4 (seed 201)",
                                           "K=8 (seed 301)", "K=16 (sync) (seed 401)",
                                           "AdaSync K0=2 (seed 501)", "AdaSync K0=4 (seed 601)"});
  CHECK(six->runs[30].options().adasync_every_s == 1.0);
  CHECK(six->runs[30].options().rule.k == 4);
}

TEST_CASE("experiment: parse_experiment on a file's text gives what load_experiment gives",
          "[experiment]") {
  TempDir dir;
  auto from_file = load_experiment(write_toml(dir, kGood));
  auto from_text = parse_experiment(kGood, dir / "exp.toml");
  REQUIRE(from_file.ok());
  REQUIRE(from_text.ok());
  CHECK(from_text->name == from_file->name);
  REQUIRE(from_text->runs.size() == from_file->runs.size());
  for (std::size_t i = 0; i < from_file->runs.size(); ++i) {
    CHECK(from_text->runs[i].slug == from_file->runs[i].slug);
    CHECK(from_text->runs[i].options().delay_base_dir == dir.path());
  }
  const std::string bad = "time = \"2s\"\n[[run]\nlabel = \"x\"\n";
  CHECK(parse_experiment(bad, dir / "exp.toml").error().message ==
        load_experiment(write_toml(dir, bad)).error().message);
}

// Found by fuzz/experiment_toml.cpp (docs/reliability.md): toml++'s syntax errors echo the
// character they saw, a newline included ("expected 'true', saw 't\n'"), and keys and values
// echo the file's bytes; an Error is one line, so control characters show as '?'.
TEST_CASE("experiment: errors that echo the file stay on one line", "[experiment][fuzz]") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases{
      // The fuzzer's input was a seed whose "workers = 4" line had become "ws = t".
      {"ws = t\n",
       "exp.toml:1: TOML syntax error: Error while parsing boolean: expected 'true', "
       "saw 't?'"},
      {"\"a\\nb\" = 1\n[[run]]\nlabel = \"x\"\n", "exp.toml:1: unknown key 'a?b'"},
      {"time = \"2s\"\ndataset = \"mn\\u0007ist\"\n[[run]]\nlabel = \"x\"\n",
       "unknown data set 'mn?ist'"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    auto ex = load_experiment(write_toml(dir, text));
    REQUIRE_FALSE(ex.ok());
    CHECK_THAT(ex.error().message, Contains(expected));
    CHECK(std::none_of(ex.error().message.begin(), ex.error().message.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20; }));
  }
}

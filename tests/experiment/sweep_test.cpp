// Sweeps: keys given as lists expand to the cross product in the documented order; labels take
// placeholders and get suffixes for the swept keys they omit; --set overrides and sweeps;
// --only selects; errors name the file, the line and the key.
#include <fstream>

#include <catch2/catch.hpp>

#include "experiment/experiment_text.hpp"
#include "stalesgd/experiment/experiment.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

const std::filesystem::path kFile = "/tmp/sweep.toml";  // names the file in messages only

Result<Experiment> parse(const std::string& text, const std::vector<std::string>& set = {}) {
  return parse_experiment(text, kFile, set);
}

std::vector<std::string> labels(const Experiment& ex) {
  std::vector<std::string> out;
  for (const auto& r : ex.runs) out.push_back(r.label);
  return out;
}

}  // namespace

TEST_CASE("sweep: the cross product, the key written first varying slowest, seeds fastest",
          "[experiment][sweep]") {
  auto ex = parse(
      "workers = 8\ntime = \"1s\"\nseeds = [1, 2]\nrule = \"k-async\"\nk = [2, 4]\n"
      "[[run]]\nlabel = \"a\"\nlr = [0.1, 0.2, 0.3]\n"
      "[[run]]\nlabel = \"b {k}\"\nk = [1, 8]\n");
  REQUIRE(ex.ok());
  // Run a: k (line 5) x lr (line 8) x seed = 12; run b: its own k replaces the shared one.
  REQUIRE(ex->runs.size() == 16);
  CHECK(labels(*ex) ==
        std::vector<std::string>{
            "a (k=2, lr=0.1) (seed 1)", "a (k=2, lr=0.1) (seed 2)", "a (k=2, lr=0.2) (seed 1)",
            "a (k=2, lr=0.2) (seed 2)", "a (k=2, lr=0.3) (seed 1)", "a (k=2, lr=0.3) (seed 2)",
            "a (k=4, lr=0.1) (seed 1)", "a (k=4, lr=0.1) (seed 2)", "a (k=4, lr=0.2) (seed 1)",
            "a (k=4, lr=0.2) (seed 2)", "a (k=4, lr=0.3) (seed 1)", "a (k=4, lr=0.3) (seed 2)",
            "b 1 (seed 1)", "b 1 (seed 2)", "b 8 (seed 1)", "b 8 (seed 2)"});
  const auto& o = ex->runs[9].options();  // a, k = 4, lr = 0.2, seed 2
  CHECK(o.rule.k == 4);
  CHECK(o.lr == 0.2);
  CHECK(o.seed == 2);
  CHECK(o.workers == 8);
  CHECK(ex->runs[9].slug == "a-k-4-lr-0-2-seed-2");
  CHECK(ex->runs[15].options().rule.k == 8);
}

TEST_CASE("sweep: placeholders show the value as written, or the run's resolved value",
          "[experiment][sweep]") {
  auto ex = parse(
      "workers = 4\ntime = \"1s\"\neval_every = \"250ms\"\nseeds = [3]\n"
      "[[run]]\nlabel = \"{rule} K={k} P={workers} every {eval_every} seed {seed} {{x}}\"\n"
      "rule = [\"sync\", \"async\"]\n");
  REQUIRE(ex.ok());
  // K is not given: the effective K (sync: P, async: 1). One seed: no suffix.
  CHECK(labels(*ex) == std::vector<std::string>{"sync K=4 P=4 every 250ms seed 3 {x}",
                                                "async K=1 P=4 every 250ms seed 3 {x}"});
  CHECK(ex->runs[0].options().seed == 3);
}

TEST_CASE("sweep: a list key holds one list, a list of lists sweeps it", "[experiment][sweep]") {
  auto one = parse("model = \"mlp\"\ntime = \"1s\"\nhidden = [256, 128]\n[[run]]\nlabel = \"a\"\n");
  REQUIRE(one.ok());
  REQUIRE(one->runs.size() == 1);
  CHECK(one->runs[0].label == "a");
  CHECK(one->runs[0].options().model.hidden == std::vector<int>{256, 128});
  auto two = parse(
      "model = \"mlp\"\ntime = \"1s\"\nhidden = [[128], [256, 128]]\n[[run]]\nlabel = \"a\"\n");
  REQUIRE(two.ok());
  CHECK(labels(*two) == std::vector<std::string>{"a (hidden=128)", "a (hidden=256,128)"});
  CHECK(two->runs[1].options().model.hidden == std::vector<int>{256, 128});
  CHECK(two->runs[1].slug == "a-hidden-256-128");
}

TEST_CASE("sweep: errors name the file, the line and the key", "[experiment][sweep]") {
  const std::string run = "[[run]]\nlabel = \"a\"\n";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"time = \"1s\"\nk = []\n" + run,
       ":2: key 'k' is an empty list; a sweep needs at least one value"},
      {"time = \"1s\"\nworkers = [2,\n  \"4\"]\n" + run,
       ":3: key 'workers' must be an integer from 1 to 4096, not the string '4'"},
      {"time = \"1s\"\n[[run]]\nlabel = \"a {wrkers}\"\n",
       ":3: label 'a {wrkers}': placeholder {wrkers} names no key; known keys: dataset,"},
      {"time = \"1s\"\n[[run]]\nlabel = \"a {k\"\n",
       ":3: label 'a {k': a '{' without its '}' (write {{ for a brace)"},
      {"time = \"1s\"\n[[run]]\nlabel = \"a\"\n[[run]]\nlabel = \"a\"\n",
       ":4: two runs are labelled 'a' (the other from the [[run]] at " + kFile.string() +
           ":2); make the labels differ, e.g. with a placeholder such as {k} or {seed}"},
      {"time = \"1s\"\nworkers = 4\n[[run]]\nlabel = \"K={k}\"\nrule = \"k-sync\"\nk = [2, 9]\n",
       ":3: run 'K=9': --k 9 is out of range for --workers 4"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    auto ex = parse(text);
    REQUIRE_FALSE(ex.ok());
    CHECK_THAT(ex.error().message, Contains(kFile.string() + expected));
    CHECK(ex.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("sweep: a grid above 10,000 runs is refused before it is expanded",
          "[experiment][sweep]") {
  // 2000 x 2000 = 4 million points: refused in one line naming the table, not expanded.
  std::string seeds, batches;
  for (int i = 1; i <= 2000; ++i) {
    seeds += (i > 1 ? "," : "") + std::to_string(i);
    batches += (i > 1 ? "," : "") + std::to_string(i);
  }
  auto ex = parse("time = \"1s\"\n[[run]]\nlabel = \"a\"\nseeds = [" + seeds + "]\nbatch = [" +
                  batches + "]\n");
  REQUIRE_FALSE(ex.ok());
  CHECK_THAT(ex.error().message,
             Contains(kFile.string() + ":2: this sweep expands to more than 10000 runs"));
  // 100 x 100 is the cap itself and expands.
  std::string hundred;
  for (int i = 1; i <= 100; ++i) hundred += (i > 1 ? "," : "") + std::to_string(i);
  ex = parse(
      "time = \"1s\"\nclock = \"virtual\"\ndelay = \"exp:mean=10ms\"\n[[run]]\nlabel = "
      "\"a\"\nseeds = [" +
      hundred + "]\nbatch = [" + hundred + "]\n");
  REQUIRE(ex.ok());
  CHECK(ex->runs.size() == 10000);
}

TEST_CASE("sweep: seed_stride gives every cell its own seeds across the whole file",
          "[experiment][sweep]") {
  const std::string text =
      "workers = 4\ntime = \"1s\"\nseeds = [1, 2]\nrule = \"k-async\"\nseed_stride = 100\n"
      "[[run]]\nlabel = \"K={k}\"\nk = [1, 2]\n"
      "[[run]]\nlabel = \"async seed {seed}\"\nrule = \"async\"\nseeds = [7]\n";
  auto ex = parse(text);
  REQUIRE(ex.ok());
  // Cells K=1, K=2, async: 0, 1, 2; labels and options carry the seed the run uses.
  CHECK(labels(*ex) == std::vector<std::string>{"K=1 (seed 1)", "K=1 (seed 2)", "K=2 (seed 101)",
                                                "K=2 (seed 102)", "async seed 207"});
  std::vector<std::uint64_t> seeds;
  for (const auto& r : ex->runs) seeds.push_back(r.options().seed);
  CHECK(seeds == std::vector<std::uint64_t>{1, 2, 101, 102, 207});
  CHECK(ex->runs[2].slug == "k-2-seed-101");
  // Without the key, the cells share seeds (and so their delay streams).
  std::string shared = text;
  shared.erase(shared.find("seed_stride = 100\n"), std::string("seed_stride = 100\n").size());
  auto plain = parse(shared);
  REQUIRE(plain.ok());
  CHECK(labels(*plain) == std::vector<std::string>{"K=1 (seed 1)", "K=1 (seed 2)", "K=2 (seed 1)",
                                                   "K=2 (seed 2)", "async seed 7"});
  // Top level only, an integer >= 0.
  for (const auto& [bad, expected] : std::vector<std::pair<std::string, std::string>>{
           {"time = \"1s\"\n[[run]]\nlabel = \"a\"\nseed_stride = 10\n",
            ":4: key 'seed_stride' numbers the cells of the whole file; put it at the top level, "
            "not in a [[run]]"},
           {"time = \"1s\"\nseed_stride = -1\n[[run]]\nlabel = \"a\"\n",
            ":2: key 'seed_stride' must be an integer >= 0, not the integer -1"},
           {"time = \"1s\"\nseed_stride = \"x\"\n[[run]]\nlabel = \"a\"\n",
            ":2: key 'seed_stride' must be an integer >= 0, not the string 'x'"}}) {
    INFO(bad);
    auto e = parse(bad);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.error().message, Contains(kFile.string() + expected));
  }
}

TEST_CASE("sweep: --set replaces a key in every run, and a list sweeps it", "[experiment][sweep]") {
  const std::string text =
      "workers = 4\ntime = \"1s\"\nrule = \"k-async\"\nk = [1, 2]\n"
      "[[run]]\nlabel = \"a\"\nk = 2\nlr = 0.1\n[[run]]\nlabel = \"b\"\n";
  auto ex = parse(text, {"lr=0.3", "k=[3,4]", "delay=[\"exp:mean=1ms\", const:2ms]"});
  REQUIRE(ex.ok());
  // --set keys vary after the file's (in the order given); they replace the runs' own.
  CHECK(labels(*ex) ==
        std::vector<std::string>{"a (k=3, delay=exp:mean=1ms)", "a (k=3, delay=const:2ms)",
                                 "a (k=4, delay=exp:mean=1ms)", "a (k=4, delay=const:2ms)",
                                 "b (k=3, delay=exp:mean=1ms)", "b (k=3, delay=const:2ms)",
                                 "b (k=4, delay=exp:mean=1ms)", "b (k=4, delay=const:2ms)"});
  for (const auto& r : ex->runs) CHECK(r.options().lr == 0.3);
  CHECK(ex->runs[3].options().rule.k == 4);
  CHECK(ex->runs[3].options().delay == "const:2ms");
  CHECK(ex->set.size() == 3);

  // hidden=256,128 and hidden=[256,128] are one list; [[128],[64]] sweeps.
  const std::string mlp = "model = \"mlp\"\ntime = \"1s\"\n[[run]]\nlabel = \"m\"\n";
  for (const char* one : {"hidden=256,128", "hidden=[256,128]"}) {
    auto h = parse(mlp, {one});
    REQUIRE(h.ok());
    REQUIRE(h->runs.size() == 1);
    CHECK(h->runs[0].options().model.hidden == std::vector<int>{256, 128});
  }
  auto h = parse(mlp, {"hidden=[[128],[64]]", "seeds=[5,6]"});
  REQUIRE(h.ok());
  CHECK(labels(*h) == std::vector<std::string>{"m (hidden=128) (seed 5)", "m (hidden=128) (seed 6)",
                                               "m (hidden=64) (seed 5)", "m (hidden=64) (seed 6)"});

  // lr=0.01,0.1 sweeps as lr=[0.01,0.1] does; a delay spec's commas stay in the spec.
  auto lr = parse(text, {"lr=0.01,0.1"});
  REQUIRE(lr.ok());
  REQUIRE(lr->runs.size() == (1 + 2) * 2);  // a (its own k), b (k = [1, 2]), each x two lrs
  CHECK(lr->runs[0].options().lr == 0.01);
  CHECK(lr->runs[1].options().lr == 0.1);
  auto spec = parse(text, {"delay=shifted-exp:shift=1ms,mean=2ms"});
  REQUIRE(spec.ok());
  CHECK(spec->runs[0].options().delay == "shifted-exp:shift=1ms,mean=2ms");

  const std::vector<std::pair<std::string, std::string>> errors{
      {"wrkers=4",
       "--set wrkers=4: unknown key 'wrkers' (did you mean 'workers'?); known keys: dataset, "
       "data_dir,"},
      {"k", "--set k: give key=value, e.g. --set k=4, or a sweep: --set k=1,2,4 or"},
      {"lr=0.01,x", "--set lr=0.01,x: --lr 'x': "},
      {"k=[]", "--set k=[]: an empty list; a sweep needs at least one value"},
      {"k=[1,x]", "--set k=[1,x]: --k 'x': "},
      {"time=5", "--set time=5: --time '5': time '5' has no unit"},
  };
  for (const auto& [arg, expected] : errors) {
    INFO(arg);
    auto e = parse(text, {arg});
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.error().message, Contains(expected));
    CHECK(e.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("sweep: --only keeps the runs whose label or slug matches", "[experiment][sweep]") {
  auto ex = parse(
      "time = \"1s\"\nworkers = 4\nrule = \"k-async\"\n"
      "[[run]]\nlabel = \"K={k}, fast\"\nk = [1, 2, 4]\n[[run]]\nlabel = \"sync\"\n"
      "rule = \"sync\"\n");
  REQUIRE(ex.ok());
  auto a = *ex;
  REQUIRE(select_runs(a, {"K=[12],*", "sync"}).ok());
  CHECK(labels(a) == std::vector<std::string>{"K=1, fast", "K=2, fast", "sync"});
  auto b = *ex;
  REQUIRE(select_runs(b, {"k-4-*"}).ok());  // a slug
  REQUIRE(b.runs.size() == 1);
  CHECK(b.runs[0].slug == "k-4-fast");
  auto c = *ex;
  const Status none = select_runs(c, {"async*"});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message ==
        "--only async*: no run's label or slug matches; the labels: 'K=1, fast', 'K=2, fast', "
        "'K=4, fast', 'sync'");
}

TEST_CASE("sweep: the example of docs/experiments.md expands as the page says",
          "[experiment][sweep][docs]") {
  auto ex = parse(
      "time = \"1s\"\nworkers = 8\nrule = \"k-async\"\nk = [1, 2, 4, 8]\nseeds = [1, 2]\n\n"
      "[[run]]\nlabel = \"k-async K={k}\"\n\n[[run]]\nlabel = \"lr {lr}\"\nlr = [0.01, 0.1]\n"
      "k = 2\n");
  REQUIRE(ex.ok());
  CHECK(labels(*ex) == std::vector<std::string>{
                           "k-async K=1 (seed 1)", "k-async K=1 (seed 2)", "k-async K=2 (seed 1)",
                           "k-async K=2 (seed 2)", "k-async K=4 (seed 1)", "k-async K=4 (seed 2)",
                           "k-async K=8 (seed 1)", "k-async K=8 (seed 2)", "lr 0.01 (seed 1)",
                           "lr 0.01 (seed 2)", "lr 0.1 (seed 1)", "lr 0.1 (seed 2)"});
  CHECK(ex->runs[10].options().rule.k == 2);
}

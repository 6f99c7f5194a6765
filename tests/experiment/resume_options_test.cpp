// experiment/resume_options: a run's options read back from its checkpoint, and the options
// given beside --resume checked against them, on checkpoints written here (the CLI's and the
// Python package's resumes of real runs: tests/output/checkpoint_test.cpp,
// tests/python/resume_test.py).
#include "experiment/resume_options.hpp"

#include <catch2/catch.hpp>

#include "config/option_table.hpp"
#include "output/checkpoint.hpp"
#include "support/fixtures.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
namespace fs = std::filesystem;

namespace {

// The options of the run whose checkpoint the tests write.
TrainerOptions run_options() {
  TrainerOptions o;
  o.model.name = "softmax";
  o.rule.name = "k-async";
  o.rule.k = 2;
  o.workers = 4;
  o.delay = "exp:mean=10ms";
  o.clock = ClockKind::kVirtual;
  o.time_s = 30.0;
  o.checkpoint_every_s = 1.0;
  return o;
}

// DIR/checkpoint.bin holding a header with `o`'s flags, as a run writes it; its payload.
std::string write_run_checkpoint(const fs::path& dir, const TrainerOptions& o) {
  CheckpointHeader h;
  h.args = options_to_args(o);
  h.engine = "virtual";
  StateWriter out;
  save_header(out, h);
  REQUIRE(write_checkpoint(dir, out.bytes()));
  return out.bytes();
}

// The options given beside --resume, and the flags naming them.
struct Given {
  TrainerOptions options;
  std::vector<std::string> flags;
};

Given given(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& set) {
  Given g;
  g.options.resume_dir = dir;
  g.flags.push_back("resume");
  for (const auto& [flag, text] : set) {
    const OptionDecl* d = find_option(flag);
    REQUIRE(d != nullptr);
    REQUIRE(set_from_text(*d, text, g.options));
    g.flags.push_back(flag);
  }
  return g;
}

}  // namespace

TEST_CASE("resume options: the run's own options come back from its checkpoint's flags",
          "[experiment][resume]") {
  TempDir dir;
  const std::string payload = write_run_checkpoint(dir.path(), run_options());
  auto run = read_resumed_run(dir.path());
  REQUIRE(run);
  CHECK(run->payload == payload);
  CHECK(run->header.engine == "virtual");
  CHECK(options_to_args(run->options) == options_to_args([&] {
          TrainerOptions o = run_options();
          o.out_dir = o.resume_dir = dir.path();
          return o;
        }()));
  CHECK(run->options.out_dir == dir.path());
  CHECK(run->options.resume_dir == dir.path());

  // An interrupted run is resumed; a killed one (summary.json "running") too.
  write_text(dir / "summary.json", R"({"status": "interrupted", "stop_reason": "interrupted"})");
  CHECK(read_resumed_run(dir.path()));
  write_text(dir / "summary.json", R"({"status": "running"})");
  CHECK(read_resumed_run(dir.path()));
}

TEST_CASE("resume options: no folder, a finished run and no checkpoint are refused in one line",
          "[experiment][resume]") {
  TempDir dir;
  auto none = read_resumed_run(dir / "none");
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "--resume " + (dir / "none").string() +
                                    ": no such folder; give the --out of the run to continue");
  CHECK_FALSE(fs::exists(dir / "none"));

  auto missing = read_resumed_run(dir.path());
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message,
             Catch::Matchers::Contains("only a run started with --checkpoint-every can be "
                                       "resumed"));

  write_run_checkpoint(dir.path(), run_options());
  write_text(dir / "summary.json", R"({"status": "complete", "stop_reason": "time"})");
  auto finished = read_resumed_run(dir.path());
  REQUIRE_FALSE(finished);
  CHECK(finished.error().message ==
        dir.path().string() +
            " holds a finished run (summary.json says complete); nothing to resume");
}

TEST_CASE("resume options: options given beside --resume agree with the run's or are refused",
          "[experiment][resume]") {
  TempDir dir;
  write_run_checkpoint(dir.path(), run_options());
  const auto resumed = [&] {
    auto run = read_resumed_run(dir.path());
    REQUIRE(run);
    return std::move(run).value();
  };

  SECTION("the run's own values, the data dir, the model file and the progress options are taken") {
    auto run = resumed();
    const Given g = given(dir.path(), {{"rule", "k-async"},
                                       {"k", "2"},
                                       {"time", "30s"},
                                       {"data-dir", "/elsewhere/data"},
                                       {"no-progress", "true"},
                                       {"progress-every", "3s"},
                                       {"save-model", "/elsewhere/final.npy"},
                                       {"out", dir.path().string()}});
    REQUIRE(check_resume_flags(dir.path(), g.options, g.flags));
    REQUIRE(apply_given_options(run, g.options, g.flags));
    CHECK(run.options.data_dir == "/elsewhere/data");
    CHECK_FALSE(run.options.progress);
    CHECK(run.options.progress_every_s == 3.0);
    CHECK(run.options.save_model == "/elsewhere/final.npy");
    CHECK(run.options.time_s == 30.0);
  }
  SECTION("a value that differs names the flag and the checkpoint's value") {
    const auto refusal = [&](const std::vector<std::pair<std::string, std::string>>& set) {
      auto run = resumed();
      const Given g = given(dir.path(), set);
      const auto s = apply_given_options(run, g.options, g.flags);
      REQUIRE_FALSE(s);
      return s.error().message;
    };
    CHECK(refusal({{"time", "90s"}}) ==
          "--time conflicts with the run's --time 30s: --resume continues a run with the flags "
          "in its checkpoint");
    CHECK(refusal({{"sequential", "true"}}) ==
          "--sequential conflicts with the run's --sequential (not given): --resume continues a "
          "run with the flags in its checkpoint");
  }
  SECTION("--force, and an --out naming another folder, are refused before anything is read") {
    const Given force = given(dir.path(), {{"force", "true"}});
    const auto f = check_resume_flags(dir.path(), force.options, force.flags);
    REQUIRE_FALSE(f);
    CHECK(f.error().message == "--force and --resume exclude each other: --resume " +
                                   dir.path().string() +
                                   " continues the run there, --force --out " +
                                   dir.path().string() + " replaces it; give one");
    const Given out = given(dir.path(), {{"out", (dir / "other").string()}});
    const auto o = check_resume_flags(dir.path(), out.options, out.flags);
    REQUIRE_FALSE(o);
    CHECK(o.error().message == "--out " + (dir / "other").string() + " conflicts with --resume " +
                                   dir.path().string() +
                                   ": a resumed run writes into its own folder");
    // apply_given_options checks them too, so that no caller can skip them.
    auto run = resumed();
    CHECK_FALSE(apply_given_options(run, force.options, force.flags));
    // The same folder, spelt another way.
    const Given same = given(dir.path(), {{"out", (dir.path() / ".").string()}});
    CHECK(check_resume_flags(dir.path(), same.options, same.flags));
  }
}

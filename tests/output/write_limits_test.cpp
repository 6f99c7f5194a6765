// Writes that fail through the real binary (docs/reliability.md): run.log's failure goes through
// the run's one failure path as a journal's does, a file-size limit is a failed write (the
// binary ignores SIGXFSZ itself), and a full disk still leaves summary.json saying "failed".
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// A run whose run.log grows faster than any other file: a snapshot every millisecond logs a
// line of about 100 bytes (debug, which run.log records) and adds a row of about 60 to
// evals.csv, while the workers' one-second minibatches add almost nothing to the journal.
const std::string kLogHeavyRun =
    " train --model softmax --rule async --workers 2 --delay const:1s --eval-every 1ms "
    "--time 600s --no-progress --out ";

// The file-size limit runs without SIGXFSZ ignored, whatever the test process inherited (a
// shell cannot reset a signal it was started ignoring: env can): the binary must ignore it.
const std::string kFileSizeLimit = "ulimit -f 16; exec env --default-signal=XFSZ ";

// Every line ends with '\n'.
void check_whole_lines(const fs::path& path) {
  INFO(path);
  const std::string text = slurp(path);
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\n');
}

}  // namespace

TEST_CASE("train CLI: a run.log that cannot be written ends the run as a failed write does",
          "[output][cli][limits]") {
  // ulimit -f 16: run.log reaches 16 KiB first, its write fails with EFBIG. spdlog's file sink
  // threw from the logging thread: "LOG ERROR" and "internal error" on stderr, exit 3 and
  // summary.json left "running".
  TempDir dir;
  const auto r = run_shell(kFileSizeLimit + kCli + kLogHeavyRun + dir.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: cannot write " + (dir / "run.log").string()) &&
                           Contains("File too large"));
  const auto j = read_summary(dir.path());
  CHECK(j["status"] == "failed");
  CHECK(j["stop_reason"] == "failed");
  CHECK_THAT(j["error"].get<std::string>(), Contains("run.log") && Contains("File too large"));
  check_whole_lines(dir / "run.log");  // the line that did not fit is cut, not left half
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv", "workers.csv"}) {
    check_whole_lines(dir / f);
  }
  CHECK_FALSE(fs::exists(dir / ".stalesgd.reserve"));
}

TEST_CASE("race CLI: a run whose run.log cannot be written ends the race in one line",
          "[output][cli][limits]") {
  TempDir dir;
  std::ofstream(dir / "race.toml") << "model = \"softmax\"\nworkers = 2\ndelay = \"const:1s\"\n"
                                      "eval_every = \"1ms\"\ntime = \"600s\"\n"
                                      "[[run]]\nlabel = \"async\"\nrule = \"async\"\n";
  const fs::path out = dir / "out";
  const auto r = run_shell(kFileSizeLimit + kCli + " race --no-progress --config " +
                           (dir / "race.toml").string() + " --out " + out.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  // The race's first line says what it runs; the error is the one line after it.
  CHECK(r.output.find("stalesgd: error: run 'async': cannot write " +
                      (out / "async" / "run.log").string() + " (File too large)\n") !=
        std::string::npos);
  CHECK(r.output.find("LOG ERROR") == std::string::npos);
  CHECK(r.output.find("internal error") == std::string::npos);
  const auto j = read_summary(out / "async");
  CHECK(j["status"] == "failed");
  CHECK_THAT(j["error"].get<std::string>(), Contains("run.log"));
}

TEST_CASE("train CLI: a file-size limit is a failed write, not a death by SIGXFSZ",
          "[output][cli][limits]") {
  // The journal outgrows 16 KiB first here. With SIGXFSZ at its default the kernel killed the
  // process mid-row (the shell's status 153); ignored, the write fails with EFBIG.
  TempDir dir;
  const auto r = run_shell(kFileSizeLimit + kCli +
                           " train --model softmax --rule async --workers 4 --delay exp:mean=1ms "
                           "--time 600s --no-progress --out " +
                           dir.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: cannot write " + dir.path().string()) &&
                           Contains("File too large"));
  const auto j = read_summary(dir.path());
  CHECK(j["status"] == "failed");
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv", "workers.csv", "run.log"}) {
    check_whole_lines(dir / f);
  }
}

TEST_CASE("train CLI: a full disk still leaves summary.json saying failed",
          "[output][cli][limits]") {
  // A 1200 KiB tmpfs (the folder's 1 MiB reserve and 176 KiB to fill: ThreadSanitizer's build
  // takes about 100 s per MiB), mounted in a mount namespace of its own (unshare: root, or any user
  // where user namespaces are allowed), filled up by the run itself: whichever file's write fails
  // first (run.log, a journal file), the run ends in one line, exit 1, and the room the folder
  // held back since the start (.stalesgd.reserve) is what workers.csv and summary.json use.
  // The mount lives only in the namespace: what the test reads is copied out of it there.
  TempDir dir;
  const std::string d = (dir / "fs").string(), seen = (dir / "seen").string();
  const std::string script = "mkdir -p " + d + " " + seen +
                             " && mount -t tmpfs -o size=1200k tmpfs " + d + " || exit 99; " +
                             kCli + kLogHeavyRun + d + "/run 2>" + seen + "/stderr; echo $? >" +
                             seen + "/status; cp " + d + "/run/summary.json " + seen + "/; ls -a " +
                             d + "/run >" + seen + "/listing";
  const auto r = run_shell("unshare --mount --map-root-user sh -c '" + script + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);  // 99: unshare or the mount failed
  const fs::path at = dir / "seen";
  const std::string stderr_text = slurp(at / "stderr");
  INFO(stderr_text);
  CHECK(slurp(at / "status") == "1\n");
  CHECK(line_count(stderr_text) == 1);
  CHECK_THAT(stderr_text,
             Contains("stalesgd: error: cannot write") && Contains("No space left on device"));
  const auto j = read_summary(at);
  CHECK(j["status"] == "failed");
  CHECK_THAT(j["error"].get<std::string>(), Contains("No space left on device"));
  const std::string listing = slurp(at / "listing");
  CHECK(listing.find("workers.csv\n") != std::string::npos);
  CHECK(listing.find(".stalesgd.reserve") == std::string::npos);
}

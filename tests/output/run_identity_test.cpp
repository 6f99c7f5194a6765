// A resumed run is the same run: --resume refuses, in one line and without changing a file, a
// checkpoint.bin from another run, a journal row edited after the checkpoint, another data set
// under --data-dir, a checkpoint whose clock or records were forged (CRC recomputed), and one
// whose flags and options digest were both rewritten (run.toml, the folder's other record).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "config/option_table.hpp"
#include "output/checkpoint.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "support/fixtures.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    // The lock file holds the pid of the last process that owned the folder.
    if (e.is_regular_file() && e.path().filename() != ".stalesgd.lock") {
      files[e.path().filename().string()] = slurp(e.path());
    }
  }
  return files;
}

// A virtual-clock run with checkpoints, ended as a kill -9 after its last checkpoint would
// leave it: no summary.json, no workers.csv, rows past the checkpoint.
void cut_run(const fs::path& dir, const std::string& seed, const std::string& time) {
  const auto r = run_shell(kCli +
                           " train --model softmax --rule k-async --k 2 --workers 4 --delay "
                           "exp:mean=10ms --clock virtual --checkpoint-every 0.4s --time " +
                           time + " --seed " + seed + " --no-progress --out " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  fs::remove(dir / "summary.json");
  fs::remove(dir / "workers.csv");
}

// Resumes `dir` (with `extra` flags), expecting a refusal: exit 1, one line containing
// `expected`, and not a byte of the folder changed.
void refused(const fs::path& dir, const std::string& expected, const std::string& extra = "") {
  const auto before = snapshot(dir);
  const auto r = run_shell(kCli + " train --no-progress --resume " + dir.string() + extra);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: ") && Contains(expected));
  CHECK(snapshot(dir) == before);
}

// Rewrites DIR/checkpoint.bin with its header changed by `edit` and a valid CRC.
template <class Edit>
void forge(const fs::path& dir, Edit edit) {
  auto payload = read_checkpoint(dir);
  REQUIRE(payload);
  StateReader in(*payload);
  CheckpointHeader h = load_header(in);
  REQUIRE(in.ok());
  StateWriter same;
  save_header(same, h);
  const std::string rest = payload->substr(same.bytes().size());
  edit(h);
  StateWriter out;
  save_header(out, h);
  REQUIRE(write_checkpoint(dir, out.bytes() + rest));
}

}  // namespace

TEST_CASE("run identity: another run's checkpoint and an edited row are refused",
          "[output][resume]") {
  TempDir a, b;
  cut_run(a.path(), "1", "3s");
  cut_run(b.path(), "2", "1s");  // shorter: its offsets fall inside a's files
  const std::string own = slurp(a / kCheckpointFile);

  const std::string own_toml = slurp(a / "run.toml");
  fs::copy_file(b / kCheckpointFile, a / kCheckpointFile, fs::copy_options::overwrite_existing);
  refused(a.path(), "checkpoint.bin is not this run's: its seed is 2, run.toml's 1");
  // With b's run.toml too, the journal files still tell.
  fs::copy_file(b / "run.toml", a / "run.toml", fs::copy_options::overwrite_existing);
  refused(a.path(), "updates.csv: its first");
  refused(a.path(), "checkpoint.bin is another run's");
  std::ofstream(a / kCheckpointFile, std::ios::binary | std::ios::trunc) << own;
  std::ofstream(a / "run.toml", std::ios::binary | std::ios::trunc) << own_toml;

  // One digit of the second update row, well before the checkpoint's offset.
  const std::string clean = slurp(a / "updates.csv");
  std::string updates = clean;
  const auto row2 = updates.find('\n', updates.find('\n') + 1) + 1;
  const auto digit = updates.find_first_of("123456789", updates.find(',', row2) + 1);
  updates[digit] = updates[digit] == '9' ? '8' : '9';
  std::ofstream(a / "updates.csv", std::ios::binary | std::ios::trunc) << updates;
  refused(a.path(), "a row was edited");

  // The same for gradients.csv, the file resumed second.
  std::ofstream(a / "updates.csv", std::ios::binary | std::ios::trunc) << clean;
  std::string gradients = slurp(a / "gradients.csv");
  gradients[gradients.find('\n') + 1] = gradients[gradients.find('\n') + 1] == '1' ? '2' : '1';
  std::ofstream(a / "gradients.csv", std::ios::binary | std::ios::trunc) << gradients;
  refused(a.path(), "gradients.csv: its first");
}

TEST_CASE("run identity: a data set other than the run's is refused", "[output][resume]") {
  TempDir run, data;
  cut_run(run.path(), "1", "1s");
  // Fashion-MNIST's files where MNIST's are expected: same names, same shapes, other data.
  fs::create_directories(data / "mnist");
  for (const auto& e : fs::directory_iterator(repo_data_dir() / "fashion-mnist")) {
    fs::copy_file(e.path(), data / "mnist" / e.path().filename());
  }
  refused(run.path(),
          "the mnist files under --data-dir " + data.path().string() +
              " are not the ones this run started on",
          " --data-dir " + data.path().string());
  // The run's own data, elsewhere: accepted.
  fs::remove_all(data / "mnist");
  fs::create_directories(data / "mnist");
  for (const auto& e : fs::directory_iterator(repo_data_dir() / "mnist")) {
    fs::copy_file(e.path(), data / "mnist" / e.path().filename());
  }
  const auto r = run_shell(kCli + " train --no-progress --resume " + run.path().string() +
                           " --data-dir " + data.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
}

TEST_CASE("run identity: a forged clock or record in a checkpoint is refused", "[output][resume]") {
  TempDir dir;
  cut_run(dir.path(), "1", "2s");
  const std::string own = slurp(dir / kCheckpointFile);
  const auto restore = [&] {
    std::ofstream(dir / kCheckpointFile, std::ios::binary | std::ios::trunc) << own;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double t : {nan, -5.0, std::numeric_limits<double>::infinity()}) {
    INFO("t = " << t);
    forge(dir.path(), [&](CheckpointHeader& h) { h.t = t; });
    refused(dir.path(), "is not a time");
    restore();
  }
  forge(dir.path(), [](CheckpointHeader& h) { h.t = 1e300; });
  refused(dir.path(), "its time 1e+300 s is past the run's --time 2 s");
  restore();
  // The last record later than the checkpoint's own time.
  forge(dir.path(), [](CheckpointHeader& h) { h.rows.updates.back().wall_s = h.t + 0.001; });
  refused(dir.path(), "not within the checkpoint's 0 to");
  restore();
  forge(dir.path(), [&](CheckpointHeader& h) { h.rows.updates.back().wall_s = nan; });
  refused(dir.path(), "not within the checkpoint's 0 to");
  restore();
  forge(dir.path(), [](CheckpointHeader& h) { h.rows.updates.back().iteration = 1u << 30; });
  refused(dir.path(), "recorded");
  restore();
  // Another run's options, as a changed default would give them.
  forge(dir.path(), [](CheckpointHeader& h) { h.options_digest = "00000000"; });
  refused(dir.path(), "are not the ones it was started with");
  restore();
  // Untouched, it resumes.
  const auto r = run_shell(kCli + " train --no-progress --resume " + dir.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
}

TEST_CASE(
    "run identity: a checkpoint whose flags and options digest were both rewritten is "
    "refused by run.toml",
    "[output][resume]") {
  TempDir dir;
  cut_run(dir.path(), "1", "2s");
  // Another --lr, and the digest this build computes for the options that --lr gives: every
  // check inside the checkpoint passes.
  std::string forged_toml;
  forge(dir.path(), [&](CheckpointHeader& h) {
    const auto lr = std::find(h.args.begin(), h.args.end(), "--lr");
    REQUIRE(lr != h.args.end());
    *std::next(lr) = "0.07";
    auto o = options_from_args(h.args);
    REQUIRE(o);
    auto resolved = ResolvedRun::resolve(*o);
    REQUIRE(resolved);
    h.options_digest = options_digest(resolved->options());
    forged_toml = options_to_toml(resolved->options());
  });
  refused(dir.path(), "checkpoint.bin is not this run's: its lr is 0.07, run.toml's 0.05");
  // run.toml gone, or not a file: the checkpoint cannot be cross-checked, so it is refused too.
  fs::remove(dir / "run.toml");
  refused(dir.path(), "run.toml is missing");
  fs::create_directory(dir / "run.toml");
  refused(dir.path(), "run.toml is not a regular file");
  fs::remove(dir / "run.toml");
  // The forgery is whole once run.toml says the same: it resumes (no other record is left to
  // tell), which shows the refusals above came from run.toml alone.
  std::ofstream(dir / "run.toml") << forged_toml;
  {
    const auto r = run_shell(kCli + " train --no-progress --resume " + dir.path().string());
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
}

// docs/reliability.md's table "Exit status and record, by fault" against the binary: each row's
// case is made to happen here, through the real process, and its exit status and summary.json
// status must be the row's. A row without a case here, or a case without a row, fails too.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  int exit_code = 0;
  std::string summary;  // summary.json's status, or "none"
};

std::string status_of(const fs::path& out) {
  std::ifstream in(out / "summary.json");
  if (!in) return "none";
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j.value("status", "?") : "?";
}

Outcome outcome(const CliResult& r, const fs::path& out) {
  return {r.exit_code, status_of(out)};
}

// A real-clock run long enough to be stopped: `signal` is sent once it has recorded updates.
Outcome signalled(const TempDir& dir, const std::string& signal) {
  const fs::path out = dir / "run";
  const auto r = run_shell(
      kCli + " train --iterations 1000000 --no-progress --out " + out.string() +
      " >/dev/null 2>&1 & p=$!; while [ \"$(wc -l < " + (out / "updates.csv").string() +
      " 2>/dev/null || echo 0)\" -lt 3 ]; do sleep 0.02; done; kill -" + signal + " $p; wait $p");
  return outcome(r, out);
}

// `stalesgd train FLAGS --out DIR/run`, its outcome.
Outcome train(const TempDir& dir, const std::string& flags, const std::string& before = "") {
  const fs::path out = dir / "run";
  return outcome(
      run_shell(before + kCli + " train --no-progress " + flags + " --out " + out.string()), out);
}

using Case = std::function<Outcome(const TempDir&)>;

const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> all{
      {"sigint", [](const TempDir& d) { return signalled(d, "INT"); }},
      {"sigterm", [](const TempDir& d) { return signalled(d, "TERM"); }},
      {"kill-9", [](const TempDir& d) { return signalled(d, "KILL"); }},
      {"sighup", [](const TempDir& d) { return signalled(d, "HUP"); }},
      {"sigusr1", [](const TempDir& d) { return signalled(d, "USR1"); }},
      {"file-size-limit",
       [](const TempDir& d) {
         // 16 KiB: the journal's rows reach it within the first hundred updates. SIGXFSZ at its
         // default in the child, as a shell's would be.
         return train(d, "--iterations 100000", "ulimit -f 16; exec env --default-signal=XFSZ ");
       }},
      {"out-of-memory",
       [](const TempDir& d) {
         return train(d, "--workers 2 --rule async --iterations 100",
                      "STALESGD_FAULT=worker:alloc ");
       }},
      {"thread-refused",
       [](const TempDir& d) {
         return train(d, "--workers 2 --rule async --iterations 100",
                      "STALESGD_FAULT=thread:threads ");
       }},
      {"diverges", [](const TempDir& d) { return train(d, "--lr 1e9 --iterations 1000"); }},
      {"thread-exception",
       [](const TempDir& d) { return train(d, "--iterations 1000", "STALESGD_FAULT=worker "); }},
      {"npz-duplicate",
       [](const TempDir& d) {
         const auto py = run_shell(
             "/usr/bin/python3 -c \"import numpy, zipfile, io, warnings; "
             "warnings.simplefilter('ignore'); p='" +
             (d / "d.npz").string() +
             "'; x=numpy.zeros((8, 2, 2), 'float32'); y=numpy.arange(8) % 2; "
             "numpy.savez(p, x_train=x, y_train=y, x_test=x, y_test=y); "
             "b=io.BytesIO(); numpy.save(b, x + 1); "
             "zipfile.ZipFile(p, 'a').writestr('x_train.npy', b.getvalue())\"");
         REQUIRE(py.exit_code == 0);
         return train(d, "--dataset npz:" + (d / "d.npz").string() + " --iterations 5");
       }},
      {"virtual-clock-stands-still",
       [](const TempDir& d) { return train(d, "--clock virtual --time 2s --delay none"); }},
      {"virtual-no-progress",
       [](const TempDir& d) {
         // A trace of zeros: the option checks cannot see that the clock will not move.
         std::ofstream(d / "zeros.csv") << "w0[ms]\n0\n0\n";
         return train(d,
                      "--model softmax --clock virtual --workers 2 --rule async --time 2s "
                      "--delay trace:" +
                          (d / "zeros.csv").string());
       }},
      {"fifo-input",
       [](const TempDir& d) {
         const fs::path fifo = d / "model.npy";
         REQUIRE(run_shell("mkfifo " + fifo.string()).exit_code == 0);
         return outcome(run_shell(kCli + " eval --model-file " + fifo.string()), d / "run");
       }},
      {"folder-in-use",
       [](const TempDir& d) {
         const fs::path out = d / "run";
         fs::create_directories(out);
         // flock(1) holds the folder's lock as a live run would, for as long as the try lasts.
         return outcome(
             run_shell("flock " + (out / ".stalesgd.lock").string() + " " + kCli +
                       " train --iterations 5 --no-progress --force --out " + out.string()),
             out);
       }},
  };
  return all;
}

struct Row {
  std::string id;
  int exit_code = 0;
  std::string summary;
};

// The table's rows: | `case` | fault | exit | `summary.json` |.
std::vector<Row> table_rows() {
  std::ifstream in(fs::path(STALESGD_SOURCE_DIR) / "docs" / "reliability.md");
  std::string line;
  bool inside = false;
  std::vector<Row> rows;
  const std::regex row(R"(^\| `([a-z0-9-]+)` \|.*\| (\d+) \| (?:`([a-z]+)`|none[^|]*) \|$)");
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) inside = line == "## Exit status and record, by fault";
    if (!inside || !line.starts_with("| `")) continue;
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_match(line, m, row));
    rows.push_back({m[1], std::stoi(m[2]), m[3].matched ? m[3].str() : "none"});
  }
  return rows;
}

}  // namespace

TEST_CASE("reliability table: every fault's exit status and summary.json are the table's",
          "[reliability][cli]") {
  const auto rows = table_rows();
  REQUIRE(rows.size() >= cases().size());
  std::set<std::string> seen;
  for (const auto& row : rows) {
    INFO("case " << row.id);
    CHECK(seen.insert(row.id).second);
    const auto it = cases().find(row.id);
    CHECK(it != cases().end());  // a row this test cannot make happen
    if (it == cases().end()) continue;
    TempDir dir;
    const Outcome got = it->second(dir);
    CHECK(got.exit_code == row.exit_code);
    CHECK(got.summary == row.summary);
  }
  for (const auto& [id, _] : cases()) {
    INFO("case " << id);
    CHECK(seen.contains(id));  // a case the table does not list
  }
}

// CsvJournal (src/serve/csv_journal.hpp): whole rows only, read as the file grows, again from
// the start when it is replaced, and rows since N re-read through the offset index; and the
// path confinement of `stalesgd serve` (src/serve/safe_path.hpp).
#include "serve/csv_journal.hpp"

#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>

#include "serve/safe_path.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::serve;
using stalesgd::test::TempDir;
namespace fs = std::filesystem;

namespace {

void append(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

// Every row refresh() hands over, as its first field.
std::vector<double> refresh_firsts(CsvJournal& j) {
  std::vector<double> out;
  j.refresh([&](std::span<const double> row) { out.push_back(row[0]); });
  return out;
}

}  // namespace

TEST_CASE("a journal row is read only once it is whole", "[serve]") {
  TempDir dir;
  const auto path = dir / "updates.csv";
  CsvJournal j(path);
  j.refresh();
  CHECK(j.rows() == 0);  // no file yet
  append(path, "iteration,wall_s,mean_staleness\n1,0.5,0\n2,0.");
  CHECK(refresh_firsts(j) == std::vector<double>{1});
  CHECK(j.columns() == std::vector<std::string>{"iteration", "wall_s", "mean_staleness"});
  CHECK(j.column("wall_s") == 1);
  CHECK(j.column("nope") == -1);
  // The half row is finished, and another begun: only the finished one counts.
  append(path, "75,1\n3,1.");
  CHECK(refresh_firsts(j) == std::vector<double>{2});
  CHECK(j.rows() == 2);
  const std::vector<std::string> wanted{"wall_s", "missing"};
  const auto cols = j.read(0, 10, wanted);
  CHECK(cols[0] == std::vector<double>{0.5, 0.75});
  CHECK(cols[1].empty());
  // A damaged field is NaN, not a crash; a short row's missing fields too.
  append(path, "0,2\nx,,\n");
  CHECK(refresh_firsts(j).size() == 2);
  const std::vector<std::string> all{"iteration", "wall_s", "mean_staleness"};
  const auto last = j.read(3, 1, all);
  CHECK(std::isnan(last[0][0]));
  CHECK(std::isnan(last[1][0]));
}

TEST_CASE("a replaced journal is read again from its start", "[serve]") {
  TempDir dir;
  const auto path = dir / "evals.csv";
  append(path, "wall_s,test_error\n0,0.9\n1,0.5\n2,0.3\n");
  CsvJournal j(path);
  j.refresh();
  CHECK(j.rows() == 3);
  const auto generation = j.generation();
  // race --force writes the file anew (a new inode); train --resume cuts it back.
  fs::remove(path);
  append(path, "wall_s,test_error\n0,0.8\n");
  CHECK(refresh_firsts(j) == std::vector<double>{0});
  CHECK(j.rows() == 1);
  CHECK(j.generation() > generation);
}

TEST_CASE("rows since N are re-read through the offset index", "[serve]") {
  TempDir dir;
  const auto path = dir / "gradients.csv";
  std::string text = "iteration,staleness\n";
  const int n = 3 * static_cast<int>(CsvJournal::kIndexStride) + 17;
  for (int i = 1; i <= n; ++i) text += std::to_string(i) + "," + std::to_string(i % 7) + "\n";
  append(path, text);
  CsvJournal j(path);
  j.refresh();
  REQUIRE(j.rows() == static_cast<std::uint64_t>(n));
  const std::vector<std::string> wanted{"iteration"};
  for (std::uint64_t first : {0ull, 1023ull, 1024ull, 2050ull, 3088ull}) {
    const auto cols = j.read(first, 5, wanted);
    REQUIRE(cols[0].size() == std::min<std::uint64_t>(5, n - first));
    CHECK(cols[0][0] == static_cast<double>(first + 1));
  }
  CHECK(j.read(n, 5, wanted)[0].empty());
}

TEST_CASE("CSV fields are split with quotes", "[serve]") {
  CHECK(split_csv_line(R"x("sync (seed 1)",sync-seed-1,"a, ""b""",)x") ==
        std::vector<std::string>{"sync (seed 1)", "sync-seed-1", "a, \"b\"", ""});
  CHECK(csv_number("0.25") == 0.25);
  CHECK(std::isnan(csv_number("")));
  CHECK(std::isnan(csv_number("1x")));
  CHECK(std::isnan(csv_number("inf")));
}

TEST_CASE("a URL path never leads out of the served folder", "[serve]") {
  TempDir dir;
  fs::create_directories(dir / "root" / "run");
  append(dir / "root" / "run" / "evals.csv", "wall_s\n");
  append(dir / "secret.txt", "no\n");
  fs::create_symlink(dir / "secret.txt", dir / "root" / "run" / "escape.csv");
  fs::create_symlink(dir / "root" / "run" / "evals.csv", dir / "root" / "inside.csv");
  const fs::path root = fs::canonical(dir / "root");
  CHECK(resolve_inside(root, "run/evals.csv").status == 200);
  CHECK(resolve_inside(root, "inside.csv").status == 200);  // a symlink that stays inside
  CHECK(resolve_inside(root, "run/escape.csv").status == 403);
  CHECK(resolve_inside(root, "../secret.txt").status == 403);
  CHECK(resolve_inside(root, "run/../../secret.txt").status == 403);
  CHECK(resolve_inside(root, (dir / "secret.txt").string()).status == 403);
  CHECK(resolve_inside(root, "run//evals.csv").status == 403);
  CHECK(resolve_inside(root, "run/nothing.csv").status == 404);
  CHECK(resolve_inside(root, "run").status == 404);  // a folder is not a file
  CHECK(is_inside(root, root / "a" / "b"));
  CHECK_FALSE(is_inside(root / "a", root / "ab"));
}

// RegularFile (src/util/regular_file.hpp): regular files are read, FIFOs and devices are
// refused without blocking and named in one line, a missing file is not a fault, a file too
// large for read_regular_file() is refused; CsvJournal reads a FIFO journal as no rows;
// open_user_file and read_user_file refuse in one line.
#include "util/regular_file.hpp"

#include <sys/stat.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "serve/csv_journal.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::serve;
using Catch::Matchers::Contains;
using stalesgd::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("RegularFile reads regular files and refuses FIFOs and devices", "[serve]") {
  TempDir dir;
  std::ofstream(dir / "a.csv") << "x\n1\n";
  const auto file = RegularFile::open(dir / "a.csv");
  REQUIRE(file.is_open());
  CHECK(file.size() == 4);
  char buf[8] = {};
  CHECK(file.read_at(2, buf, sizeof buf) == 2);
  CHECK(std::string(buf, 2) == "1\n");

  CHECK(RegularFile::open(dir / "none.csv").state() == FileState::kMissing);
  CHECK(RegularFile::open(dir / "none" / "x.csv").state() == FileState::kMissing);

  // A FIFO with no writer: opening it for reading would wait for one; it is refused at once.
  REQUIRE(::mkfifo((dir / "fifo.json").c_str(), 0600) == 0);
  const auto fifo = RegularFile::open(dir / "fifo.json");
  CHECK(fifo.state() == FileState::kRefused);
  CHECK_THAT(fifo.why(), Contains("fifo.json is a FIFO, not a regular file"));
  const auto device = RegularFile::open("/dev/zero");
  CHECK(device.state() == FileState::kRefused);
  CHECK_THAT(device.why(), Contains("/dev/zero is a character device"));
  CHECK(RegularFile::open(dir.path()).state() == FileState::kRefused);
}

TEST_CASE("read_regular_file refuses a file over its limit, or gives its first bytes", "[serve]") {
  TempDir dir;
  std::ofstream(dir / "t.txt") << "0123456789";
  CHECK(read_regular_file(dir / "t.txt", 10).bytes == "0123456789");
  const auto over = read_regular_file(dir / "t.txt", 9);
  CHECK(over.state == FileState::kRefused);
  CHECK_THAT(over.why, Contains("is over 9 bytes"));
  CHECK(read_regular_file(dir / "t.txt", 4, /*whole=*/false).bytes == "0123");
  CHECK(read_regular_file("/dev/zero", 4, /*whole=*/false).state == FileState::kRefused);
}

TEST_CASE("CsvJournal reads a FIFO journal as no rows and says why", "[serve]") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "updates.csv").c_str(), 0600) == 0);
  CsvJournal journal(dir / "updates.csv");
  journal.refresh();
  CHECK(journal.rows() == 0);
  CHECK_THAT(journal.refused(), Contains("updates.csv is a FIFO"));
  // Replaced by a regular file: read, and no longer refused.
  fs::remove(dir / "updates.csv");
  std::ofstream(dir / "updates.csv") << "iteration\n1\n2\n";
  journal.refresh();
  CHECK(journal.rows() == 2);
  CHECK(journal.refused().empty());
  const std::vector<std::string> wanted{"iteration"};
  CHECK(journal.read(0, 10, wanted)[0] == std::vector<double>{1.0, 2.0});
}

TEST_CASE("open_user_file and read_user_file refuse in one line naming the flag and the fix",
          "[util]") {
  TempDir dir;
  std::ofstream(dir / "ok.toml") << "a = 1\n";
  REQUIRE(::mkfifo((dir / "fifo.toml").c_str(), 0644) == 0);
  const auto text = read_user_file(dir / "ok.toml", "--config ok.toml", "give a file", 1024);
  REQUIRE(text);
  CHECK(*text == "a = 1\n");
  const auto refusal = [&](const fs::path& path, std::uint64_t most) {
    const auto r = read_user_file(path, "--config X", "give a file", most);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find('\n') == std::string::npos);
    return r.error().message;
  };
  CHECK(refusal(dir / "none.toml", 1024) == "--config X: file not found; give a file");
  CHECK(refusal(dir / "fifo.toml", 1024) == "--config X: not a regular file (a FIFO); give a file");
  CHECK(refusal("/dev/zero", 1024) ==
        "--config X: not a regular file (a character device); give a file");
  CHECK(refusal(dir.path(), 1024) == "--config X: not a regular file (a folder); give a file");
  CHECK(refusal(dir / "ok.toml", 3) ==
        "--config X: 6 bytes, more than the 3 such a file can hold; give a file");
}

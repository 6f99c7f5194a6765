// write_file_atomically: the file is replaced whole, and every failing step -- a process killed
// mid-write too -- leaves the old file and no temporary file behind, with the path and the
// system's reason in the message; remove_stale_temporaries removes what a dead process left.
#include "util/atomic_file.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  const auto bytes = read_bytes(path);
  return {bytes.begin(), bytes.end()};
}

int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// The message of write_file_atomically(path, contents) run in a child process whose files may
// not grow past `limit` bytes (RLIMIT_FSIZE): its writes fail with EFBIG, as on a full disk.
std::string message_with_file_size_limit(const fs::path& path, const std::string& contents,
                                         rlim_t limit) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails instead of killing
    const rlimit lim{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    const Status s = write_file_atomically(path, contents);
    const std::string m = s ? std::string("ok") : s.error().message;
    [[maybe_unused]] const auto n = ::write(fds[1], m.data(), m.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, buf + n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

}  // namespace

TEST_CASE("write_file_atomically replaces the file and leaves nothing else", "[util][atomic]") {
  TempDir dir;
  const fs::path path = dir / "results.csv";
  REQUIRE(write_file_atomically(path, "old\n").ok());
  CHECK(read_text(path) == "old\n");
  REQUIRE(write_file_atomically(path, "new,longer\n").ok());
  CHECK(read_text(path) == "new,longer\n");
  CHECK(entries(dir.path()) == 1);
  REQUIRE(write_file_atomically(path, "").ok());
  CHECK(fs::file_size(path) == 0);
}

TEST_CASE("write_file_atomically names the path when its folder is a file", "[util][atomic]") {
  TempDir dir;
  write_bytes(dir / "file", {'x'});
  const Status s = write_file_atomically(dir / "file" / "results.csv", "a\n");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message,
             Contains("cannot create " + (dir / "file").string() + "/results.csv.tmp.") &&
                 Contains("(Not a directory)"));
  CHECK(read_text(dir / "file") == "x");
}

TEST_CASE("write_file_atomically keeps the old file when the write fails", "[util][atomic]") {
  TempDir dir;
  const fs::path path = dir / "results.csv";
  REQUIRE(write_file_atomically(path, "old\n").ok());
  // Buffered: fwrite succeeds and fflush meets the limit.
  const std::string m = message_with_file_size_limit(path, std::string(100, 'y'), 16);
  CHECK_THAT(m,
             Contains("cannot write " + path.string() + ".tmp.") && Contains("(File too large)"));
  CHECK(read_text(path) == "old\n");
  CHECK(entries(dir.path()) == 1);  // the temporary file is gone
  // Unbuffered: a write larger than stdio's buffer fails in fwrite itself.
  const std::string big = message_with_file_size_limit(path, std::string(1 << 20, 'z'), 16);
  CHECK_THAT(big, Contains("cannot write") && Contains("(File too large)"));
  CHECK(read_text(path) == "old\n");
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("write_file_atomically reports a failed rename and removes its temporary file",
          "[util][atomic]") {
  TempDir dir;
  // A non-empty folder where the file should go: rename(2) refuses to replace it.
  write_bytes(dir / "results.csv" / "inside", {'x'});
  const Status s = write_file_atomically(dir / "results.csv", "a\n");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message,
             Contains("cannot rename " + (dir / "results.csv").string() + ".tmp.") &&
                 Contains(" to " + (dir / "results.csv").string() + " (") &&
                 Contains("Is a directory"));
  CHECK(entries(dir.path()) == 1);
  CHECK(fs::is_directory(dir / "results.csv"));
}

TEST_CASE("write_file_atomically: a process killed mid-write leaves the old file and no other",
          "[util][atomic]") {
  TempDir dir;
  const fs::path path = dir / "checkpoint.bin";
  REQUIRE(write_file_atomically(path, "old\n").ok());
  // SIGXFSZ's default action ends the child in its write past the limit, as kill -9 would.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit no_core{0, 0}, lim{4096, 4096};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(SIGXFSZ, SIG_DFL);
    ::setrlimit(RLIMIT_FSIZE, &lim);
    (void)write_file_atomically(path, std::string(1 << 20, 'n'));
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGXFSZ);
  CHECK(read_text(path) == "old\n");
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("remove_stale_temporaries removes a dead process's temporary files and no other",
          "[util][atomic]") {
  TempDir dir;
  // A pid that no process has: a child's, once it is reaped.
  const pid_t dead = ::fork();
  REQUIRE(dead >= 0);
  if (dead == 0) ::_exit(0);
  REQUIRE(::waitpid(dead, nullptr, 0) == dead);
  const std::string d = std::to_string(dead), live = std::to_string(::getpid());
  for (const std::string name :
       {"checkpoint.bin.tmp." + d, "summary.json.tmp." + d, "results.csv.tmp." + live,
        "notes.tmp.x" + d, std::string("checkpoint.bin")}) {
    write_text(dir / name, "x");
  }
  fs::create_directory(dir / ("kept.tmp." + d));  // not a file this code writes
  REQUIRE(remove_stale_temporaries(dir.path()).ok());
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"checkpoint.bin", "kept.tmp." + d, "notes.tmp.x" + d,
                                         "results.csv.tmp." + live});
}

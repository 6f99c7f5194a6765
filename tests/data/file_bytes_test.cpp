// read_file_bytes: a file that cannot be read is reported for what it is (missing, denied, a
// folder, a path through a file), in one line.
#include "data/file_bytes.hpp"

#include <unistd.h>

#include <cerrno>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"
#include "util/subprocess.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

TEST_CASE("read_error names the system's reason and the fix that helps", "[data][file_bytes]") {
  CHECK(read_error("d/f", ENOENT, "fetch it").message == "d/f: file not found; fetch it");
  for (int errnum : {EACCES, EPERM}) {
    const std::string m = read_error("d/f", errnum, "fetch it").message;
    CHECK(m.rfind("permission denied reading d/f; ", 0) == 0);
    CHECK_THAT(m, !Contains("fetch it"));  // fetching again would meet the same permissions
  }
  CHECK(read_error("d/f", EIO, "fetch it").message ==
        "cannot read d/f (Input/output error); fetch it");
}

TEST_CASE("read_file_bytes tells a missing file from a folder or a path through a file",
          "[data][file_bytes]") {
  TempDir dir;
  write_bytes(dir / "file", {1, 2, 3});
  auto missing = read_file_bytes(dir / "none", "fetch it");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == (dir / "none").string() + ": file not found; fetch it");
  auto through = read_file_bytes(dir / "file" / "x", "fetch it");
  REQUIRE_FALSE(through.ok());
  CHECK(through.error().message ==
        "cannot read " + (dir / "file" / "x").string() + " (Not a directory); fetch it");
  auto folder = read_file_bytes(dir.path(), "fetch it");
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error().message ==
        dir.path().string() + ": not a regular file (a folder); fetch it");
  auto bytes = read_file_bytes(dir / "file", "fetch it");
  REQUIRE(bytes.ok());
  CHECK(*bytes == std::vector<std::uint8_t>{1, 2, 3});
}

// Root reads through any permission, so the denied cases run the CLI as user nobody.
TEST_CASE("data info reports an unreadable data set as permission denied", "[data][file_bytes]") {
  if (!program_available("setpriv") || ::geteuid() != 0) {
    WARN("needs root and setpriv (util-linux) to run the CLI as user nobody; not checked");
    return;
  }
  TempDir dir;  // 0755: nobody may search it
  const fs::path mnist = dir / "mnist";
  write_bytes(mnist / "train-images-idx3-ubyte", idx_images(2, 28, 28));
  write_bytes(mnist / "train-labels-idx1-ubyte", idx_labels({0, 1}));
  auto info_as_nobody = [&] {
    return run_process({"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        STALESGD_CLI, "data", "info", "--dataset", "mnist", "--data-dir",
                        dir.path().string()});
  };
  // A file only root may read: open(2) is denied.
  fs::permissions(mnist / "train-images-idx3-ubyte",
                  fs::perms::owner_read | fs::perms::owner_write);
  auto r = info_as_nobody();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output == "stalesgd: error: permission denied reading " +
                        (mnist / "train-images-idx3-ubyte").string() +
                        "; let this user read the file and search its folders (see ls -l), or "
                        "use another --data-dir\n");
  // A folder nobody may search: stat(2) is denied, which once read "file not found".
  fs::permissions(mnist, fs::perms::owner_all);
  r = info_as_nobody();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: permission denied reading " +
                                (mnist / "train-images-idx3-ubyte").string() + ";"));
  CHECK(line_count(r.output) == 1);
}

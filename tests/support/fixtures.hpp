// Test fixtures generated on the fly: temporary directories, IDX and CIFAR-format files
// (valid and corrupt), and a runner for the `stalesgd` CLI binary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/data/dataset.hpp"

namespace stalesgd::test {

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);
// `text` as the whole file; a failed write fails the test.
void write_text(const std::filesystem::path& path, const std::string& text);
void write_gzip(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path);

// IDX byte images: header (magic, dims) + data. Pixel value of image i, pixel p is (i + p) % 256.
std::vector<std::uint8_t> idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols,
                                     std::uint32_t magic = 0x00000803);
std::vector<std::uint8_t> idx_labels(const std::vector<std::uint8_t>& labels,
                                     std::uint32_t magic = 0x00000801);
// CIFAR-10 binary records: label, then 3072 pixel bytes equal to (record + p) % 256.
std::vector<std::uint8_t> cifar_records(const std::vector<std::uint8_t>& labels);

// The path of the stalesgd binary under test, for shell command lines.
inline const std::string kCli = STALESGD_CLI;

// Runs the stalesgd binary with `args` (no shell); output is stdout + stderr merged.
struct CliResult {
  int exit_code = -1;
  std::string output;
};
CliResult run_cli(const std::vector<std::string>& args);
// Runs `command` through /bin/sh from the source tree; output is stdout + stderr merged, and
// exit_code -1 when the shell was killed by a signal.
CliResult run_shell(const std::string& command);

// A file's bytes as a string; empty when it cannot be read.
std::string slurp(const std::filesystem::path& path);

// A run's output file as bytes; for a summary.json, without its "provenance" (the command
// line, times and host of the process that wrote it), so that runs can be compared.
std::string output_bytes(const std::filesystem::path& path);

// summary.json's "status" in `dir` ("running" from a run's start until its end); empty when
// there is no summary.json.
std::string summary_status(const std::filesystem::path& dir);

// The rows of a terminal screen (tmux capture-pane) that are not blank, in order.
std::vector<std::string> screen_rows(const std::string& screen);

// Number of non-empty lines in `text`.
int line_count(const std::string& text);

// The repository's data dir (tools/test.sh fetches MNIST into it).
std::filesystem::path repo_data_dir();

// The real MNIST from repo_data_dir(), loaded once per test process.
const Dataset& mnist();

}  // namespace stalesgd::test

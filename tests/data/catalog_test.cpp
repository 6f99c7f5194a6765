// Named data sets: the real MNIST (fetched by tools/test.sh), generated CIFAR-10 under a
// data dir, and the CLI's one-line errors with non-zero exit for bad files and names.
#include "stalesgd/data/catalog.hpp"

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("real MNIST loads with the known counts and class histogram", "[data][mnist]") {
  auto ds = load_dataset("mnist", repo_data_dir());
  REQUIRE(ds.ok());
  CHECK(ds->train.count == 60000);
  CHECK(ds->test.count == 10000);
  CHECK(ds->train.shape == ImageShape{1, 28, 28});
  const auto stats = compute_stats(ds->train, 10);
  CHECK(stats.class_counts ==
        std::vector<std::size_t>{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949});
  CHECK(stats.pixel_mean == Approx(0.1307).margin(1e-4));
  CHECK(stats.pixel_std == Approx(0.3081).margin(1e-4));
}

TEST_CASE("real Fashion-MNIST loads from .gz with 6000 images per class", "[data][fashion]") {
  auto ds = load_dataset("fashion-mnist", repo_data_dir());
  REQUIRE(ds.ok());
  CHECK(ds->train.count == 60000);
  CHECK(ds->test.count == 10000);
  CHECK(compute_stats(ds->test, 10).class_counts == std::vector<std::size_t>(10, 1000));
}

TEST_CASE("cifar10 loads five train batches and a test batch from the data dir", "[data][cifar]") {
  TempDir dir;
  for (int b = 1; b <= 5; ++b) {
    write_bytes(dir / ("cifar10/data_batch_" + std::to_string(b) + ".bin"),
                cifar_records({static_cast<std::uint8_t>(b), 0}));
  }
  write_bytes(dir / "cifar10/test_batch.bin", cifar_records({7}));
  auto ds = load_dataset("cifar10", dir.path());
  REQUIRE(ds.ok());
  CHECK(ds->train.count == 10);
  CHECK(ds->test.count == 1);
  CHECK(ds->train.labels[8] == 5);
  CHECK(ds->train.shape == ImageShape{3, 32, 32});
}

TEST_CASE("unknown data set names are rejected with the list of names", "[data]") {
  CHECK_THAT(load_dataset("imagenet", "data").error().message,
             Contains("unknown data set 'imagenet'") && Contains("mnist, fashion-mnist, cifar10"));
  CHECK_FALSE(dataset_shape("svhn").ok());
  CHECK(dataset_shape("cifar10")->dim() == 3072);
}

TEST_CASE("CLI data info on corrupt files: one line, names the file, non-zero exit",
          "[data][cli]") {
  TempDir dir;
  const auto mnist = dir.path() / "mnist";
  auto good_images = idx_images(2, 28, 28);
  write_bytes(mnist / "train-labels-idx1-ubyte", idx_labels({1, 2}));
  write_bytes(mnist / "t10k-images-idx3-ubyte", good_images);
  write_bytes(mnist / "t10k-labels-idx1-ubyte", idx_labels({3, 4}));

  SECTION("truncated IDX file") {
    auto bytes = good_images;
    bytes.resize(bytes.size() - 100);
    write_bytes(mnist / "train-images-idx3-ubyte", bytes);
    auto r = run_cli({"data", "info", "--dataset", "mnist", "--data-dir", dir.path().string()});
    CHECK(r.exit_code != 0);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("train-images-idx3-ubyte: truncated") &&
                             Contains("stalesgd data fetch mnist --data-dir"));
  }
  SECTION("wrong magic number") {
    write_bytes(mnist / "train-images-idx3-ubyte", idx_images(2, 28, 28, 0x12345678));
    auto r = run_cli({"data", "info", "--dataset", "mnist", "--data-dir", dir.path().string()});
    CHECK(r.exit_code != 0);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("wrong magic number 0x12345678"));
  }
  SECTION("valid tiny files print the info") {
    write_bytes(mnist / "train-images-idx3-ubyte", good_images);
    auto r = run_cli({"data", "info", "--dataset", "mnist", "--data-dir", dir.path().string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Contains("train       2") && Contains("train class counts  0 1 1 0"));
  }
}

TEST_CASE("CLI rejects a CIFAR file whose size is not a multiple of 3073", "[data][cli]") {
  TempDir dir;
  for (int b = 1; b <= 5; ++b) {
    write_bytes(dir / ("cifar10/data_batch_" + std::to_string(b) + ".bin"), cifar_records({1}));
  }
  auto bytes = cifar_records({1, 2});
  bytes.resize(4000);
  write_bytes(dir / "cifar10/test_batch.bin", bytes);
  auto r = run_cli({"data", "info", "--dataset", "cifar10", "--data-dir", dir.path().string()});
  CHECK(r.exit_code != 0);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("test_batch.bin: size 4000 bytes is not a positive multiple"));
}

TEST_CASE("CLI rejects unknown names, commands and flags in one line", "[data][cli]") {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"data", "info", "--dataset", "svhn"},
                                             {"data", "fetch", "svhn"},
                                             {"data", "info", "--datset", "mnist"},
                                             {"data", "info"},
                                             {"data", "list"},
                                             {"frobnicate"}}) {
    auto r = run_cli(args);
    INFO(args.front() << " ...: " << r.output);
    CHECK(r.exit_code != 0);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error:"));
  }
}

TEST_CASE("CLI cifar10 fetch without files says where to get them", "[data][cli]") {
  TempDir dir;
  auto r = run_cli({"data", "fetch", "cifar10", "--data-dir", dir.path().string()});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("cifar-10-binary.tar.gz") && Contains("data_batch_1.bin") &&
                           Contains("--download"));
}

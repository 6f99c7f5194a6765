#include "stalesgd/data/catalog.hpp"

#include <fmt/format.h>

#include "data/cifar.hpp"
#include "data/idx.hpp"

namespace stalesgd {

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names{"mnist", "fashion-mnist", "cifar10"};
  return names;
}

Status check_dataset_name(std::string_view name) {
  for (const auto& n : dataset_names()) {
    if (n == name) return {};
  }
  return Error{
      fmt::format("unknown data set '{}'; use one of: mnist, fashion-mnist, cifar10", name)};
}

Result<ImageShape> dataset_shape(std::string_view name) {
  if (auto s = check_dataset_name(name); !s) return s.error();
  if (name == "cifar10") return kCifarShape;
  return ImageShape{1, 28, 28};
}

Result<int> dataset_classes(std::string_view name) {
  if (auto s = check_dataset_name(name); !s) return s.error();
  return 10;
}

Result<Dataset> load_dataset(std::string_view name, const std::filesystem::path& data_dir) {
  if (auto s = check_dataset_name(name); !s) return s.error();
  Dataset ds;
  ds.name = std::string(name);
  ds.num_classes = *dataset_classes(name);
  const std::filesystem::path dir = data_dir / ds.name;
  const std::string dir_flag =
      data_dir == "data" ? "" : fmt::format(" --data-dir {}", data_dir.string());
  const std::string fix = fmt::format("run `stalesgd data fetch {}{}`", ds.name, dir_flag);

  std::uint32_t train_crc = 0, test_crc = 0;
  if (name == "cifar10") {
    std::vector<std::filesystem::path> train_files;
    for (int b = 1; b <= 5; ++b) train_files.push_back(dir / fmt::format("data_batch_{}.bin", b));
    auto train = load_cifar_split(train_files, fix, &train_crc);
    if (!train) return train.error();
    auto test = load_cifar_split({dir / "test_batch.bin"}, fix, &test_crc);
    if (!test) return test.error();
    ds.train = std::move(train).value();
    ds.test = std::move(test).value();
  } else {
    IdxExpect expect{ImageShape{1, 28, 28}, ds.num_classes, fix};
    auto train = load_idx_split(dir / "train-images-idx3-ubyte", dir / "train-labels-idx1-ubyte",
                                expect, &train_crc);
    if (!train) return train.error();
    auto test = load_idx_split(dir / "t10k-images-idx3-ubyte", dir / "t10k-labels-idx1-ubyte",
                               expect, &test_crc);
    if (!test) return test.error();
    ds.train = std::move(train).value();
    ds.test = std::move(test).value();
  }
  ds.digest = fmt::format("{:08x}{:08x}", train_crc, test_crc);
  return ds;
}

}  // namespace stalesgd

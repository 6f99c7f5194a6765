#include "stalesgd/data/catalog.hpp"

#include <fmt/format.h>

#include "data/cifar.hpp"
#include "data/idx.hpp"
#include "data/npz.hpp"

namespace stalesgd {
namespace {

constexpr std::string_view kNpzPrefix = "npz:";

std::filesystem::path npz_path(std::string_view name) {
  return std::filesystem::path(name.substr(kNpzPrefix.size()));
}

}  // namespace

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names{"mnist", "fashion-mnist", "cifar10"};
  return names;
}

Status check_dataset_name(std::string_view name) {
  if (is_npz_name(name)) {
    if (name.size() > kNpzPrefix.size()) return {};
    return Error{"--dataset npz: needs the path of an .npz file after it, e.g. npz:data/mine.npz"};
  }
  for (const auto& n : dataset_names()) {
    if (n == name) return {};
  }
  return Error{fmt::format(
      "unknown data set '{}'; use one of: mnist, fashion-mnist, cifar10, or npz:PATH for your "
      "own arrays in an .npz file",
      name)};
}

bool is_npz_name(std::string_view name) {
  return name.starts_with(kNpzPrefix);
}

std::string absolute_dataset_name(std::string_view name) {
  if (!is_npz_name(name) || name.size() == kNpzPrefix.size()) return std::string(name);
  std::error_code ec;
  const auto path = std::filesystem::absolute(npz_path(name), ec);
  return ec ? std::string(name) : std::string(kNpzPrefix) + path.lexically_normal().string();
}

Status check_fetchable_name(std::string_view name) {
  if (auto s = check_dataset_name(name); !s) return s;
  if (!is_npz_name(name)) return {};
  return Error{fmt::format(
      "{} is a local .npz file, which `stalesgd data fetch` does not fetch; use it as it is: "
      "--dataset {}",
      name, name)};
}

Result<ImageShape> dataset_shape(std::string_view name) {
  if (auto s = check_dataset_name(name); !s) return s.error();
  if (is_npz_name(name)) {
    auto info = read_npz_info(npz_path(name));
    if (!info) return info.error();
    return info->shape;
  }
  if (name == "cifar10") return kCifarShape;
  return ImageShape{1, 28, 28};
}

Result<int> dataset_classes(std::string_view name) {
  if (auto s = check_dataset_name(name); !s) return s.error();
  if (is_npz_name(name)) {
    auto info = read_npz_info(npz_path(name));
    if (!info) return info.error();
    return info->num_classes;
  }
  return 10;
}

Result<Dataset> load_dataset(std::string_view name, const std::filesystem::path& data_dir) {
  if (auto s = check_dataset_name(name); !s) return s.error();
  if (is_npz_name(name)) return load_npz_dataset(npz_path(name), std::string(name));
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

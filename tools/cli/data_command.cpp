// `stalesgd data fetch` and `stalesgd data info`.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "data/npz.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/data/fetch.hpp"

namespace stalesgd::cli {

int run_data_fetch(const DataArgs& args) {
  // A name not in the catalog, or an npz file (there is nothing to fetch), is a bad value
  // (exit 2); a failed fetch is a failure (exit 1).
  if (auto s = check_fetchable_name(args.dataset); !s) return fail(s.error().message, 2);
  FetchOptions options;
  options.data_dir = args.data_dir;
  options.download = args.download;
  auto result = fetch_dataset(args.dataset, options);
  if (!result) return fail(result.error().message);
  fmt::print("{}\n", *result);
  return 0;
}

int run_data_info(const DataArgs& args) {
  if (auto s = check_dataset_name(args.dataset); !s) return fail(s.error().message, 2);
  auto ds = load_dataset(args.dataset, args.data_dir);
  if (!ds) return fail(ds.error().message);
  const auto& shape = ds->train.shape;
  fmt::print("data set    {}\n", ds->name);
  fmt::print("train       {}\n", ds->train.count);
  fmt::print("test        {}\n", ds->test.count);
  fmt::print("image       {}x{}x{} (channels x height x width)\n", shape.channels, shape.height,
             shape.width);
  if (is_npz_name(args.dataset)) {
    // What the reader decided (its checks, src/data/npz_checks.hpp), from the same file.
    auto info = read_npz_info(args.dataset.substr(std::string_view("npz:").size()));
    if (!info) return fail(info.error().message);
    fmt::print("layout      x {}\n", info->layout);
    fmt::print("features    {}\n", info->scale);
    fmt::print("classes     {} ({})\n", ds->num_classes, info->classes);
  } else {
    fmt::print("classes     {}\n", ds->num_classes);
  }
  for (const auto* split : {&ds->train, &ds->test}) {
    const auto stats = compute_stats(*split, ds->num_classes);
    fmt::print("{} class counts  {}\n", split == &ds->train ? "train" : "test ",
               fmt::join(stats.class_counts, " "));
    fmt::print("{} pixel mean {:.4f}  std {:.4f}\n", split == &ds->train ? "train" : "test ",
               stats.pixel_mean, stats.pixel_std);
  }
  return 0;
}

}  // namespace stalesgd::cli

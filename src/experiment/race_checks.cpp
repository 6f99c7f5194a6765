// What a race checks before it trains anything: its runs (check_race) and its --out folder
// (check_race_out). A bad run found after the first run has trained would cost that run's time
// and leave no results.csv.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "engine/mpi/mpi_runtime.hpp"
#include "output/folder_lock.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/experiment/race.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

// An mpi run needs a build with MPI.
Status check_mpi(const ExperimentRun& r) {
  if (!mpi::available()) {
    return Error{
        fmt::format("run '{}': engine = \"mpi\" needs Open MPI, which this build was "
                    "configured without: install openmpi-bin libopenmpi-dev "
                    "(tools/setup.sh does) and rebuild (tools/build.sh)",
                    r.label)};
  }
  // P = worker ranks x workers_per_rank is checked with the other options, at load time.
  return {};
}

// The run's model, built as train() will build it, for images of `shape`.
Status check_model(const ExperimentRun& r, const ImageShape& shape, int classes) {
  auto model = make_model(r.options().model, shape, classes);
  if (!model) return Error{fmt::format("run '{}': {}", r.label, model.error().message)};
  return {};
}

}  // namespace

Result<RaceData> check_race(const Experiment& ex) {
  RaceData data;
  for (const auto& r : ex.runs) {
    const auto& o = r.options();
    if (o.engine == EngineKind::kMpi) {
      if (auto s = check_mpi(r); !s) return s.error();
      // Its ranks load the data themselves, possibly on other hosts (a hostfile): check the
      // model against the catalog's shape, and leave the files to them.
      auto shape = dataset_shape(o.dataset);
      auto classes = dataset_classes(o.dataset);
      if (!shape) return Error{fmt::format("run '{}': {}", r.label, shape.error().message)};
      if (!classes) return Error{fmt::format("run '{}': {}", r.label, classes.error().message)};
      if (auto s = check_model(r, *shape, *classes); !s) return s.error();
      continue;
    }
    const auto key = std::make_pair(o.dataset, o.data_dir.string());
    auto it = data.find(key);
    if (it == data.end()) {
      auto ds = load_dataset(o.dataset, o.data_dir);
      if (!ds) return Error{fmt::format("run '{}': {}", r.label, ds.error().message)};
      it = data.emplace(key, std::move(ds).value()).first;
    }
    const Dataset& ds = it->second;
    if (auto s = check_model(r, ds.train.shape, ds.num_classes); !s) return s.error();
    if (o.holdout >= ds.train.count) {
      return Error{fmt::format("run '{}': holdout = {} leaves no training sample: {} has {}",
                               r.label, o.holdout, ds.name, ds.train.count)};
    }
    if (static_cast<std::size_t>(o.batch) > ds.train.count - o.holdout) {
      return Error{
          fmt::format("run '{}': batch = {} is larger than the {} training samples of {}{}; "
                      "give a smaller batch",
                      r.label, o.batch, ds.train.count - o.holdout, ds.name,
                      o.holdout > 0 ? " left by the holdout" : "")};
    }
  }
  return data;
}

Status check_race_out(const fs::path& out, ExistingOut existing) {
  std::error_code ec;
  const fs::file_status st = fs::status(out, ec);
  if (st.type() == fs::file_type::not_found) {
    // The race creates it: its nearest existing ancestor must be a folder this user can write
    // (checked here so that --dry-run finds it too).
    fs::path parent = fs::absolute(out, ec).parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.root_path()) {
      parent = parent.parent_path();
    }
    if (!fs::is_directory(parent, ec) || ::access(parent.c_str(), W_OK) != 0) {
      return Error{
          fmt::format("cannot create --out {}: {} is not a folder this user can write; "
                      "give a writable --out",
                      out.string(), parent.string())};
    }
    return {};
  }
  if (ec) {
    return Error{fmt::format("cannot use --out {} ({}); give a folder this user can write",
                             out.string(), ec.message())};
  }
  if (!fs::is_directory(st)) {
    return Error{fmt::format("--out {} is a file, not a folder; give a folder for the race's runs",
                             out.string())};
  }
  fs::directory_iterator it(out, ec);
  if (ec) {
    return Error{fmt::format("cannot read --out {} ({}); give a folder this user can write",
                             out.string(), ec.message())};
  }
  if (::access(out.c_str(), W_OK) != 0) {
    return Error{fmt::format("cannot write into --out {} ({}); give a folder this user can write",
                             out.string(), std::strerror(errno))};
  }
  // The lock file a process left (FolderLock) is not a run's file.
  bool empty = true;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename() != FolderLock::kFile) empty = false;
  }
  if (empty || existing != ExistingOut::kRefuse) return {};
  return Error{
      fmt::format("--out {} already holds files, which this race's runs would "
                  "mix with; give a new folder, or add --force to write into it (files of the "
                  "same names are replaced), or --resume to finish the race that is there",
                  out.string())};
}

}  // namespace stalesgd

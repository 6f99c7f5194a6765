// RunJournal: the CSV journal of a run and the durable write of its closing files.
#include "output/run_journal.hpp"
#include "output/summary_status.hpp"

#include "util/atomic_file.hpp"
#include "util/crc32.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

constexpr const char* kUpdatesHeader =
    "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss,drift_sq,grad_sq\n";
constexpr const char* kGradientsHeader =
    "iteration,worker,computed_on_version,staleness,duration_s\n";
// Newer columns last: readers of the older ones, by name or by position, still work.
constexpr const char* kEvalsHeader =
    "wall_s,iteration,train_loss,test_loss,test_error,train_objective,val_loss,val_error,"
    "scored_s,test_samples,train_samples\n";

// A column not recorded (NaN) as an empty field, else as %.6g.
std::string empty_if_nan(double v) {
  return std::isnan(v) ? std::string() : fmt::format("{:.6g}", v);
}

// Every file a run writes into its folder: what --force removes and what makes a folder "hold a
// run" for the refusal.
constexpr const char* kRunFiles[] = {
    "summary.json",    "updates.csv",        "gradients.csv", "evals.csv",
    "workers.csv",     "checkpoint.bin",     "run.log",       "summary.json.tmp",
    "workers.csv.tmp", "checkpoint.bin.tmp", "run.toml",      "run.toml.tmp"};

// Room held back for the end of a run: on a full disk (or quota) the journal's and run.log's
// writes fail first, and removing this file frees the space workers.csv and summary.json need
// to record the failure (docs/reliability.md). 1 MiB holds both for some 20,000 workers.
constexpr const char* kReserveFile = ".stalesgd.reserve";
constexpr off_t kReserveBytes = off_t{1} << 20;

// The CRC-32 of a file's first `n` bytes into `crc`; false (errno set) when a read fails.
bool crc_of_prefix(int fd, std::uint64_t n, std::uint32_t& crc) {
  std::vector<char> buf(1 << 20);
  crc = 0;
  for (std::uint64_t at = 0; at < n;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), n - at));
    const ssize_t got = ::pread(fd, buf.data(), want, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) {  // shorter than its size said a moment ago
      errno = EIO;
      return false;
    }
    crc = crc32_of(std::string_view(buf.data(), static_cast<std::size_t>(got)), crc);
    at += static_cast<std::uint64_t>(got);
  }
  return true;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<std::unique_ptr<RunJournal>> RunJournal::open(const fs::path& dir, Existing existing,
                                                     const JournalOffsets& offsets) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Error{fmt::format("cannot create --out {}: {}; pass a writable folder", dir.string(),
                             ec.message())};
  }
  if (existing == Existing::kRefuse) {
    // A folder holds a run once its training started: what a run refused or killed before its
    // first update left (headers, run.log) is replaced without asking.
    // A summary.json saying "running" is the start of a run killed before it ended: its
    // checkpoint or its rows decide, below. One saying "failed" before the first update holds
    // nothing either (output/summary_status.hpp).
    const bool holds = read_summary_status(dir).holds_run();
    for (const char* name : {"summary.json", "checkpoint.bin"}) {
      if ((std::string_view(name) != "summary.json" || holds) && fs::exists(dir / name, ec)) {
        return Error{fmt::format(
            "--out {} already holds a run ({}); pass --force to replace it, --resume {} to "
            "continue it, or another --out",
            dir.string(), name, dir.string())};
      }
    }
    for (const auto& [name, header] :
         {std::pair{"updates.csv", kUpdatesHeader}, std::pair{"gradients.csv", kGradientsHeader}}) {
      const auto size = fs::file_size(dir / name, ec);
      if (!ec && size > std::strlen(header)) {
        return Error{fmt::format(
            "--out {} holds a run cut before its first checkpoint ({} has rows, there is no "
            "checkpoint.bin to resume from); pass --force to start it again, or another --out",
            dir.string(), name)};
      }
    }
    existing = Existing::kOverwrite;
  }
  if (existing == Existing::kOverwrite) {
    for (const char* name : kRunFiles) {
      if (std::remove((dir / name).c_str()) != 0 && errno != ENOENT) {
        return file_error("cannot remove", dir / name, errno);
      }
    }
  }
  std::unique_ptr<RunJournal> j(new RunJournal(dir));
  const auto open_one = [&](File& file, const char* name, const char* header,
                            std::uint64_t bytes_at, std::uint32_t crc_at, std::uint64_t& bytes,
                            std::uint32_t& crc) -> Status {
    file.path = dir / name;
    if (existing != Existing::kContinue) {
      file.fd = ::open(file.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (file.fd < 0) return file_error("cannot write", file.path, errno);
      return j->write(file, header, bytes, crc);
    }
    // --resume: the file up to the checkpoint must be the bytes this run wrote (an edited row
    // or another run's checkpoint.bin would splice two histories). Only checked here; cut
    // below, once every file passed, so that a refusal changes nothing.
    file.fd = ::open(file.path.c_str(), O_RDWR | O_CLOEXEC);
    if (file.fd < 0) return file_error("cannot open for appending", file.path, errno);
    const auto size = fs::file_size(file.path, ec);
    if (ec || size < bytes_at) {
      return Error{fmt::format(
          "{} holds {} bytes but the checkpoint recorded {}: the run folder was changed after "
          "the checkpoint; start the run again with --force",
          file.path.string(), ec ? 0 : size, bytes_at)};
    }
    std::uint32_t prefix = 0;
    if (!crc_of_prefix(file.fd, bytes_at, prefix)) {
      return file_error("cannot read", file.path, errno);
    }
    if (prefix != crc_at) {
      return Error{fmt::format(
          "{}: its first {} bytes are not the ones this run wrote before its checkpoint (a row "
          "was edited, or checkpoint.bin is another run's); restore the file, or start the run "
          "again with --force",
          file.path.string(), bytes_at)};
    }
    file.flushed = bytes = bytes_at;
    crc = crc_at;
    return {};
  };
  if (existing == Existing::kContinue) j->offsets_ = offsets;
  JournalOffsets& at = j->offsets_;
  Status s = open_one(j->updates_, "updates.csv", kUpdatesHeader, offsets.update_bytes,
                      offsets.update_crc, at.update_bytes, at.update_crc);
  if (s) {
    s = open_one(j->gradients_, "gradients.csv", kGradientsHeader, offsets.gradient_bytes,
                 offsets.gradient_crc, at.gradient_bytes, at.gradient_crc);
  }
  if (s) {
    s = open_one(j->evals_, "evals.csv", kEvalsHeader, offsets.eval_bytes, offsets.eval_crc,
                 at.eval_bytes, at.eval_crc);
  }
  if (s && existing == Existing::kContinue) {
    // The rows after the checkpoint are written again, so they are cut off; an interrupted
    // run being resumed is unfinished again until its new summary.json (first "running").
    for (File* file : {&j->updates_, &j->gradients_, &j->evals_}) {
      if (::ftruncate(file->fd, static_cast<off_t>(file->flushed)) != 0 ||
          ::lseek(file->fd, 0, SEEK_END) < 0) {
        return file_error("cannot cut back", file->path, errno);
      }
    }
    if (std::remove((dir / "summary.json").c_str()) != 0 && errno != ENOENT) {
      return file_error("cannot remove", dir / "summary.json", errno);
    }
  }
  // What a process killed mid-write left (checkpoint.bin.tmp.PID and the like) goes, now that
  // the folder is this run's (docs/reliability.md).
  if (s) s = remove_stale_temporaries(dir);
  if (s) s = j->flush();
  if (s) s = j->hold_reserve();
  if (!s) return s.error();
  return j;
}

RunJournal::~RunJournal() {
  for (File* file : {&updates_, &gradients_, &evals_}) {
    if (file->fd >= 0) ::close(file->fd);
  }
  release_reserve();
}

Status RunJournal::hold_reserve() {
  const fs::path path = dir_ / kReserveFile;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return file_error("cannot write", path, errno);
  // posix_fallocate returns the error; it writes zeros where the file system cannot allocate.
  const int err = ::posix_fallocate(fd, 0, kReserveBytes);
  ::close(fd);
  if (err == 0) {
    reserved_ = true;
    return {};
  }
  std::remove(path.c_str());
  // A file-size limit (ulimit -f, EFBIG) is per file: the closing files need no room held for
  // them. A folder without 1 MiB to spare is refused now rather than failing mid-run.
  if (err == EFBIG) return {};
  return file_error("cannot write", path, err);
}

void RunJournal::release_reserve() {
  if (!reserved_) return;
  reserved_ = false;
  std::remove((dir_ / kReserveFile).c_str());  // at worst a later run's open reuses it
}

Status RunJournal::write(File& file, std::string_view text, std::uint64_t& bytes,
                         std::uint32_t& crc) {
  if (!error_) return error_;
  file.pending.append(text);
  bytes += text.size();
  crc = crc32_of(text, crc);
  constexpr std::size_t kBuffer = 1 << 16;
  if (file.pending.size() >= kBuffer) return flush(file);
  return {};
}

Status RunJournal::flush(File& file) {
  if (!error_) return error_;
  std::size_t done = 0;
  while (done < file.pending.size()) {
    const ssize_t n = ::write(file.fd, file.pending.data() + done, file.pending.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      // Cut the rows this write left half-done: the file ends at a row boundary.
      (void)!::ftruncate(file.fd, static_cast<off_t>(file.flushed));
      error_ = file_error("cannot write", file.path, err);
      return error_;
    }
    done += static_cast<std::size_t>(n);
  }
  file.flushed += file.pending.size();
  file.pending.clear();
  return {};
}

Status RunJournal::append(std::span<const UpdateRecord> rows) {
  if (rows.empty()) return error_;
  fmt::memory_buffer out;
  for (const auto& u : rows) {
    // drift_sq and grad_sq empty where not recorded (--record-drift) or none was stale.
    fmt::format_to(std::back_inserter(out), "{},{:.6f},{},{:.4f},{},{:.6g},{:.6g},{},{}\n",
                   u.iteration, u.wall_s, u.n_grads, u.mean_staleness, u.max_staleness, u.lr,
                   u.minibatch_loss, empty_if_nan(u.drift_sq), empty_if_nan(u.grad_sq));
  }
  if (auto s = write(updates_, fmt::to_string(out), offsets_.update_bytes, offsets_.update_crc); !s)
    return s;
  offsets_.update_rows += rows.size();
  return maybe_flush();
}

Status RunJournal::append(std::span<const GradientRecord> rows) {
  if (rows.empty()) return error_;
  fmt::memory_buffer out;
  for (const auto& g : rows) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{:.9f}\n", g.iteration, g.worker,
                   g.computed_on, g.staleness, g.duration_s);
  }
  if (auto s =
          write(gradients_, fmt::to_string(out), offsets_.gradient_bytes, offsets_.gradient_crc);
      !s)
    return s;
  offsets_.gradient_rows += rows.size();
  return maybe_flush();
}

Status RunJournal::append(std::span<const EvalRecord> rows) {
  if (rows.empty()) return error_;
  fmt::memory_buffer out;
  for (const auto& e : rows) {
    fmt::format_to(std::back_inserter(out),
                   "{:.6f},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{:.6f},{},{}\n", e.wall_s,
                   e.iteration, e.train_loss, e.test_loss, e.test_error, e.train_objective,
                   empty_if_nan(e.val_loss), empty_if_nan(e.val_error), e.scored_s, e.test_samples,
                   e.train_samples);
  }
  if (auto s = write(evals_, fmt::to_string(out), offsets_.eval_bytes, offsets_.eval_crc); !s)
    return s;
  offsets_.eval_rows += rows.size();
  return maybe_flush();
}

Status RunJournal::maybe_flush() {
  constexpr std::int64_t kFlushEveryNs = 500'000'000;
  if (now_ns() - last_flush_ns_ < kFlushEveryNs) return error_;
  return flush();
}

Status RunJournal::flush() {
  for (File* file : {&updates_, &gradients_, &evals_}) {
    if (auto st = flush(*file); !st) return st;
  }
  last_flush_ns_ = now_ns();
  return {};
}

Status RunJournal::close() {
  Status s = flush();
  for (File* file : {&updates_, &gradients_, &evals_}) {
    if (file->fd < 0) continue;
    if (s && ::fsync(file->fd) != 0) s = file_error("cannot sync", file->path, errno);
    if (::close(file->fd) != 0 && s) s = file_error("cannot close", file->path, errno);
    file->fd = -1;
  }
  if (s) s = sync_folder(dir_);
  if (!s && error_) error_ = s;
  return s;
}

}  // namespace stalesgd

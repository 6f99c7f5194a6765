// LogFileSink: run.log's spdlog sink. Each message goes to the OS whole with one checked
// write(2), so that a write that fails (a full disk, a quota, ulimit -f) is kept as a value the
// run polls and ends on, as a journal write that fails (docs/reliability.md), instead of
// spdlog's file sink throwing from whichever thread logged. A line cut short is cut back: the
// file ends at a whole line.
//
// Thread safety: log() and flush() from any thread (base_sink's mutex); failed() and failure()
// from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "stalesgd/util/result.hpp"

namespace stalesgd::logging {

class LogFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens `path` for appending (created if missing); an Error names it and the OS error.
  static Result<std::shared_ptr<LogFileSink>> open(const std::filesystem::path& path);
  ~LogFileSink() override;

  // Whether a write failed; from then on nothing more is written.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The first failure's line ("cannot write PATH (OS error)"); empty while none.
  std::string failure() const { return failed() ? failure_ : std::string(); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}  // every line is written at once

 private:
  LogFileSink(std::filesystem::path path, int fd, off_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::filesystem::path path_;
  int fd_;
  off_t size_;  // the file's length, all of it whole lines (under the sink's mutex)
  // Written once, under the sink's mutex, before failed_ is set.
  std::string failure_;
  // Release when set, acquire when read: a reader that sees it set sees failure_ whole.
  std::atomic<bool> failed_{false};
};

}  // namespace stalesgd::logging

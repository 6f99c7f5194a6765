// Logging (docs/cli.md, "Logging and progress"). The CLI's messages go to spdlog's default
// logger, which writes to stderr at the level -q, -v or --log-level chose. A run with --out
// gets a RunLog: its own logger writing to stderr (same level) and to DIR/run.log (debug and
// up), which the run's threads log through (TrainIo::log, engine/train_io.hpp), so that runs side
// by side (race
// --jobs) keep separate logs.
//
// Thread safety: set_stderr_level() before any thread logs; loggers and sinks are the _mt
// kinds, safe from any thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "stalesgd/util/result.hpp"

namespace stalesgd::logging {

class LogFileSink;

// Installs the default logger (first call) and sets what stderr shows: info unless -q, -v or
// --log-level said otherwise.
void set_stderr_level(spdlog::level::level_enum level);
spdlog::level::level_enum stderr_level();

// "trace", "debug", "info", "warn", "error", "off" (also "warning", "critical").
Result<spdlog::level::level_enum> parse_level(std::string_view text);

// A run folder's run.log, appended to while this object lives (a resumed run continues it).
class RunLog {
 public:
  // Opens DIR/run.log; an Error names the path and the OS error.
  static Result<std::unique_ptr<RunLog>> open(const std::filesystem::path& dir);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // Logs to stderr (at its level) and run.log.
  const std::shared_ptr<spdlog::logger>& logger() const { return logger_; }
  // Logs to run.log only: what stderr shows another way (the error line, the live progress).
  void record(spdlog::level::level_enum level, std::string_view message);
  // Whether a write to run.log failed (never thrown: the run polls this and ends as on a failed
  // journal write, docs/reliability.md), and its one line ("cannot write PATH (OS error)").
  // From any thread.
  bool failed() const;
  std::string failure() const;

 private:
  RunLog(std::shared_ptr<LogFileSink> file, spdlog::sink_ptr sink,
         std::shared_ptr<spdlog::logger> logger)
      : file_(std::move(file)), sink_(std::move(sink)), logger_(std::move(logger)) {}
  std::shared_ptr<LogFileSink> file_;  // run.log itself: its write failures
  spdlog::sink_ptr sink_;              // what writes to it: file_ behind the escaping of lines
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace stalesgd::logging

// spdlog's default logger for the CLI and one logger per run folder (stderr + run.log).
#include "util/logging.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "util/live_line.hpp"
#include "util/log_escape.hpp"
#include "util/log_file_sink.hpp"

namespace stalesgd::logging {
namespace {

// spdlog's stderr sink, with the live progress line erased before each message and redrawn
// after (util/live_line.hpp): the two never run together on a terminal.
class LiveLineSink final : public spdlog::sinks::sink {
 public:
  LiveLineSink() : inner_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {
    inner_->set_level(spdlog::level::trace);  // this sink's own level filters
  }
  void log(const spdlog::details::log_msg& msg) override {
    live_line::around([&] { inner_->log(msg); });
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> inner_;
};

// The one stderr sink every logger shares, so that -q, -v and --log-level apply to all.
const spdlog::sink_ptr& stderr_sink() {
  static const spdlog::sink_ptr sink = [] {
    auto s = std::make_shared<LiveLineSink>();
    s->set_pattern("%^[%H:%M:%S] %l:%$ %v");
    s->set_level(spdlog::level::info);
    return s;
  }();
  return sink;
}

void install_default_logger() {
  static const bool installed = [] {
    auto logger = std::make_shared<spdlog::logger>("stalesgd", stderr_sink());
    logger->set_level(spdlog::level::trace);  // the sink filters
    spdlog::set_default_logger(std::move(logger));
    return true;
  }();
  (void)installed;
}

}  // namespace

void set_stderr_level(spdlog::level::level_enum level) {
  install_default_logger();
  stderr_sink()->set_level(level);
}

spdlog::level::level_enum stderr_level() {
  return stderr_sink()->level();
}

Result<spdlog::level::level_enum> parse_level(std::string_view text) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace},       {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},         {"warn", spdlog::level::warn},
      {"warning", spdlog::level::warn},      {"error", spdlog::level::err},
      {"critical", spdlog::level::critical}, {"off", spdlog::level::off}};
  for (const auto& [name, level] : kLevels) {
    if (text == name) return level;
  }
  return Error{fmt::format("--log-level '{}' is not trace, debug, info, warn, error or off", text)};
}

Result<std::unique_ptr<RunLog>> RunLog::open(const std::filesystem::path& dir) {
  auto opened = LogFileSink::open(dir / "run.log");
  if (!opened) return opened.error();
  std::shared_ptr<LogFileSink> file = std::move(opened).value();
  // One line per message, whatever it echoes (util/log_escape.hpp); the file sink below it
  // checks every write.
  auto escaping = std::make_shared<EscapingSink>(file);
  // UTC with milliseconds, so that run.log lines up with summary.json's times; debug and up
  // (snapshots, checkpoints), or finer when stderr is.
  escaping->set_formatter(std::make_unique<spdlog::pattern_formatter>(
      "%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc));
  escaping->set_level(std::min(spdlog::level::debug, stderr_level()));
  auto logger =
      std::make_shared<spdlog::logger>("run", spdlog::sinks_init_list{stderr_sink(), escaping});
  logger->set_level(spdlog::level::trace);  // the sinks filter
  // Every line reaches the file at once (`tail -f run.log` follows a run), its write checked.
  return std::unique_ptr<RunLog>(
      new RunLog(std::move(file), std::move(escaping), std::move(logger)));
}

RunLog::~RunLog() = default;

void RunLog::record(spdlog::level::level_enum level, std::string_view message) {
  if (!sink_->should_log(level)) return;
  sink_->log(spdlog::details::log_msg("run", level, message));
}

bool RunLog::failed() const {
  return file_->failed();
}

std::string RunLog::failure() const {
  return file_->failure();
}

}  // namespace stalesgd::logging

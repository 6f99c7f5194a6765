// run.log's lines are one line each, whatever a message echoes (docs/outputs.md, run.log): a
// path, a label or a delay spec the user gave may hold a newline or another control
// character, which written raw would split a line or forge one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/sinks/sink.h>

namespace stalesgd::logging {

// `text` with each control character (below 0x20, and 0x7f) as a C escape: \n, \r, \t, else
// \xHH. Backslashes stay as they are: what matters is that no line is split; the command line,
// which must read back exactly, is quoted with $'...' by shell_quoted (output/provenance.hpp).
std::string escape_controls(std::string_view text);

// A sink that passes each message through escape_controls() to `inner`. Thread safety: as
// `inner` (the _mt sinks are safe from any thread); the wrapper keeps no state of its own but
// its level, which spdlog's base keeps atomic.
class EscapingSink final : public spdlog::sinks::sink {
 public:
  explicit EscapingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {
    inner_->set_level(spdlog::level::trace);  // this sink's own level filters
  }
  void log(const spdlog::details::log_msg& msg) override;
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  spdlog::sink_ptr inner_;
};

}  // namespace stalesgd::logging

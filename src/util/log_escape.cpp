// Control characters in log messages written as C escapes (util/log_escape.hpp).
#include "util/log_escape.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/details/log_msg.h>

namespace stalesgd::logging {
namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

}  // namespace

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (!is_control(c)) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

void EscapingSink::log(const spdlog::details::log_msg& msg) {
  const std::string_view payload(msg.payload.data(), msg.payload.size());
  if (std::none_of(payload.begin(), payload.end(), is_control)) return inner_->log(msg);
  const std::string escaped = escape_controls(payload);
  spdlog::details::log_msg copy = msg;
  copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
  inner_->log(copy);
}

}  // namespace stalesgd::logging

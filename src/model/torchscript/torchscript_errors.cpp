// One line from a LibTorch message (torchscript_errors.hpp). A TorchScript traceback reads
//   File "model.py", line 19, in forward
//       h = h.view(-1, 3)
//           ~~~~~~ <--- HERE
//   RuntimeError: shape '[-1, 3]' is invalid for input of size 16
// with the innermost frame last: its code line and the final exception line make the summary.
#include "model/torchscript/torchscript_errors.hpp"

#include <c10/util/Exception.h>

#include <regex>
#include <sstream>
#include <vector>

namespace stalesgd::model {
namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

}  // namespace

std::string message_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

std::string summary_line(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // The exception line: "RuntimeError: ...", "torch.jit.Error: ...", the last such.
  static const std::regex kException(R"(^\s*[A-Za-z_][\w.]*(Error|Exception)\b.*)");
  static const std::regex kFrame(R"re(^\s*File "([^"]*)", line (\d+)(, in .*)?$)re");
  std::string exception, code, where;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, kFrame)) {
      where = m[1].str() + ", line " + m[2].str();
      code.clear();
    } else if (lines[i].find("<--- HERE") != std::string::npos && i > 0 && !where.empty()) {
      code = trim(lines[i - 1]);
    } else if (std::regex_match(lines[i], kException)) {
      exception = trim(lines[i]);
    }
  }
  if (exception.empty()) {
    for (const auto& line : lines) {
      if (!trim(line).empty()) return trim(line);
    }
    return "no message";
  }
  if (where.empty()) return exception;
  if (code.empty()) return exception + " (" + where + ")";
  return exception + " (at `" + code + "`, " + where + ")";
}

}  // namespace stalesgd::model

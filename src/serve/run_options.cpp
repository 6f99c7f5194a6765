// A run's options before its summary.json: run.log's command line, and the theory from them.
#include "serve/run_options.hpp"

#include <algorithm>

#include "config/option_table.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "util/regular_file.hpp"

namespace stalesgd::serve {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxCommandLineBytes = 1 << 16;

// Words of a command line as a POSIX shell splits them (run.log quotes them so): '...'
// literal, \x escapes x.
std::vector<std::string> shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\'') {
        quoted = false;
      } else {
        word += c;
      }
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace

std::map<std::string, std::string> settings_from_run_log(const fs::path& path) {
  std::map<std::string, std::string> out;
  // Only the first line counts, and a command line is far shorter than this.
  const auto file = read_regular_file(path, kMaxCommandLineBytes, /*whole=*/false);
  if (file.state != FileState::kOpen) return out;
  const std::string line = file.bytes.substr(0, file.bytes.find('\n'));
  auto start = line.find(" start: ");
  if (start == std::string::npos) start = line.find(" resume: ");
  if (start == std::string::npos) return out;
  const auto words = shell_words(std::string_view(line).substr(line.find(':', start + 1) + 1));
  // Only `train`'s flags describe the run; a race's run has runs.csv instead.
  const auto train = std::find(words.begin(), words.end(), "train");
  if (train == words.end()) return out;
  for (auto it = train + 1; it != words.end(); ++it) {
    if (!it->starts_with("--")) continue;
    std::string flag = it->substr(2), value;
    const auto eq = flag.find('=');
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    const OptionDecl* d = find_option(flag);
    if (d == nullptr) continue;
    if (d->type == OptionType::kSwitch) {
      value = "true";
    } else if (eq == std::string::npos) {
      if (std::next(it) == words.end()) break;
      value = *++it;
    }
    out[option_key(*d)] = value;
  }
  return out;
}

std::optional<nlohmann::json> predict_from_settings(
    const std::map<std::string, std::string>& settings) {
  TrainerOptions options;
  for (const auto& [key, value] : settings) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const OptionDecl* d = find_option(flag);
    // runs.csv leaves an option a run does not have empty (an mlp's hidden of a softmax). A
    // plug-in a run names is never loaded here, which would run code the served folder names:
    // its rules are known when serve's own --plugin loaded it.
    if (d == nullptr || value.empty() || key == "plugin") continue;
    if (!set_from_text(*d, value, options)) return std::nullopt;
  }
  auto run = ResolvedRun::resolve(std::move(options));
  if (!run) return std::nullopt;
  const auto p = predict_runtime(*run);
  if (!p) return std::nullopt;
  return nlohmann::json{{"seconds_per_iteration", p->seconds_per_iteration},
                        {"method", to_string(p->method)},
                        {"formula", p->formula}};
}

}  // namespace stalesgd::serve

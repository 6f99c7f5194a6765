// A run's options as text columns (run_config.hpp).
#include "experiment/run_config.hpp"

#include "config/option_table.hpp"
#include "experiment/setting.hpp"

namespace stalesgd {

RunConfig run_config(const TrainerOptions& options) {
  RunConfig config;
  for (const auto& d : train_options()) {
    if (!d.json || !d.get(options)) continue;
    config.emplace_back(option_key(d), option_text(d, options));
  }
  return config;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c;
    if (c == '"') quoted += '"';
  }
  return quoted + "\"";
}

}  // namespace stalesgd

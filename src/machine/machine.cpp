// The machine model's values (stalesgd/machine/machine.hpp): the link and server-time specs, the
// machine file, and the checks each source passes.
#include "stalesgd/machine/machine.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "stalesgd/straggler/duration.hpp"
#include "util/atomic_file.hpp"
#include "util/regular_file.hpp"

namespace stalesgd {
namespace {

constexpr int kFileFormat = 1;

// "key=value,key=value" into pairs; an empty part or one without '=' is an error.
Result<std::vector<std::pair<std::string, std::string>>> key_values(std::string_view spec,
                                                                    std::string_view what) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    const std::string_view part = spec.substr(0, comma);
    const auto eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error{fmt::format("{}: '{}' is not key=value", what, part)};
    }
    out.emplace_back(std::string(part.substr(0, eq)), std::string(part.substr(eq + 1)));
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
  }
  return out;
}

Result<double> parse_bandwidth(const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || p == text.data()) {
    return Error{fmt::format("bandwidth '{}' is not a number with a unit, e.g. 1Gbit", text)};
  }
  std::string unit(p, end);
  if (unit.size() > 2 && unit.ends_with("/s")) unit.resize(unit.size() - 2);
  static const std::vector<std::pair<std::string_view, double>> kUnits{
      {"bit", 1.0}, {"kbit", 1e3}, {"Mbit", 1e6}, {"Gbit", 1e9},
      {"B", 8.0},   {"kB", 8e3},   {"MB", 8e6},   {"GB", 8e9}};
  for (const auto& [name, bits] : kUnits) {
    if (unit != name) continue;
    const double bps = value * bits;
    if (!std::isfinite(bps) || bps <= 0.0) {
      return Error{fmt::format("bandwidth '{}' must be positive and finite", text)};
    }
    return bps;
  }
  return Error{fmt::format(
      "bandwidth '{}' has an unknown unit '{}'; use bit, kbit, Mbit, Gbit, B, kB, MB or GB "
      "(per second)",
      text, unit)};
}

Result<double> duration_value(const std::string& text, std::string_view what) {
  auto d = parse_duration(text);
  if (!d) return Error{fmt::format("{} '{}': {}", what, text, d.error().message)};
  return *d;
}

}  // namespace

double Link::seconds(double bytes) const {
  return latency_s + copy_seconds(bytes);
}

double Link::copy_seconds(double bytes) const {
  return bandwidth_bps > 0.0 ? 8.0 * bytes / bandwidth_bps : 0.0;
}

namespace {
// "10.5us", "1.2ms": three digits, for a line (format_duration is exact, and long).
std::string short_duration(double s) {
  if (s == 0.0) return "0s";
  if (s < 1e-3) return fmt::format("{:.3g}us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3g}ms", s * 1e3);
  return fmt::format("{:.3g}s", s);
}
}  // namespace

std::string Machine::describe() const {
  if (free()) {
    return compute_s > 0.0 ? fmt::format(
                                 "free (a core per worker, no server time, no network), "
                                 "C = {}",
                                 short_duration(compute_s))
                           : "free (a core per worker, no server time, no network)";
  }
  std::string out = cores == 0 ? "a core per worker" : fmt::format("{} cores", cores);
  out += fmt::format(", server {}/gradient + {}/update", short_duration(server_gradient_s),
                     short_duration(server_update_s));
  if (cores > 0 && contention > 1.0) {
    out += fmt::format(", contention {:.2f} on {} cores", contention, contention_cores);
  }
  if (shards > 1) out += fmt::format(", {} shards", shards);
  if (compute_s > 0.0) out += fmt::format(", C = {}", short_duration(compute_s));
  if (!link.free()) {
    out += fmt::format(", link {}", short_duration(link.latency_s));
    if (link.bandwidth_bps > 0.0) out += fmt::format(" {:g} Gbit/s", link.bandwidth_bps / 1e9);
    if (link.memory) out += " (memory)";
  }
  return out;
}

Result<Link> parse_link(std::string_view spec) {
  Link link;
  if (spec == "none") return link;
  auto parts = key_values(spec, fmt::format("--link '{}'", spec));
  if (!parts) return parts.error();
  for (const auto& [key, value] : *parts) {
    if (key == "latency") {
      auto d = duration_value(value, "--link latency");
      if (!d) return d.error();
      link.latency_s = *d;
    } else if (key == "bandwidth") {
      auto b = parse_bandwidth(value);
      if (!b) return Error{"--link " + b.error().message};
      link.bandwidth_bps = *b;
    } else if (key == "medium") {
      if (value != "network" && value != "memory") {
        return Error{fmt::format("--link medium '{}' must be network or memory", value)};
      }
      link.memory = value == "memory";
    } else {
      return Error{fmt::format(
          "--link '{}': unknown key '{}'; use latency=, bandwidth= and medium=", spec, key)};
    }
  }
  return link;
}

Result<ServerTime> parse_server_time(std::string_view spec) {
  ServerTime t;
  if (spec.find('=') == std::string_view::npos) {
    auto d = duration_value(std::string(spec), "--server-time");
    if (!d) return d.error();
    t.gradient_s = t.update_s = *d;
    return t;
  }
  auto parts = key_values(spec, fmt::format("--server-time '{}'", spec));
  if (!parts) return parts.error();
  for (const auto& [key, value] : *parts) {
    auto d = duration_value(value, "--server-time " + key);
    if (!d) return d.error();
    if (key == "gradient") {
      t.gradient_s = *d;
    } else if (key == "update") {
      t.update_s = *d;
    } else {
      return Error{fmt::format(
          "--server-time '{}': unknown key '{}'; use gradient= and update= (or one duration)", spec,
          key)};
    }
  }
  return t;
}

Status check_machine(const Machine& m) {
  const auto finite = [](double v) { return std::isfinite(v) && v >= 0.0; };
  if (m.cores < 0) return Error{fmt::format("cores {} must be at least 1", m.cores)};
  if (m.shards < 1) return Error{fmt::format("shards {} must be at least 1", m.shards)};
  if (!finite(m.server_gradient_s) || !finite(m.server_update_s)) {
    return Error{"the server's time must be finite and not negative"};
  }
  if (!finite(m.compute_s)) return Error{"the compute time must be finite and not negative"};
  if (!(m.contention >= 1.0) || !std::isfinite(m.contention) || m.contention_cores < 1) {
    return Error{"the contention must be finite and at least 1, on at least 1 core"};
  }
  if (!finite(m.link.latency_s) || !finite(m.link.bandwidth_bps)) {
    return Error{"the link's latency and bandwidth must be finite and not negative"};
  }
  return {};
}

Result<Machine> read_machine_file(const std::filesystem::path& path, std::string_view model) {
  const std::string where = "--machine " + path.string();
  const auto text =
      read_user_file(path, where, "write one with `stalesgd calibrate`", kTextFileMost);
  if (!text) return text.error();
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("machine_format")) {
    return Error{fmt::format("{}: not a machine file; write one with `stalesgd calibrate`", where)};
  }
  Machine m;
  try {
    if (j.at("machine_format").get<int>() != kFileFormat) {
      return Error{fmt::format("{}: machine file format {} is not {}; calibrate again", where,
                               j.at("machine_format").dump(), kFileFormat)};
    }
    m.model = j.at("model").get<std::string>();
    m.parameters = j.at("parameters").get<std::uint64_t>();
    m.compute_s = j.at("compute_s").get<double>();
    m.server_gradient_s = j.at("server_gradient_s").get<double>();
    m.server_update_s = j.at("server_update_s").get<double>();
    m.cores = j.value("cores", 0);
    m.contention = j.value("contention", 1.0);
    m.contention_cores = j.value("contention_cores", 1);
    m.shards = j.value("shards", 1);
    m.link.latency_s = j.value("link_latency_s", 0.0);
    m.link.bandwidth_bps = j.value("link_bandwidth_bps", 0.0);
    const std::string medium = j.value("link_medium", std::string("network"));
    if (medium != "network" && medium != "memory") {
      return Error{fmt::format("{}: link_medium '{}' is not network or memory", where, medium)};
    }
    m.link.memory = medium == "memory";
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}: a value is missing or of the wrong type ({})", where, e.what())};
  }
  if (auto s = check_machine(m); !s) return Error{fmt::format("{}: {}", where, s.error().message)};
  if (!model.empty() && m.model != model) {
    return Error{
        fmt::format("{} was calibrated for --model {}, not {}; run `stalesgd calibrate --model {}`",
                    where, m.model, model, model)};
  }
  return m;
}

Status write_machine_file(const std::filesystem::path& path, const Machine& m,
                          const std::string& calibration) {
  nlohmann::json j;
  j["machine_format"] = kFileFormat;
  j["model"] = m.model;
  j["parameters"] = m.parameters;
  j["compute_s"] = m.compute_s;
  j["server_gradient_s"] = m.server_gradient_s;
  j["server_update_s"] = m.server_update_s;
  j["cores"] = m.cores;
  j["contention"] = m.contention;
  j["contention_cores"] = m.contention_cores;
  j["shards"] = m.shards;
  j["link_latency_s"] = m.link.latency_s;
  j["link_bandwidth_bps"] = m.link.bandwidth_bps;
  j["link_medium"] = m.link.memory ? "memory" : "network";
  if (!calibration.empty()) j["calibration"] = nlohmann::json::parse(calibration);
  return write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace stalesgd

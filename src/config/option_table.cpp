// The option table of `stalesgd train` and the parsers that apply CLI text and TOML values
// through it, and turn TrainerOptions back into summary.json's "config".
#include "config/option_table.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {

constexpr std::string_view kDataGroup = "Data and model";
constexpr std::string_view kServerGroup = "Parameter server";
constexpr std::string_view kBudgetGroup = "Budget (the first reached stops the run)";
constexpr std::string_view kEngineGroup = "Engine and output";

constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();
// make_model's hidden layers when --model mlp gets no --hidden (src/model/factory.cpp).
const std::vector<int> kDefaultHidden{128};

// How a TrainerOptions field of type F is held in an OptionValue.
template <class F>
using Stored = std::conditional_t<
    std::is_same_v<F, bool>, bool,
    std::conditional_t<
        std::is_floating_point_v<F>, double,
        std::conditional_t<
            std::is_integral_v<F> && std::is_unsigned_v<F>, std::uint64_t,
            std::conditional_t<
                std::is_integral_v<F>, std::int64_t,
                std::conditional_t<std::is_same_v<F, std::filesystem::path>, std::string, F>>>>>;

// The member reached by a path of member pointers: member_of<&A::b, &B::c>(a) is a.b.c.
template <auto First, auto... Rest>
auto& member_of(auto& object) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*First;
  } else {
    return member_of<Rest...>(object.*First);
  }
}

template <auto... Path>
void set_field(TrainerOptions& o, const OptionValue& v) {
  auto& field = member_of<Path...>(o);
  using F = std::remove_reference_t<decltype(field)>;
  field = static_cast<F>(std::get<Stored<F>>(v));
}

template <auto... Path>
std::optional<OptionValue> get_field(const TrainerOptions& o) {
  const auto& field = member_of<Path...>(o);
  using F = std::remove_cvref_t<decltype(field)>;
  if constexpr (std::is_same_v<F, std::filesystem::path>) {
    return OptionValue{field.string()};
  } else {
    return OptionValue{static_cast<Stored<F>>(field)};
  }
}

// A declaration whose setter and getter go straight to the field at Path.
template <auto... Path>
OptionDecl field(OptionDecl d) {
  d.set = set_field<Path...>;
  d.get = get_field<Path...>;
  return d;
}

const std::string& word(const OptionValue& v) {
  return std::get<std::string>(v);
}

// GCC 12 warns about designated initializers that leave members to their default initializers,
// which is what every entry below means to do.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<OptionDecl> make_table() {
  using T = OptionType;
  using O = TrainerOptions;
  std::vector<OptionDecl> t;
  // clang-format off
  t.push_back(field<&O::dataset>({.name = "dataset", .type = T::kString, .default_text = "mnist",
      .help = "mnist | fashion-mnist | cifar10", .group = kDataGroup}));
  t.push_back(field<&O::data_dir>({.name = "data-dir", .type = T::kString, .default_text = "data",
      .help = "Directory holding the data sets", .group = kDataGroup}));
  t.push_back(field<&O::model, &ModelSpec::name>({.name = "model", .type = T::kString,
      .default_text = "softmax", .help = "softmax | mlp | lenet | cifar-cnn", .group = kDataGroup}));
  t.push_back({.name = "hidden", .type = T::kIntList,
      .help = "mlp hidden layer sizes, e.g. 256,128 (default 128)", .group = kDataGroup,
      .min = 1, .max = 1 << 16,
      .set = [](O& o, const OptionValue& v) { o.model.hidden = std::get<std::vector<int>>(v); },
      .get = [](const O& o) -> std::optional<OptionValue> {
        if (!o.model.hidden.empty()) return o.model.hidden;
        if (o.model.name == "mlp") return kDefaultHidden;
        return std::nullopt;
      }});
  t.push_back(field<&O::model, &ModelSpec::l2>({.name = "l2", .type = T::kNumber,
      .default_text = "0", .help = "L2 coefficient lambda (adds lambda/2 ||W||^2)", .group = kDataGroup}));

  t.push_back(field<&O::rule, &RuleSpec::name>({.name = "rule", .type = T::kString,
      .default_text = "sync", .help = "sync | k-sync | k-batch-sync | async | k-async | k-batch-async",
      .group = kServerGroup}));
  t.push_back(field<&O::workers>({.name = "workers", .type = T::kInteger, .default_text = "1",
      .help = "Number of worker threads P", .group = kServerGroup, .min = 1, .max = 4096}));
  // No default text: K = 0 in RuleSpec means "the rule's own", which the user cannot write.
  t.push_back(field<&O::rule, &RuleSpec::k>({.name = "k", .type = T::kInteger,
      .help = "Gradients per update K, 1 <= K <= P (sync: P, async: 1)", .group = kServerGroup,
      .min = 1, .max = 4096, .expects = "an integer K with 1 <= K <= P"}));
  t.push_back(field<&O::batch>({.name = "batch", .type = T::kInteger, .default_text = "32",
      .help = "Minibatch size per gradient", .group = kServerGroup, .min = 1, .max = 65536}));
  t.push_back(field<&O::lr>({.name = "lr", .type = T::kNumber, .default_text = "0.05",
      .help = "Learning rate (the cap lr_max for --lr-rule dutta:...)", .group = kServerGroup}));
  t.push_back(field<&O::lr_rule>({.name = "lr-rule", .type = T::kString, .default_text = "fixed",
      .help = "fixed | step:every=N,factor=F | exp:decay=D | inv-staleness | dutta:c=C",
      .group = kServerGroup}));
  t.push_back(field<&O::delay>({.name = "delay", .type = T::kString, .default_text = "none",
      .help = "Straggler delay spec, e.g. 'exp:mean=10ms' (docs/stragglers.md)", .group = kServerGroup}));
  t.push_back({.name = "delay-mode", .type = T::kChoice, .default_text = "pad",
      .help = "pad: a minibatch takes max(compute, X); add: compute + X", .group = kServerGroup,
      .choices = {"pad", "add"},
      .set = [](O& o, const OptionValue& v) {
        o.delay_mode = word(v) == "pad" ? DelayMode::kPad : DelayMode::kAdd;
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(to_string(o.delay_mode))};
      }});
  t.push_back(field<&O::adasync_every_s>({.name = "adasync-every", .type = T::kDuration,
      .default_text = "0s",
      .help = "AdaSync for k-sync/k-async: every T raise K to min(P, ceil(K0 sqrt(F0/Ft))), "
              "K0 = --k (0s = off)",
      .group = kServerGroup}));
  t.push_back(field<&O::seed>({.name = "seed", .type = T::kUnsigned, .default_text = "1",
      .help = "Seed for initialisation, sampling and delays", .group = kServerGroup}));

  t.push_back(field<&O::iterations>({.name = "iterations", .type = T::kUnsigned,
      .default_text = "0", .help = "Number of server updates (0 = no limit)", .group = kBudgetGroup}));
  t.push_back(field<&O::time_s>({.name = "time", .type = T::kDuration, .default_text = "0s",
      .help = "Training time, e.g. 60s (virtual seconds with --clock virtual; 0s = no limit)",
      .group = kBudgetGroup}));
  t.push_back(field<&O::target_error>({.name = "target-error", .type = T::kNumber,
      .default_text = "0",
      .help = "Stop once the test error is at most this, e.g. 0.08 (needs --iterations or --time "
              "as a cap; 0 = off)",
      .group = kBudgetGroup}));

  t.push_back({.name = "clock", .type = T::kChoice, .default_text = "real",
      .help = "real: threads and sleeps; virtual: discrete-event clock, repeatable",
      .group = kEngineGroup, .choices = {"real", "virtual"},
      .set = [](O& o, const OptionValue& v) {
        o.clock = word(v) == "real" ? ClockKind::kReal : ClockKind::kVirtual;
      },
      // A --sequential run has no clock of its own; the reader of summary.json learns it here.
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(o.sequential ? "sequential" : to_string(o.clock))};
      }});
  t.push_back({.name = "server", .type = T::kChoice, .default_text = "inline",
      .help = "Real clock: where the server runs: inline (the delivering worker runs the server "
              "step; fastest on few cores), thread (a dedicated server thread), hogwild (async "
              "only: lock-free in-place updates)",
      .group = kEngineGroup, .choices = {"inline", "thread", "hogwild"},
      .set = [](O& o, const OptionValue& v) {
        o.server = word(v) == "inline"   ? ServerPlacement::kInline
                   : word(v) == "thread" ? ServerPlacement::kThread
                                         : ServerPlacement::kHogwild;
      },
      .get = [](const O& o) -> std::optional<OptionValue> {
        return OptionValue{std::string(to_string(o.server))};
      }});
  t.push_back(field<&O::compute_time_s>({.name = "compute-time", .type = T::kDuration,
      .default_text = "0s", .help = "Virtual clock: the time one gradient's compute takes",
      .group = kEngineGroup}));
  t.push_back(field<&O::sequential>({.name = "sequential", .type = T::kSwitch,
      .default_text = "false", .help = "Plain SGD in one thread without a server (the P = 1 reference)",
      .group = kEngineGroup, .toml = false}));
  t.push_back(field<&O::eval_every_s>({.name = "eval-every", .type = T::kDuration,
      .default_text = "0.5s", .help = "Time between parameter snapshots for evaluation",
      .group = kEngineGroup}));
  t.push_back(field<&O::eval_test_samples>({.name = "eval-samples", .type = T::kUnsigned,
      .default_text = "0", .help = "Test samples per evaluation (0 = all)", .group = kEngineGroup}));
  // Where this invocation writes and what it shows: not part of what is trained.
  t.push_back(field<&O::out_dir>({.name = "out", .type = T::kString,
      .help = "Directory for updates.csv, gradients.csv, evals.csv, workers.csv, summary.json",
      .group = kEngineGroup, .toml = false, .json = false}));
  t.push_back({.name = "no-progress", .type = T::kSwitch, .default_text = "false",
      .help = "No progress line on stderr", .group = kEngineGroup, .toml = false, .json = false,
      .set = [](O& o, const OptionValue& v) { o.progress = !std::get<bool>(v); },
      .get = [](const O& o) -> std::optional<OptionValue> { return !o.progress; }});
  // clang-format on
  return t;
}
#pragma GCC diagnostic pop

bool is_integral_type(OptionType type) {
  return type == OptionType::kInteger || type == OptionType::kUnsigned;
}

// "pad or add", "inline, thread or hogwild"; TOML quotes the words as strings.
std::string choice_list(const OptionDecl& d, bool toml) {
  std::string s;
  for (std::size_t i = 0; i < d.choices.size(); ++i) {
    if (i > 0) s += i + 1 == d.choices.size() ? " or " : ", ";
    s += toml ? fmt::format("\"{}\"", d.choices[i]) : std::string(d.choices[i]);
  }
  return s;
}

// What a valid value looks like, after "must be ".
std::string expects(const OptionDecl& d, bool toml) {
  if (!d.expects.empty()) return std::string(d.expects);
  switch (d.type) {
    case OptionType::kString:
      return "a string";
    case OptionType::kInteger:
      return d.max == kNoMax ? fmt::format("an integer >= {}", d.min)
                             : fmt::format("an integer from {} to {}", d.min, d.max);
    case OptionType::kUnsigned:
      return "an integer >= 0";
    case OptionType::kNumber:
      return "a finite number";
    case OptionType::kDuration:
      return toml ? "a duration string with a unit, e.g. \"20s\" or \"500ms\""
                  : "a duration with a unit, e.g. 20s or 500ms";
    case OptionType::kChoice:
      return choice_list(d, toml);
    case OptionType::kIntList:
      return toml ? fmt::format("an array of integers from {} to {}, e.g. [256, 128]", d.min, d.max)
                  : fmt::format("a comma-separated list of integers from {} to {}, e.g. 256,128",
                                d.min, d.max);
    case OptionType::kSwitch:
      return "true or false";
  }
  return "?";
}

Error must_be(const OptionDecl& d, bool toml) {
  return Error{"must be " + expects(d, toml)};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The whole of `text` as a T, or nullopt.
template <class T>
std::optional<T> parse_whole(std::string_view text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Range and finiteness checks shared by the CLI and TOML paths.
Result<OptionValue> checked_integer(const OptionDecl& d, std::int64_t v, bool toml) {
  if (v < d.min || v > d.max) return must_be(d, toml);
  return OptionValue{v};
}

Result<OptionValue> checked_list(const OptionDecl& d, std::vector<std::int64_t> items, bool toml) {
  std::vector<int> list;
  if (items.empty()) return must_be(d, toml);
  for (std::int64_t v : items) {
    if (v < d.min || v > d.max) return must_be(d, toml);
    list.push_back(static_cast<int>(v));
  }
  return OptionValue{std::move(list)};
}

Result<OptionValue> checked_choice(const OptionDecl& d, std::string_view w, bool toml) {
  for (std::string_view c : d.choices) {
    if (c == w) return OptionValue{std::string(w)};
  }
  return must_be(d, toml);
}

// The value of CLI `text`; the error is "must be ..." or parse_duration's message.
Result<OptionValue> parse_text(const OptionDecl& d, std::string_view text) {
  const std::string_view t = trim(text);
  switch (d.type) {
    case OptionType::kString:
      return OptionValue{std::string(text)};
    case OptionType::kInteger: {
      auto v = parse_whole<std::int64_t>(t);
      if (!v) return must_be(d, false);
      return checked_integer(d, *v, false);
    }
    case OptionType::kUnsigned: {
      auto v = parse_whole<std::uint64_t>(t);
      if (!v) return must_be(d, false);
      return OptionValue{*v};
    }
    case OptionType::kNumber: {
      auto v = parse_whole<double>(t);
      if (!v || !std::isfinite(*v)) return must_be(d, false);
      return OptionValue{*v};
    }
    case OptionType::kDuration: {
      auto v = parse_duration(t);
      if (!v) return v.error();
      return OptionValue{*v};
    }
    case OptionType::kChoice:
      return checked_choice(d, t, false);
    case OptionType::kIntList: {
      std::vector<std::int64_t> items;
      for (std::size_t start = 0;;) {
        const std::size_t comma = t.find(',', start);
        auto v = parse_whole<std::int64_t>(trim(t.substr(start, comma - start)));
        if (!v) return must_be(d, false);
        items.push_back(*v);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return checked_list(d, std::move(items), false);
    }
    case OptionType::kSwitch:
      if (t == "true" || t == "false") return OptionValue{t == "true"};
      return must_be(d, false);
  }
  return must_be(d, false);
}

// The value of a TOML node; types must match exactly (a string is never read as a number).
Result<OptionValue> parse_toml(const OptionDecl& d, const toml::node& n) {
  switch (d.type) {
    case OptionType::kString:
    case OptionType::kChoice: {
      auto v = n.value_exact<std::string>();
      if (!v) return must_be(d, true);
      if (d.type == OptionType::kChoice) return checked_choice(d, *v, true);
      return OptionValue{*v};
    }
    case OptionType::kInteger:
    case OptionType::kUnsigned: {
      auto v = n.value_exact<std::int64_t>();
      if (!v) return must_be(d, true);
      if (d.type == OptionType::kInteger) return checked_integer(d, *v, true);
      if (*v < 0) return must_be(d, true);
      return OptionValue{static_cast<std::uint64_t>(*v)};
    }
    case OptionType::kNumber: {
      if (!n.is_integer() && !n.is_floating_point()) return must_be(d, true);
      auto v = n.value<double>();  // integers widen
      if (!v || !std::isfinite(*v)) return must_be(d, true);
      return OptionValue{*v};
    }
    case OptionType::kDuration: {
      auto v = n.value_exact<std::string>();
      if (!v) return must_be(d, true);
      auto s = parse_duration(*v);
      if (!s) return Error{fmt::format("must be {}: {}", expects(d, true), s.error().message)};
      return OptionValue{*s};
    }
    case OptionType::kIntList: {
      const auto* a = n.as_array();
      if (a == nullptr) return must_be(d, true);
      std::vector<std::int64_t> items;
      for (const auto& e : *a) {
        auto v = e.value_exact<std::int64_t>();
        if (!v) return must_be(d, true);
        items.push_back(*v);
      }
      return checked_list(d, std::move(items), true);
    }
    case OptionType::kSwitch: {
      auto v = n.value_exact<bool>();
      if (!v) return must_be(d, true);
      return OptionValue{*v};
    }
  }
  return must_be(d, true);
}

// The value as the user wrote it in a message: bare when it is a number, else quoted.
std::string shown(const OptionDecl& d, std::string_view text) {
  const bool number = (is_integral_type(d.type) || d.type == OptionType::kNumber) &&
                      !text.empty() &&
                      text.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
  return number ? std::string(text) : fmt::format("'{}'", text);
}

}  // namespace

std::span<const OptionDecl> train_options() {
  static const std::vector<OptionDecl> table = make_table();
  return table;
}

const OptionDecl* find_option(std::string_view name) {
  for (const auto& d : train_options()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string option_key(const OptionDecl& option) {
  std::string key(option.name);
  for (char& c : key) {
    if (c == '-') c = '_';
  }
  return key;
}

Status set_from_text(const OptionDecl& option, std::string_view text, TrainerOptions& options) {
  auto v = parse_text(option, text);
  if (!v) {
    return Error{fmt::format("--{} {}: {}", option.name, shown(option, text), v.error().message)};
  }
  option.set(options, *v);
  return {};
}

void set_switch(const OptionDecl& option, bool on, TrainerOptions& options) {
  option.set(options, OptionValue{on});
}

Status set_from_toml(const OptionDecl& option, const toml::node& node, TrainerOptions& options) {
  auto v = parse_toml(option, node);
  if (!v) return v.error();
  option.set(options, *v);
  return {};
}

nlohmann::json options_to_json(const TrainerOptions& options) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& d : train_options()) {
    if (!d.json) continue;
    if (auto v = d.get(options)) {
      j[option_key(d)] = std::visit([](const auto& x) { return nlohmann::json(x); }, *v);
    }
  }
  return j;
}

}  // namespace stalesgd

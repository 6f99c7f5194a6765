// The option table of `stalesgd train`: defaults, keys, CLI text and TOML values agree, --help
// lists every flag, and repeated flags and mistyped TOML values are refused.
#include "config/option_table.hpp"

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/option_samples.hpp"
#include "stalesgd/experiment/experiment.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

// A TOML value of the wrong type for `option`.
std::string wrong_toml(const OptionDecl& option) {
  switch (option.type) {
    case OptionType::kString:
    case OptionType::kChoice:
    case OptionType::kDuration:
      return "5";
    default:
      return "\"5\"";
  }
}

std::filesystem::path write_toml(const TempDir& dir, const std::string& text) {
  const auto path = dir / "exp.toml";
  std::ofstream(path) << text;
  return path;
}

std::string collapse_spaces(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(\s+)"), " ");
}

}  // namespace

TEST_CASE("option table: the default texts parse to TrainerOptions' defaults", "[config]") {
  const TrainerOptions defaults;
  std::set<std::string> without_default;
  for (const auto& d : train_options()) {
    INFO("--" << d.name << " '" << d.default_text << "'");
    // A rule's own option has no default here: not given, the rule decides (rule_option.hpp).
    if (d.rule_option) {
      CHECK(d.default_text.empty());
      continue;
    }
    if (d.default_text.empty()) {
      without_default.insert(std::string(d.name));
      continue;
    }
    TrainerOptions o;
    REQUIRE(set_from_text(d, d.default_text, o).ok());
    CHECK(options_to_json(o) == options_to_json(defaults));
    CHECK(d.get(o) == d.get(defaults));
  }
  // K = 0 is "the rule's own", hidden's 128 is mlp's alone, --out has none, the machine's
  // cores, server time and file are the free machine's until given, no plug-in is loaded, and
  // --local-lr is only for --local-steps above 1.
  CHECK(without_default == std::set<std::string>{"k", "hidden", "plugin", "out", "resume",
                                                 "save-model", "cores", "server-time", "machine",
                                                 "local-lr"});
}

TEST_CASE(
    "option table: each flag is declared once, and its TOML and JSON keys are the flag with _",
    "[config]") {
  std::set<std::string> names;
  std::set<std::string> json_keys;
  for (const auto& d : train_options()) {
    const std::string name(d.name);
    INFO(name);
    CHECK(names.insert(name).second);
    CHECK(std::regex_match(name, std::regex("[a-z][a-z0-9-]*")));
    CHECK(option_key(d) == std::regex_replace(name, std::regex("-"), "_"));
    CHECK((d.set != nullptr && d.get != nullptr));
    CHECK(!d.help.empty());
    CHECK(find_option(name) == &d);
    if (d.json) json_keys.insert(option_key(d));
    if (d.toml) CHECK(d.json);  // what a file can set, summary.json records
  }
  CHECK(find_option("time_s") == nullptr);

  TrainerOptions mlp;  // with every option that only some runs have
  mlp.model.name = "mlp";
  // Every rule's own options, at their samples (option_samples.hpp).
  for (const auto& d : train_options()) {
    if (!d.rule_option) continue;
    const auto sample = sample_of(std::string(d.name));
    REQUIRE(sample);
    REQUIRE(set_from_text(d, sample->first, mlp).ok());
  }
  mlp.cores = 2;
  mlp.local_steps = 4;
  mlp.local_lr = 0.1;
  mlp.server_time = "20us";
  mlp.machine = "m.json";
  mlp.plugin = "/tmp/p.so";
  for (const auto& o : {TrainerOptions{}, mlp}) {
    const auto j = options_to_json(o);
    for (const auto& [key, value] : j.items()) {
      INFO(key);
      CHECK(json_keys.count(key) == 1);
    }
  }
  std::set<std::string> emitted;
  const auto j = options_to_json(mlp);
  for (const auto& [key, value] : j.items()) emitted.insert(key);
  CHECK(emitted == json_keys);
}

TEST_CASE("option table: summary.json's config holds seconds, words and mlp's hidden layers",
          "[config]") {
  TrainerOptions o;
  auto j = options_to_json(o);
  CHECK(j["time"] == 0.0);
  CHECK(j["eval_every"] == 0.5);
  CHECK(j["clock"] == "real");
  CHECK(j["server"] == "inline");
  CHECK(j["k"] == 0);
  CHECK_FALSE(j.contains("hidden"));
  CHECK_FALSE(j.contains("out"));
  CHECK_FALSE(j.contains("no_progress"));
  o.model.name = "mlp";
  CHECK(options_to_json(o)["hidden"] == nlohmann::json::array({128}));
  o.model.hidden = {256, 128};
  CHECK(options_to_json(o)["hidden"] == nlohmann::json::array({256, 128}));
  o.sequential = true;
  CHECK(options_to_json(o)["clock"] == "sequential");
  REQUIRE(set_from_text(*find_option("time"), "1500ms", o).ok());
  CHECK(options_to_json(o)["time"] == 1.5);
}

TEST_CASE("option table: CLI text and TOML values set the same options", "[config]") {
  int compared = 0;
  for (const auto& d : train_options()) {
    if (!d.toml) continue;
    const std::string name(d.name);
    INFO(name);
    const auto sample = sample_of(name);
    REQUIRE(sample);
    const auto& [text, toml_text] = *sample;
    TrainerOptions from_text;
    REQUIRE(set_from_text(d, text, from_text).ok());
    const auto doc = toml::parse(option_key(d) + " = " + toml_text);
    const toml::node* node = doc.get(option_key(d));
    REQUIRE(node != nullptr);
    TrainerOptions from_toml;
    auto s = set_from_toml(d, *node, from_toml);
    INFO((s ? std::string() : s.error().message));
    REQUIRE(s.ok());
    CHECK(options_to_json(from_text) == options_to_json(from_toml));
    CHECK(d.get(from_text) == d.get(from_toml));
    CHECK(options_to_json(from_text) != options_to_json(TrainerOptions{}));  // a real change
    compared += samples().count(name) == 1 ? 1 : 0;
  }
  CHECK(compared == static_cast<int>(samples().size()));  // no sample of an option gone
}

TEST_CASE("option table: options_to_args gives the same options back", "[config]") {
  // Every sample value at once (a race passes a run to mpirun this way), plus fractions that
  // only round-trip with all their digits, and a switch.
  TrainerOptions given;
  for (const auto& d : train_options()) {
    if (!d.toml) continue;
    const auto sample = sample_of(std::string(d.name));
    REQUIRE(sample);
    REQUIRE(set_from_text(d, sample->first, given).ok());
  }
  REQUIRE(set_from_text(*find_option("lr"), "0.1", given).ok());
  REQUIRE(set_from_text(*find_option("time"), "1.234567s", given).ok());
  set_switch(*find_option("sequential"), true, given);
  // Not a plug-in: options_from_args loads the ones it names (tests/rules/plugin_cli_test.cpp).
  given.plugin.clear();
  const auto read = options_from_args(options_to_args(given));
  REQUIRE(read.ok());
  const TrainerOptions& back = *read;
  CHECK(options_to_json(back) == options_to_json(given));
  CHECK(back.lr == given.lr);
  CHECK(back.time_s == given.time_s);
  // And summary.json's config read back gives the same options.
  const auto from_json = options_from_json(options_to_json(given));
  REQUIRE(from_json.ok());
  CHECK(options_to_json(*from_json) == options_to_json(given));
  CHECK(from_json->sequential);
}

TEST_CASE("option table: bad CLI text names the flag and the value", "[config]") {
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> cases{
      {{"time", "x"}, "--time 'x': time 'x' is not a number with a unit"},
      {{"time", "5"}, "--time '5': time '5' has no unit"},
      {{"batch", "0"}, "--batch 0: must be an integer from 1 to 65536"},
      {{"workers", "four"}, "--workers 'four': must be an integer from 1 to 4096"},
      {{"k", "0"}, "--k 0: must be an integer K with 1 <= K <= P"},
      {{"seed", "-1"}, "--seed -1: must be an integer >= 0"},
      {{"lr", "nan"}, "--lr 'nan': must be a finite number"},
      {{"clock", "fast"}, "--clock 'fast': must be real or virtual"},
      {{"server", "remote"}, "--server 'remote': must be inline, thread or hogwild"},
      {{"hidden", "256,x"}, "--hidden '256,x': must be a comma-separated list"},
      {{"hidden", "0"}, "--hidden '0': must be a comma-separated list"},
  };
  for (const auto& [flag_text, expected] : cases) {
    TrainerOptions o;
    auto s = set_from_text(*find_option(flag_text.first), flag_text.second, o);
    INFO(flag_text.first << " " << flag_text.second);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message, Contains(expected));
  }
}

TEST_CASE("option table: TOML values of the wrong type are refused", "[config][experiment]") {
  TempDir dir;
  for (const auto& d : train_options()) {
    if (!d.toml) continue;
    const std::string key = option_key(d);
    INFO(key);
    const auto doc = toml::parse(key + " = " + wrong_toml(d));
    TrainerOptions o;
    auto s = set_from_toml(d, *doc.get(key), o);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message, Contains("must be"));
    // The experiment loader finds every key in the table (an unknown key would say so).
    auto ex = load_experiment(
        write_toml(dir, key + " = " + wrong_toml(d) + "\n[[run]]\nlabel = \"a\"\n"));
    REQUIRE_FALSE(ex.ok());
    CHECK_THAT(ex.error().message, Contains("exp.toml:1: key '" + key + "' must be"));
  }
  const std::vector<std::pair<std::string, std::string>> cases{
      {"name = 5\n[[run]]\nlabel = \"a\"\n", "exp.toml:1: key 'name' must be a string"},
      {"description = [1]\n[[run]]\nlabel = \"a\"\n",
       "exp.toml:1: key 'description' must be a string"},
      {"time = \"2s\"\n[[run]]\nlabel = 5\n", "exp.toml:3: key 'label' must be a string"},
      {"workers = 2.5\n[[run]]\nlabel = \"a\"\n", "exp.toml:1: key 'workers' must be an integer"},
      {"lr = \"0.1\"\n[[run]]\nlabel = \"a\"\n", "exp.toml:1: key 'lr' must be a finite number"},
      {"server = \"remote\"\n[[run]]\nlabel = \"a\"\n",
       "exp.toml:1: key 'server' must be \"inline\", \"thread\" or \"hogwild\""},
      {"out = \"x\"\n[[run]]\nlabel = \"a\"\n",
       "exp.toml:1: key 'out' is a command-line flag only"},
      {"sequential = true\n[[run]]\nlabel = \"a\"\n",
       "key 'sequential' is a command-line flag only"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    auto ex = load_experiment(write_toml(dir, text));
    REQUIRE_FALSE(ex.ok());
    CHECK_THAT(ex.error().message, Contains(expected));
  }
}

TEST_CASE("option table: experiment files set the newer keys", "[config][experiment]") {
  TempDir dir;
  auto ex = load_experiment(write_toml(dir,
                                       "time = \"2s\"\nserver = \"thread\"\neval_samples = 100\n"
                                       "data_dir = \"elsewhere\"\n[[run]]\nlabel = \"a\"\n"));
  REQUIRE(ex.ok());
  const auto& o = ex->runs.at(0).options();
  CHECK(o.server == ServerPlacement::kThread);
  CHECK(o.eval_test_samples == 100);
  CHECK(o.data_dir == "elsewhere");
}

TEST_CASE("train --help lists every flag of the table with its default", "[config][cli]") {
  const auto help = run_cli({"train", "--help"});
  REQUIRE(help.exit_code == 0);
  const std::string text = collapse_spaces(help.output);
  for (const auto& d : train_options()) {
    const std::string name(d.name);
    INFO(name);
    // cxxopts shows the one-letter --k as -k, with "(--k)" in its help.
    CHECK(text.find(name.size() == 1 ? "(--" + name + ")" : "--" + name + " ") !=
          std::string::npos);
    if (d.type != OptionType::kSwitch && !d.default_text.empty()) {
      CHECK(text.find("(default: " + std::string(d.default_text) + ")") != std::string::npos);
    }
  }
}

TEST_CASE("a flag given twice is refused in one line, exit 2", "[config][cli]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"train", "--workers", "2", "--workers", "4"},
           {"train", "--k", "2", "--rule", "k-sync", "--k=3"},
           {"train", "--sequential", "--sequential"},
           {"theory", "--workers", "2", "--delay", "exp:mean=1ms", "--workers", "3"},
           {"train", "--seed", "1", "--seed", "2"},
           {"theory", "--delay", "exp:mean=1ms", "--samples", "100", "--samples", "200"},
           {"race", "--config", "a.toml", "--config", "b.toml"},
           {"race", "--config", "a.toml", "--force", "--force"},
           {"data", "info", "--dataset", "mnist", "--dataset", "mnist"}}) {
    const auto r = run_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error: --") && Contains(" given twice; give it once"));
  }
  CHECK(run_cli({"train", "--workers", "2", "--workers", "4"}).output ==
        "stalesgd: error: --workers given twice; give it once\n");
}

TEST_CASE("docs/cli.md and docs/experiments.md name every option and TOML key", "[config][docs]") {
  auto read = [](const char* name) {
    std::ifstream in(std::filesystem::path(STALESGD_SOURCE_DIR) / "docs" / name);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  };
  const std::string cli = read("cli.md");
  const std::string experiments = read("experiments.md");
  for (const auto& d : train_options()) {
    INFO(d.name);
    CHECK(cli.find("`--" + std::string(d.name)) != std::string::npos);
    if (!d.toml) continue;
    CHECK(cli.find("| `" + option_key(d) + "` |") != std::string::npos);
    CHECK(experiments.find("`" + option_key(d) + "`") != std::string::npos);
  }
}

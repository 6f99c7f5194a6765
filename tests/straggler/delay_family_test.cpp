// A delay family of one's own (stalesgd/straggler/delay_family.hpp): registered in a program, it
// parses wherever a spec does (alone, per worker, in a mixture); a bad registration is one
// line. As a plug-in of the CLI (examples/custom_delay's Weibull) it trains on the virtual clock
// at the rate the theory gives from its own mean, and a bad spec of it is one line, exit 2.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>

#include "stalesgd/straggler/delay_family.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// X = the parameter's value in ms, always: the simplest family to check parsing with.
class Fixed final : public Distribution {
 public:
  explicit Fixed(double s) : s_(s) {}
  double sample(Rng& rng) const override {
    (void)rng();
    return s_;
  }
  double mean() const override { return s_; }
  double cdf(double x) const override { return x >= s_ ? 1.0 : 0.0; }
  double quantile(double) const override { return s_; }
  std::string describe() const override { return "fixed-ms:" + std::to_string(int(s_ * 1e3)); }

 private:
  double s_;
};

Result<std::unique_ptr<Distribution>> parse_fixed(std::string_view params) {
  const std::string text(params);
  char* end = nullptr;
  const double ms = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(ms >= 0.0)) return Error{"'" + text + "' is not a number of ms"};
  return std::unique_ptr<Distribution>(std::make_unique<Fixed>(ms / 1e3));
}

const std::string kWeibull = (fs::path(STALESGD_TEST_PLUGIN_DIR) / "libweibull_delay.so").string();

}  // namespace

TEST_CASE("delay family: a registered one parses as a built-in one does", "[straggler]") {
  REQUIRE(register_delay_family("fixed-ms", "fixed-ms:<ms>", parse_fixed).ok());
  CHECK(registered_delay_families().back() == "fixed-ms");
  const auto x = parse_distribution("fixed-ms:20");
  REQUIRE(x.ok());
  CHECK((*x)->mean() == 0.02);
  // Per worker and in a mixture, as any family.
  const auto p = StragglerProfile::parse("exp:mean=1ms;w1=fixed-ms:30", 2);
  REQUIRE(p.ok());
  CHECK_THAT(p->describe(), Contains("w1=fixed-ms:30"));
  CHECK(parse_distribution("mix:0.5*fixed-ms:10+0.5*fixed-ms:30").ok());
  // Its parser's error, and a missing parameter, are one line naming the spec.
  const auto bad = parse_distribution("fixed-ms:x\ny");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Contains("fixed-ms: 'x?y' is not a number of ms"));
  CHECK(bad.error().message.find('\n') == std::string::npos);
  CHECK_THAT(parse_distribution("fixed-ms").error().message,
             Contains("fixed-ms needs parameters; use fixed-ms:<ms>"));
  CHECK_THAT(parse_distribution("nope:1").error().message, Contains("fixed-ms"));
  // Refused: a taken name, a built-in one, a malformed one, no parser.
  CHECK_THAT(register_delay_family("fixed-ms", "", parse_fixed).error().message,
             Contains("registered already"));
  CHECK_THAT(register_delay_family("exp", "", parse_fixed).error().message, Contains("built-in"));
  CHECK_THAT(register_delay_family("Fixed ms", "", parse_fixed).error().message,
             Contains("lower case letters"));
  CHECK_THAT(register_delay_family("empty", "", {}).error().message, Contains("no parser"));
}

TEST_CASE("delay family plug-in: Weibull delays train at the rate the theory gives",
          "[straggler][plugin][cli]") {
  TempDir dir;
  // async: E[T] = E[X] / P for any family, from the plug-in's own mean.
  const auto r = run_shell(kCli + " train --plugin " + kWeibull +
                           " --rule async --workers 4 --delay weibull:scale=10ms,shape=0.7 "
                           "--clock virtual --iterations 3000 --eval-every 1000s --no-progress "
                           "--out " +
                           (dir / "run").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(measured/theory ([0-9.]+))")));
  const double ratio = std::stod(m[1]);
  CHECK(ratio > 0.9);
  CHECK(ratio < 1.1);
  CHECK_THAT(slurp(dir / "run" / "summary.json"), Contains("weibull:scale=10ms,shape=0.7"));
  // theory's Monte Carlo draws from it too.
  const auto t = run_shell(kCli + " theory --plugin " + kWeibull +
                           " --rule k-sync --k 2 --workers 4 --delay weibull:scale=10ms,shape=2");
  INFO(t.output);
  CHECK(t.exit_code == 0);
  CHECK_THAT(t.output, Contains("k-sync"));
  // A bad parameter, and the family without its plug-in: one line, exit 2.
  for (const auto& [flags, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--plugin " + kWeibull + " --delay weibull:scale=10ms,shap=1",
            "weibull: unknown parameter 'shap'"},
           {"--delay weibull:scale=10ms,shape=1", "unknown distribution 'weibull'"}}) {
    const auto bad = run_shell(kCli + " train --iterations 5 --no-progress " + flags);
    INFO(bad.output);
    CHECK(bad.exit_code == 2);
    CHECK(line_count(bad.output) == 1);
    CHECK_THAT(bad.output, Contains(expected));
  }
}

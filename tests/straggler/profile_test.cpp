// StragglerProfile: clause grammar, the written-order precedence, iid(), describe() round
// trips and every profile-level error.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "straggler/straggler_test_util.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("iid() is the base distribution only when nothing varies", "[straggler][profile]") {
  const auto plain = profile_ok("exp:mean=10ms", 8);
  REQUIRE(plain.iid() != nullptr);
  CHECK(plain.iid()->describe() == "exp:mean=10ms");
  CHECK(plain.iid()->as_shifted_exponential().has_value());
  CHECK(plain.workers() == 8);
  // A copy shares the state, so the pointer stays valid with the copy.
  const StragglerProfile copy = plain;
  CHECK(copy.iid() == plain.iid());

  CHECK(profile_ok("exp:mean=10ms;w3=x5", 8).iid() == nullptr);
  CHECK(profile_ok("exp:mean=10ms;w3=const:50ms", 8).iid() == nullptr);
  CHECK(profile_ok("exp:mean=10ms;w2@30s=x10", 8).iid() == nullptr);
  CHECK(profile_ok("exp:mean=10ms;*@60s=exp:mean=40ms", 8).iid() == nullptr);
  // Clauses that change nothing keep it i.i.d.
  CHECK(profile_ok("exp:mean=10ms;w3=x1", 8).iid() != nullptr);
  CHECK(profile_ok("exp:mean=10ms;*=exp:mean=0.01s", 8).iid() != nullptr);
  CHECK(profile_ok("mix:0.9*exp:mean=5ms+0.1*const:200ms", 4).iid() != nullptr);
  CHECK(profile_ok("none", 1).iid() != nullptr);

  TempDir dir;
  std::ofstream(dir / "delays.csv") << "w0[ms]\n1\n";
  CHECK(profile_ok("trace:delays.csv", 2, dir.path()).iid() == nullptr);
}

TEST_CASE("describe() is canonical and parses back to the same profile", "[straggler][profile]") {
  const struct {
    const char* spec;
    const char* canonical;
  } cases[] = {
      {"exp:mean=10ms", "exp:mean=10ms"},
      {"exp:mean=0.01s ; w3 = x5", "exp:mean=10ms;w3=x5"},
      {"exp:mean=10ms;w3=const:50ms", "exp:mean=10ms;w3=const:50ms"},
      {"exp:mean=10ms;w0-3=x2.5", "exp:mean=10ms;w0-3=x2.5"},
      {"exp:mean=10ms;w0-7=x2", "exp:mean=10ms;*=x2"},
      {"exp:mean=10ms;w2-2=x2", "exp:mean=10ms;w2=x2"},
      {"exp:mean=10ms;w2@30s=x10", "exp:mean=10ms;w2@30s=x10"},
      {"exp:mean=10ms;w2@0s=x10", "exp:mean=10ms;w2=x10"},
      {"exp:mean=10ms;*@60000ms=exp:mean=40ms", "exp:mean=10ms;*@60s=exp:mean=40ms"},
      {"none;w1@1.5s=mix:0.5*const:1ms+0.5*none", "none;w1@1.5s=mix:0.5*const:1ms+0.5*none"},
  };
  for (const auto& c : cases) {
    INFO(c.spec);
    const auto p = profile_ok(c.spec, 8);
    CHECK(p.describe() == c.canonical);
    CHECK(profile_ok(p.describe(), 8).describe() == c.canonical);
  }
}

TEST_CASE("profile errors name the problem and the fix", "[straggler][profile]") {
  CHECK(profile_error("exp:mean=10ms;w9=x5", 8) ==
        "delay spec 'exp:mean=10ms;w9=x5': clause 'w9=x5': worker 9 does not exist: there are "
        "workers 0..7 (8 workers); name workers in w0-7");
  CHECK_THAT(profile_error("exp:mean=10ms;w0-8=x5", 8),
             Contains("worker 8 does not exist: there are workers 0..7"));
  CHECK_THAT(profile_error("exp:mean=10ms;w1=x5", 1),
             Contains("worker 1 does not exist: there is only worker 0"));
  CHECK(profile_error("exp:mean=10ms;w2@30=x10", 8) ==
        "delay spec 'exp:mean=10ms;w2@30=x10': clause 'w2@30=x10': after '@': time '30' has no "
        "unit; write 30ms or 30s (units: ns, us, ms, s, m, h)");
  CHECK_THAT(profile_error("exp:mean=10ms;w2@=x10", 8), Contains("after '@': missing time"));
  CHECK_THAT(profile_error("exp:mean=10ms;w2@-1s=x10", 8),
             Contains("after '@': time '-1s' is negative"));
  CHECK_THAT(profile_error("exp:mean=10ms;w5-2=x2", 8),
             Contains("worker range 'w5-2' is reversed; write w2-5"));
  CHECK_THAT(profile_error("exp:mean=10ms;v3=x2", 8),
             Contains("clause 'v3=x2': unknown workers 'v3'; write wN, wA-B or *"));
  CHECK_THAT(profile_error("exp:mean=10ms;wx=x2", 8), Contains("unknown workers 'wx'"));
  CHECK_THAT(profile_error("exp:mean=10ms;w99999999999=x2", 8),
             Contains("unknown workers 'w99999999999'"));
  CHECK_THAT(profile_error("exp:mean=10ms;w3", 8),
             Contains("clause 'w3': no '='; write <workers>[@<time>]="));
  CHECK_THAT(profile_error("exp:mean=10ms;w3=", 8), Contains("nothing after '='"));
  CHECK_THAT(profile_error("exp:mean=10ms;w3=x0", 8), Contains("factor 'x0' must be > 0"));
  CHECK_THAT(profile_error("exp:mean=10ms;w3=x-2", 8), Contains("factor 'x-2' must be > 0"));
  CHECK_THAT(profile_error("exp:mean=10ms;w3=xfast", 8), Contains("factor 'fast' is not a number"));
  CHECK_THAT(profile_error("exp:mean=10ms;w3=exp:men=1ms", 8),
             Contains("clause 'w3=exp:men=1ms': unknown parameter 'men' for exp"));
  CHECK_THAT(profile_error("exp:mean=10ms;;w3=x5", 8),
             Contains("empty clause (an extra ';'); remove it"));
  CHECK_THAT(profile_error("exp:mean=10ms;", 8), Contains("empty clause"));
  CHECK_THAT(profile_error("w3=x5", 8), Contains("start with the distribution every worker uses"));
  CHECK_THAT(profile_error(";w3=x5", 8), Contains("start with the distribution every worker uses"));
  CHECK_THAT(profile_error("exp:men=10ms;w3=x5", 8),
             Contains("delay spec 'exp:men=10ms;w3=x5': unknown parameter 'men' for exp"));
  CHECK(profile_error("", 8) ==
        "delay spec is empty; write a distribution, e.g. exp:mean=20ms, or none for no delay");
  CHECK_THAT(profile_error("exp:mean=10ms", 0), Contains("the run has 0 workers; use at least 1"));
  CHECK_THAT(profile_error("exp:mean=10ms;w0=trace:nope.csv", 2),
             Contains("nope.csv' does not exist"));
}

TEST_CASE("mangled specs never throw and every error is one line", "[straggler][profile]") {
  TempDir dir;
  std::ofstream(dir / "delays.csv") << "w0[ms],w1[ms]\n1,2\n";
  const std::string seeds[] = {
      "exp:mean=10ms;w3=x5;w2@30s=x10;*@60s=exp:mean=40ms",
      "mix:0.9*exp:mean=5ms+0.1*const:200ms;w0-3=uniform:5ms..15ms",
      "shifted-exp:shift=5ms,mean=10ms;w1=pareto:scale=5ms,shape=1.5",
      "lognormal:median=10ms,sigma=0.5;w7=trace:delays.csv;w6=lognormal:mean=1s,sigma=2",
  };
  const std::string alphabet = "0123456789.-+*=;:,@xwe sm.. nuei\n\t\x01";
  Rng rng(2024);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = seeds[rng() % 4];
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      const std::size_t at = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0:
          s.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (at < s.size()) s.erase(at, 1);
          break;
        default:
          if (at < s.size()) s[at] = alphabet[rng() % alphabet.size()];
          break;
      }
    }
    INFO("spec: " << s);
    auto r = StragglerProfile::parse(s, 8, dir.path());
    if (r.ok()) {
      ++parsed;
      DelaySampler sampler(*r, 7, 1);
      for (const double t : {0.0, 31.0, 61.0}) {
        const double x = sampler.next(t);
        REQUIRE(x >= 0);
        REQUIRE(std::isfinite(x));
      }
      auto again = StragglerProfile::parse(r->describe(), 8, dir.path());
      REQUIRE(again.ok());
      REQUIRE(again->describe() == r->describe());
    } else {
      REQUIRE(r.error().message.find('\n') == std::string::npos);
      REQUIRE(r.error().message.rfind("delay spec", 0) == 0);
    }
  }
  CHECK(parsed > 100);  // the mutations also hit valid specs
}

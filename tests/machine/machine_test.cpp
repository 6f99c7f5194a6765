// The machine model's specs and file (stalesgd/machine/machine.hpp): --link, --server-time, the
// machine file's round trip and its refusals, each a line naming what is wrong.
#include "stalesgd/machine/machine.hpp"

#include <fstream>
#include <regex>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("machine: link and server-time specs parse, and bad ones are one line", "[machine]") {
  auto link = parse_link("latency=1ms,bandwidth=10Gbit");
  REQUIRE(link.ok());
  CHECK(link->latency_s == Approx(1e-3));
  CHECK(link->bandwidth_bps == Approx(1e10));
  CHECK(parse_link("bandwidth=125MB/s")->bandwidth_bps == Approx(1e9));
  CHECK(parse_link("none")->free());
  CHECK_THAT(parse_link("latency=1ms,jitter=2ms").error().message,
             Contains("unknown key 'jitter'"));
  CHECK_THAT(parse_link("bandwidth=1Gbyte").error().message, Contains("unknown unit 'Gbyte'"));
  CHECK_THAT(parse_link("latency=1").error().message, Contains("--link latency '1'"));
  CHECK_THAT(parse_link("bandwidth=0Gbit").error().message, Contains("positive"));
  CHECK_FALSE(link->memory);
  CHECK(parse_link("latency=1us,bandwidth=40Gbit,medium=memory")->memory);
  CHECK_FALSE(parse_link("bandwidth=40Gbit,medium=network")->memory);
  CHECK_THAT(parse_link("medium=disk").error().message,
             Contains("medium 'disk' must be network or memory"));
  auto t = parse_server_time("gradient=20us,update=10us");
  REQUIRE(t.ok());
  CHECK(t->gradient_s == Approx(20e-6));
  CHECK(t->update_s == Approx(10e-6));
  CHECK(parse_server_time("5us")->gradient_s == Approx(5e-6));
  CHECK_THAT(parse_server_time("-1ms").error().message, Contains("--server-time"));
  CHECK_THAT(parse_server_time("nan").error().message, Contains("--server-time"));
  CHECK_THAT(parse_server_time("apply=1ms").error().message, Contains("unknown key 'apply'"));
}

TEST_CASE("machine: a machine file round-trips and is refused for another model", "[machine]") {
  TempDir dir;
  Machine m;
  m.model = "mlp";
  m.parameters = 101'770;
  m.compute_s = 120e-6;
  m.server_gradient_s = 15e-6;
  m.server_update_s = 25e-6;
  m.link = {.latency_s = 0.5e-6, .bandwidth_bps = 40e9, .memory = true};
  REQUIRE(write_machine_file(dir / "m.json", m, R"({"host": "here"})").ok());
  auto back = read_machine_file(dir / "m.json", "mlp");
  REQUIRE(back.ok());
  CHECK(back->link.memory);
  CHECK(back->link.bandwidth_bps == m.link.bandwidth_bps);
  CHECK(back->parameters == m.parameters);
  CHECK(back->compute_s == m.compute_s);
  CHECK(back->server_update_s == m.server_update_s);
  CHECK_THAT(read_machine_file(dir / "m.json", "softmax").error().message,
             Contains("calibrated for --model mlp, not softmax"));
  write_text(dir / "bad.json", "{\"machine_format\": 1, \"model\": \"mlp\"}");
  CHECK_THAT(read_machine_file(dir / "bad.json", "mlp").error().message,
             Contains("missing or of the wrong type"));
  write_text(dir / "medium.json",
             std::regex_replace(slurp(dir / "m.json"), std::regex("\"memory\""), "\"pigeon\""));
  CHECK_THAT(read_machine_file(dir / "medium.json", "mlp").error().message,
             Contains("link_medium 'pigeon' is not network or memory"));
  write_text(dir / "text.json", "cores = 4");
  CHECK_THAT(read_machine_file(dir / "text.json", "mlp").error().message,
             Contains("not a machine file"));
}

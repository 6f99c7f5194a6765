// options_from_args and options_from_json: what does not read back is refused in one line
// naming the flag or key (their round trips are option_table_test.cpp's).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"

using namespace stalesgd;
using Catch::Matchers::Contains;

TEST_CASE("option table: recorded flags and configs that do not read back are refused",
          "[config]") {
  CHECK_THAT(options_from_args({"--workers", "4", "--bogus"}).error().message,
             Contains("unknown flag '--bogus'"));
  CHECK_THAT(options_from_args({"--workers"}).error().message, Contains("without its value"));
  CHECK_THAT(options_from_args({"--time", "5"}).error().message, Contains("--time"));
  CHECK_THAT(options_from_json(nlohmann::json::parse(R"({"workers": "four"})")).error().message,
             Contains("'workers' is \"four\""));
  CHECK_THAT(options_from_json(nlohmann::json::parse(R"({"clock": "sundial"})")).error().message,
             Contains("clock"));
  CHECK_THAT(options_from_json(nlohmann::json::parse(R"({"colour": 1})")).error().message,
             Contains("unknown key 'colour'"));
  CHECK_FALSE(options_from_json(nlohmann::json::array()).ok());
  const auto o = options_from_json(nlohmann::json::parse(
      R"({"rule": "backup", "backups": 1, "k": 3, "workers": 4, "time": 2.5, "hidden": [64, 32]})"));
  REQUIRE(o.ok());
  CHECK(o->rule.name == "backup");
  CHECK(o->rule.params.integer("backups", -1) == 1);
  CHECK(o->time_s == 2.5);
  CHECK(o->model.hidden == std::vector<int>{64, 32});
}

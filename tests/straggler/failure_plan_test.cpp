// --fail's grammar: what parses, what it parses to, and the one-line errors.
#include "stalesgd/straggler/failure_plan.hpp"

#include <catch2/catch.hpp>

using namespace stalesgd;
using Catch::Matchers::Contains;

TEST_CASE("failure plan: none and empty are no failures", "[straggler][failures]") {
  for (const char* text : {"none", "", "  none "}) {
    auto plan = parse_failure_plan(text, 4);
    REQUIRE(plan.ok());
    CHECK(plan->empty());
    CHECK(plan->of(0) == nullptr);
    CHECK(plan->describe() == "none");
  }
}

TEST_CASE("failure plan: crash and hang items by worker with their times",
          "[straggler][failures]") {
  auto plan = parse_failure_plan("w5:hang@4s; w3:crash@2s;w0:crash@0s", 8);
  REQUIRE(plan.ok());
  REQUIRE(plan->failures.size() == 3);
  CHECK(plan->failures[0].worker == 0);  // sorted by worker
  CHECK(plan->of(3)->kind == FailureKind::kCrash);
  CHECK(plan->of(3)->at_s == 2.0);
  CHECK(plan->of(5)->kind == FailureKind::kHang);
  CHECK(plan->of(5)->at_s == 4.0);
  CHECK(plan->of(0)->at_s == 0.0);
  CHECK(plan->of(1) == nullptr);
  CHECK(plan->describe() == "w0:crash@0s;w3:crash@2s;w5:hang@4s");
  auto back = parse_failure_plan(plan->describe(), 8);
  REQUIRE(back.ok());
  CHECK(back->describe() == plan->describe());
  auto ms = parse_failure_plan("w1:crash@1500ms", 2);
  REQUIRE(ms.ok());
  CHECK(ms->of(1)->at_s == 1.5);
  CHECK(std::string(to_string(FailureKind::kCrash)) == "crash");
  CHECK(std::string(to_string(FailureKind::kHang)) == "hang");
}

TEST_CASE("failure plan: errors are one line naming the item and the fix",
          "[straggler][failures]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"w8:crash@2s", "--fail 'w8:crash@2s': there is no worker 8: the workers are w0 to w7"},
      {"w3:crash@2s;w3:hang@4s",
       "--fail 'w3:hang@4s': worker 3 already fails (crash@2s); give each worker one failure"},
      {"w3:die@2s", "--fail 'w3:die@2s': unknown failure 'die'; it is crash"},
      {"w3:crash@2", "--fail 'w3:crash@2': time '2' has no unit"},
      {"w3:crash@-1s", "--fail 'w3:crash@-1s': time '-1s' is negative"},
      {"w3:crash", "--fail 'w3:crash': not a failure; write wN:crash@TIME or wN:hang@TIME"},
      {"3:crash@2s", "--fail '3:crash@2s': not a failure"},
      {"wx:crash@2s", "--fail 'wx:crash@2s': unknown worker 'wx'"},
      {"w-1:crash@2s", "unknown worker 'w-1'"},
      {"w1:crash@2s;", "empty item"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    auto plan = parse_failure_plan(text, 8);
    REQUIRE_FALSE(plan.ok());
    CHECK_THAT(plan.error().message, Contains(expected));
    CHECK(plan.error().message.find('\n') == std::string::npos);
  }
  auto one = parse_failure_plan("w1:crash@1s", 1);
  REQUIRE_FALSE(one.ok());
  CHECK_THAT(one.error().message, Contains("there is only worker 0"));
}

TEST_CASE("failure plan: whole ranks with --engine mpi, parsed and written back",
          "[straggler][failures]") {
  auto plan = parse_failure_plan("rank2:hang@3s; w1:crash@1s;rank1:crash@500ms", 4, 3);
  REQUIRE(plan.ok());
  REQUIRE(plan->ranks.size() == 2);
  CHECK(plan->ranks[0].rank == 1);
  CHECK(plan->ranks[0].kind == FailureKind::kCrash);
  CHECK(plan->ranks[0].at_s == Approx(0.5));
  CHECK(plan->of_rank(2)->kind == FailureKind::kHang);
  CHECK(plan->of_rank(3) == nullptr);
  CHECK(plan->of(1)->at_s == Approx(1.0));
  CHECK(plan->describe() == "w1:crash@1s;rank1:crash@500ms;rank2:hang@3s");
  auto back = parse_failure_plan(plan->describe(), 4, 3);
  REQUIRE(back.ok());
  CHECK(back->describe() == plan->describe());

  const std::vector<std::pair<std::pair<std::string, int>, std::string>> cases{
      {{"rank1:crash@1s", 0}, "a whole rank fails only with --engine mpi"},
      {{"rank0:crash@1s", 3}, "rank 0 is the server; the worker ranks are rank1 to rank2"},
      {{"rank3:hang@1s", 3}, "there is no rank 3: the worker ranks are rank1 to rank2"},
      {{"rank1:crash@1s;rank1:hang@2s", 3}, "rank 1 already fails (crash@1s)"},
      {{"rankx:crash@1s", 3}, "unknown rank 'rankx'"},
      {{"rank1:die@1s", 3}, "unknown failure 'die'; it is crash (the rank dies)"},
  };
  for (const auto& [input, expected] : cases) {
    INFO(input.first);
    auto bad = parse_failure_plan(input.first, 4, input.second);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Contains(expected));
  }
}

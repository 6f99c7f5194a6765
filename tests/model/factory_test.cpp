// make_model, model_names and parse_hidden_sizes: every model builds on the shape it fits, and
// each bad request gets a one-line error naming the problem and the fix.
#include <catch2/catch.hpp>

#include "model/model_check.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {
const ImageShape kMnist{1, 28, 28};
const ImageShape kCifar{3, 32, 32};

std::string error_of(const ModelSpec& s, const ImageShape& shape, int classes = 10) {
  auto r = make_model(s, shape, classes);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find('\n') == std::string::npos);  // one line
  return r.error().message;
}
}  // namespace

TEST_CASE("model_names lists the four models", "[model][factory]") {
  CHECK(model_names() == std::vector<std::string>{"softmax", "mlp", "lenet", "cifar-cnn"});
}

TEST_CASE("make_model builds every model on a shape it fits", "[model][factory]") {
  CHECK(make_model(spec("softmax"), kMnist, 10).ok());
  CHECK(make_model(spec("softmax"), kCifar, 10).ok());
  CHECK(make_model(spec("mlp", {256, 128}), kMnist, 10).ok());
  CHECK(make_model(spec("mlp"), kCifar, 10).ok());
  CHECK(make_model(spec("lenet"), kMnist, 10).ok());
  CHECK(make_model(spec("cifar-cnn"), kCifar, 10).ok());
}

TEST_CASE("make_model names the problem and the fix", "[model][factory]") {
  CHECK_THAT(error_of(spec("resnet"), kMnist),
             Contains("unknown model 'resnet'") && Contains("softmax, mlp, lenet, cifar-cnn"));
  CHECK_THAT(error_of(spec("lenet"), kCifar), Contains("needs 1x28x28") && Contains("3x32x32") &&
                                                  Contains("--dataset mnist") &&
                                                  Contains("cifar-cnn"));
  CHECK_THAT(error_of(spec("cifar-cnn"), kMnist),
             Contains("needs 3x32x32") && Contains("--dataset cifar10") && Contains("lenet"));
  CHECK_THAT(error_of(spec("softmax", {128}), kMnist),
             Contains("--hidden") && Contains("--model mlp only"));
  CHECK_THAT(error_of(spec("mlp", {128, 0}), kMnist), Contains("hidden layer size 0"));
  CHECK_THAT(error_of(spec("softmax", {}, -1.0f), kMnist), Contains("--l2") && Contains(">= 0"));
}

TEST_CASE("parse_hidden_sizes reads a comma list and names the bad element", "[model][factory]") {
  auto ok = parse_hidden_sizes("256,128");
  REQUIRE(ok.ok());
  CHECK(*ok == std::vector<int>{256, 128});
  auto spaced = parse_hidden_sizes(" 64 , 32 ");
  REQUIRE(spaced.ok());
  CHECK(*spaced == std::vector<int>{64, 32});
  auto single = parse_hidden_sizes("10");
  REQUIRE(single.ok());
  CHECK(*single == std::vector<int>{10});

  auto bad = parse_hidden_sizes("256,x");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "--hidden '256,x': 'x' is not a positive integer; write e.g. --hidden 256,128");
  for (const char* text : {"", "256,", ",5", "0", "-3", "1.5", "12a"}) {
    INFO("--hidden '" << text << "'");
    auto r = parse_hidden_sizes(text);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Contains("--hidden") && Contains("write e.g. --hidden 256,128"));
  }
  auto huge = parse_hidden_sizes("99999999999");
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.error().message, Contains("more than 65536"));
}

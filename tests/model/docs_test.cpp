// docs/models.md cannot drift from the code: its `model-sizes` block is rebuilt here model by
// model, its error messages are produced here, and its C++ example is the training loop of
// mnist_accuracy_test.cpp line for line.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "model/model_check.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

std::string read_text(const std::string& relative) {
  std::ifstream in(std::string(STALESGD_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of the first fenced block opened by "```<tag>".
std::vector<std::string> block(const std::string& text, const std::string& tag) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```" + tag) {
      inside = true;
    } else if (inside && line == "```") {
      return lines;
    } else if (inside) {
      lines.push_back(line);
    }
  }
  FAIL("no ```" << tag << " block");
  return lines;
}

ImageShape shape_of(const std::string& text) {
  return text == "3x32x32" ? ImageShape{3, 32, 32} : ImageShape{1, 28, 28};
}

}  // namespace

TEST_CASE("docs/models.md: every model's description and parameter count", "[model][docs]") {
  const auto lines = block(read_text("docs/models.md"), "model-sizes");
  REQUIRE(lines.size() == 5);
  for (const auto& line : lines) {
    INFO(line);
    std::istringstream in(line);
    std::string name, word, shape, describe;
    in >> name;
    ModelSpec s = spec(name);
    in >> word;
    if (word == "--hidden") {
      std::string sizes;
      in >> sizes >> shape;
      s.hidden = *parse_hidden_sizes(sizes);
    } else {
      shape = word;
    }
    std::size_t params = 0;
    in >> describe >> params;
    auto m = make_model(s, shape_of(shape), 10);
    REQUIRE(m.ok());
    CHECK((*m)->describe() == describe);
    CHECK((*m)->num_params() == params);
  }
}

TEST_CASE("docs/models.md: the error messages are the code's", "[model][docs]") {
  const std::string doc = read_text("docs/models.md");
  const ImageShape mnist{1, 28, 28};
  const ImageShape cifar{3, 32, 32};
  const std::vector<std::string> messages{
      make_model(spec("resnet"), mnist, 10).error().message,
      make_model(spec("lenet"), cifar, 10).error().message,
      make_model(spec("cifar-cnn"), mnist, 10).error().message,
      make_model(spec("softmax", {128}), mnist, 10).error().message,
      make_model(spec("softmax", {}, -1.0f), mnist, 10).error().message,
      parse_hidden_sizes("256,x").error().message,
  };
  for (const auto& m : messages) CHECK_THAT(doc, Contains("`" + m + "`"));
}

TEST_CASE("docs/models.md: the C++ example is the accuracy test's loop", "[model][docs]") {
  const std::string test = read_text("tests/model/mnist_accuracy_test.cpp");
  for (const auto& line : block(read_text("docs/models.md"), "cpp")) {
    INFO(line);
    CHECK_THAT(test, Contains(line));
  }
}

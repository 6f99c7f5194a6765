// make_model, model_names and parse_hidden_sizes: turn the CLI's --model/--hidden/--l2 into a
// Model, or into a one-line error naming the problem and the fix.
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "model/architectures.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd {
namespace {

constexpr int kMaxHidden = 1 << 16;
constexpr const char* kHiddenExample = "write e.g. --hidden 256,128";

std::string trim(const std::string& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string shape_text(const ImageShape& s) {
  return fmt::format("{}x{}x{}", s.channels, s.height, s.width);
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names{"softmax", "mlp", "lenet", "cifar-cnn"};
  return names;
}

Result<std::vector<int>> parse_hidden_sizes(const std::string& text) {
  std::vector<int> sizes;
  if (trim(text).empty()) {
    return Error{
        fmt::format("--hidden '{}': give at least one layer size; {}", text, kHiddenExample)};
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    bool digits = !item.empty();
    for (char c : item) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    const std::size_t lead = digits ? item.find_first_not_of('0') : std::string::npos;
    if (lead == std::string::npos) {
      return Error{fmt::format("--hidden '{}': '{}' is not a positive integer; {}", text, item,
                               kHiddenExample)};
    }
    if (item.size() - lead > 6 || std::stoi(item) > kMaxHidden) {
      return Error{fmt::format("--hidden '{}': {} units is more than {} per layer; {}", text, item,
                               kMaxHidden, kHiddenExample)};
    }
    sizes.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

ModelSpec with_defaults(ModelSpec spec) {
  if (spec.name == "mlp" && spec.hidden.empty()) spec.hidden = {128};
  return spec;
}

bool is_model_name(std::string_view name) {
  const auto& names = model_names();
  return model::is_torchscript_name(name) ||
         std::find(names.begin(), names.end(), name) != names.end() ||
         model::registered_factory(name).has_value();
}

std::string unknown_model_message(std::string_view name) {
  std::vector<std::string> names = model_names();
  for (auto& r : registered_model_names()) names.push_back(std::move(r));
  return fmt::format("unknown model '{}'; use one of: {}, or torchscript:PATH", name,
                     fmt::join(names, ", "));
}

Result<std::unique_ptr<Model>> make_model(const ModelSpec& spec, const ImageShape& input,
                                          int num_classes) {
  if (!is_model_name(spec.name)) return Error{unknown_model_message(spec.name)};
  if (!spec.hidden.empty() && spec.name != "mlp") {
    return Error{
        fmt::format("--hidden sets the hidden layers of --model mlp only; drop --hidden "
                    "or use --model mlp (not {})",
                    spec.name)};
  }
  for (int h : spec.hidden) {
    if (h <= 0 || h > kMaxHidden) {
      return Error{fmt::format("hidden layer size {} must be between 1 and {}; {}", h, kMaxHidden,
                               kHiddenExample)};
    }
  }
  if (!std::isfinite(spec.l2) || spec.l2 < 0.0f) {
    return Error{fmt::format("--l2 {} must be a finite number >= 0 (e.g. --l2 1e-4, or 0 for none)",
                             spec.l2)};
  }
  if (input.channels < 1 || input.height < 1 || input.width < 1 || num_classes < 2 ||
      num_classes > 256) {
    return Error{
        fmt::format("model '{}' needs images of at least 1x1x1 and 2..256 classes, got {} "
                    "with {} classes; check the data set",
                    spec.name, shape_text(input), num_classes)};
  }
  if (model::is_torchscript_name(spec.name)) {
    return model::make_torchscript(spec.name, input, num_classes, spec.l2);
  }
  if (auto factory = model::registered_factory(spec.name)) {
    auto made = (*factory)(input, num_classes, spec.l2);
    if (made && !made.value()) {
      return Error{fmt::format("model '{}': its factory returned no model", spec.name)};
    }
    return made;
  }
  const ImageShape kMnist{1, 28, 28};
  const ImageShape kCifar{3, 32, 32};
  if (spec.name == "lenet" && !(input == kMnist)) {
    return Error{
        fmt::format("model 'lenet' needs 1x28x28 images, not {}; use --dataset mnist or "
                    "fashion-mnist (for cifar10 use --model cifar-cnn)",
                    shape_text(input))};
  }
  if (spec.name == "cifar-cnn" && !(input == kCifar)) {
    return Error{
        fmt::format("model 'cifar-cnn' needs 3x32x32 images, not {}; use --dataset "
                    "cifar10 (for mnist or fashion-mnist use --model lenet)",
                    shape_text(input))};
  }
  const float l2 = spec.l2;
  if (spec.name == "softmax") return model::make_softmax(input, num_classes, l2);
  if (spec.name == "mlp") {
    return model::make_mlp(input, num_classes, with_defaults(spec).hidden, l2);
  }
  if (spec.name == "lenet") return model::make_lenet(num_classes, l2);
  return model::make_cifar_cnn(num_classes, l2);
}

}  // namespace stalesgd

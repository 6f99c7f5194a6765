// Model: the interface every model (softmax, mlp, lenet, cifar-cnn) implements, over one flat
// float parameter vector so that the server stays model-agnostic: an update is one axpy, a
// snapshot one copy.
//
// Thread safety: a Model is immutable after construction; all its methods are const and may be
// called from any number of threads at once, each with its own Workspace. A Workspace holds one
// thread's scratch buffers (activations, im2col, ...) so that a step allocates nothing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct EvalResult {
  double loss = 0.0;   // mean cross-entropy (without the L2 term)
  double error = 0.0;  // fraction misclassified, in [0, 1]
};

// The sums behind an EvalResult, over some run of samples.
struct EvalSums {
  double loss = 0.0;       // summed cross-entropy (without the L2 term)
  std::size_t errors = 0;  // samples misclassified
};

// A failure of the model itself, not of stalesgd: a user's module whose forward fails on a
// batch. what() is one line that names it; detail() the rest (a TorchScript traceback), which
// goes to run.log. The engines report it as "worker N: what()" and end the run with exit 1.
class ModelError : public std::runtime_error {
 public:
  ModelError(const std::string& line, std::string detail)
      : std::runtime_error(line), detail_(std::move(detail)) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

// Per-thread scratch; each model defines its own. Opaque to callers.
class Workspace {
 public:
  virtual ~Workspace() = default;
};

class Model {
 public:
  virtual ~Model() = default;

  // e.g. "mlp(784-256-128-10)"
  virtual std::string describe() const = 0;
  virtual std::size_t num_params() const = 0;
  // The last num_state() entries of the flat vector are state that training changes but does
  // not descend on: a TorchScript module's buffers (BatchNorm running statistics). For them
  // loss_and_gradient writes the state's change, old - new, and the server folds it in as it
  // folds gradients, with weight 1 in place of the learning rate (docs/models.md, "Train mode
  // and buffers"). Evaluation reads them from w like the parameters.
  virtual std::size_t num_state() const { return 0; }

  // Fills `w` (num_params() floats) deterministically from `seed`.
  virtual void init_params(std::span<float> w, std::uint64_t seed) const = 0;

  // Scratch for batches of up to `max_batch` samples.
  virtual std::unique_ptr<Workspace> make_workspace(int max_batch) const = 0;

  // Mean cross-entropy over the batch (plus the L2 term, if any) at parameters `w`, and its
  // gradient written into `grad` (num_params() floats, overwritten). `cancel`, when non-null, is
  // polled between layers: if it reads true the computation stops and nullopt is returned
  // (`grad` is then unspecified). Allocates nothing once `ws` has been used for this batch size.
  virtual std::optional<float> loss_and_gradient(
      std::span<const float> w, const Batch& batch, std::span<float> grad, Workspace& ws,
      const std::atomic<bool>* cancel = nullptr) const = 0;

  // The L2 term of the objective at `w`: lambda/2 * ||W||^2 over the weights that --l2
  // penalises (0 without --l2). loss_and_gradient adds exactly this to the cross-entropy, and
  // evals.csv's train_objective is train_loss plus it (docs/outputs.md).
  virtual double l2_penalty(std::span<const float> w) const = 0;

  // Summed loss and errors of `w` over samples [first, first + count) of `data`, computed in
  // chunks of the workspace's max batch whose sums are added in order (from 0). Splitting a
  // range at multiples of the max batch and adding the parts' sums in order therefore gives the
  // whole range's sums bit for bit, which lets evaluations run in parallel blocks.
  virtual EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                                 std::size_t count, Workspace& ws) const = 0;

  // Mean loss and error of `w` over the first `max_samples` samples of `data` (all when 0).
  EvalResult evaluate(std::span<const float> w, const Split& data, Workspace& ws,
                      std::size_t max_samples = 0) const {
    const std::size_t total = max_samples == 0 ? data.count : std::min(max_samples, data.count);
    if (total == 0) return {};
    const EvalSums sums = evaluate_sums(w, data, 0, total, ws);
    return {sums.loss / static_cast<double>(total),
            static_cast<double>(sums.errors) / static_cast<double>(total)};
  }

  // Floating-point operations of one loss_and_gradient on `batch_size` samples, counting 2 per
  // multiply-add of the matrix products (forward and backward; elementwise work not counted)
  // as if the input were dense. For benchmarks and docs; 0 when unknown.
  virtual double gradient_flops(int /*batch_size*/) const { return 0.0; }
};

// What to build: the CLI's --model, --hidden and --l2.
struct ModelSpec {
  std::string name = "softmax";  // softmax | mlp | lenet | cifar-cnn | torchscript:PATH
  std::vector<int> hidden;       // mlp only: hidden layer sizes (default 128)
  float l2 = 0.0f;               // L2 coefficient lambda: adds lambda/2 * ||w||^2 (weights only)
};

// The spec with its defaults filled in (mlp without --hidden: one hidden layer of 128).
ModelSpec with_defaults(ModelSpec spec);

// The built-in models' names.
const std::vector<std::string>& model_names();

// A model of your own (docs/models.md, "Your own model in C++"): builds it for samples of
// `input` shape and `num_classes` classes with the L2 coefficient `l2`; an Error says what does
// not fit. Called once per run, from the thread that runs it: runs side by side (race --jobs)
// may call it at once.
using ModelFactory = std::function<Result<std::unique_ptr<Model>>(const ImageShape& input,
                                                                  int num_classes, float l2)>;

// Makes `name` a model that train(), ModelSpec and experiment files accept in this process,
// like a built-in one. Refused with one line: a name that is empty, holds ':' or a space, is a
// built-in's or was registered already. Register before training; thread-safe.
Status register_model(const std::string& name, ModelFactory factory);
// The names register_model() added, in the order they were added.
std::vector<std::string> registered_model_names();

// One of model_names(), a registered model, or "torchscript:PATH": a scripted PyTorch module
// (docs/models.md).
bool is_model_name(std::string_view name);
// "unknown model 'x'; use one of: ..."
std::string unknown_model_message(std::string_view name);

// Parses a --hidden list such as "256,128"; the error names the bad element.
Result<std::vector<int>> parse_hidden_sizes(const std::string& text);

// Builds the model for samples of `input` shape and `num_classes` classes. Errors (unknown
// model, a model that does not fit the shape, bad hidden sizes) name the problem and the fix.
Result<std::unique_ptr<Model>> make_model(const ModelSpec& spec, const ImageShape& input,
                                          int num_classes);

}  // namespace stalesgd

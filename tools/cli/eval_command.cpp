// `stalesgd eval`: scores a model file `train --save-model` wrote on a data set's test split,
// with the evaluator's own arithmetic (Model::evaluate), so that the error equals the run's last
// evaluation on the same samples (docs/cli.md).
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "engine/evaluator.hpp"
#include "output/model_file.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd::cli {

int eval_command(int argc, char** argv) {
  cxxopts::Options options("stalesgd eval",
                           "Test error and loss of a saved model (train --save-model) on a data "
                           "set's test split.\nDocs: docs/cli.md.");
  // The model and data flags are train's (the option table), so their values read the same.
  const std::vector<std::string> taken{"model", "hidden", "dataset", "data-dir", "eval-samples"};
  add_train_flags(options, taken);
  options.add_options()("model-file", "The .npy file train --save-model wrote",
                        cxxopts::value<std::string>());
  add_logging_options(options);
  options.add_options()("h,help", "Show this help");
  try {
    auto r = parse(options, argc, argv);
    if (auto done = help_or_logging(options, r)) return *done;
    if (!r.count("model-file")) return usage_error("eval", "--model-file PATH is required");
    TrainerOptions o;
    if (auto s = set_train_flags(r, taken, o); !s) return fail(s.error().message, 2);
    const auto data = load_dataset(o.dataset, o.data_dir);
    if (!data) return fail(data.error().message);
    auto model = make_model(with_defaults(o.model), data->test.shape, data->num_classes);
    if (!model) return fail(model.error().message, 2);
    const auto params = read_model_file(r["model-file"].as<std::string>(), (*model)->num_params());
    if (!params) return fail(params.error().message);
    // The evaluator's workspace size: the same chunks, so the same bits as the run's evaluations.
    const auto ws = (*model)->make_workspace(EvaluatorOptions{}.eval_batch);
    const auto e = (*model)->evaluate(*params, data->test, *ws, o.eval_test_samples);
    const std::size_t n = o.eval_test_samples == 0
                              ? data->test.count
                              : std::min(o.eval_test_samples, data->test.count);
    fmt::print("{:<18}{} on {}, {} test samples\n", "model", (*model)->describe(), data->name, n);
    fmt::print("{:<18}{:.4f}  (test loss {:.4f})\n", "test error", e.error, e.loss);
    return 0;
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("eval", e);
  }
}

}  // namespace stalesgd::cli

// What the files of the extension module stalesgd._core share (docs/python.md): the exception
// that carries the library's one-line messages, the options built from Python's key/value
// texts, and the call that runs the engine with the GIL released while Ctrl-C stays live.
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/data/dataset.hpp"

namespace stalesgd::python {

// Bad input: the one line the CLI would print. Raised in Python as stalesgd.Error, a ValueError.
class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// (key, value text) pairs as python/stalesgd/_options.py writes them from Python values.
using Settings = std::vector<std::pair<std::string, std::string>>;

// TrainerOptions from `settings`, each as `stalesgd train --set key=value` reads it (the option
// table's parsing and messages); keys the table keeps off experiment files (out, force,
// sequential, no_progress, ...) as their flags read them. For the package's call `call`
// ("train"), whose own keywords are `call_keys` ("data", "progress"): an unknown key is refused
// as that call's keyword argument, naming the closest of the table's keys (train's own flags
// among them) and the call's. Throws OptionError.
TrainerOptions options_from_settings(const Settings& settings, const std::string& call,
                                     const std::vector<std::string>& call_keys);

// Runs `work` on a thread of its own with the GIL released; the calling (main) thread polls
// Python's signal handlers every 100 ms, and on Ctrl-C sets `interrupt`, waits for `work` to
// stop cleanly and re-raises KeyboardInterrupt. `poll` (progress) is called under the GIL at
// each tick. `work`'s exception is rethrown here.
void run_interruptible(const std::function<void()>& work, std::atomic<bool>& interrupt,
                       const std::function<void()>& poll = {});

// The data set of the arrays python/stalesgd/_data.py's arrays_of returns, named `name`, its
// digest the CRC-32s of the arrays (a resumed run's identity check compares it).
Dataset dataset_from_arrays(const pybind11::object& arrays, const std::string& name);

void bind_train(pybind11::module_& m);
void bind_race(pybind11::module_& m);
void bind_theory(pybind11::module_& m);

}  // namespace stalesgd::python

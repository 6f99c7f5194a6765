// stalesgd._core.race: an experiment file's runs into a folder, as `stalesgd race FILE --out DIR`
// (docs/experiments.md); python/stalesgd/_race.py writes a dict as such a file first.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "output/folder_lock.hpp"
#include "python/bindings.hpp"
#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/experiment/race.hpp"

namespace stalesgd::python {

namespace py = pybind11;

void bind_race(py::module_& m) {
  m.def(
      "race",
      [](const std::string& file, const std::vector<std::string>& set, const std::string& out,
         int jobs, bool force, bool resume, bool progress,
         const std::vector<std::string>& command_line) {
        auto ex = load_experiment(file, set);
        if (!ex) throw OptionError(ex.error().message);
        // As `race --jobs` checks it (tools/cli/race_args.cpp).
        if (jobs < 1 || jobs > 1024) {
          throw OptionError(fmt::format("--jobs {} is not a number of runs from 1 to 1024", jobs));
        }
        if (auto s = FolderLock::check(out); !s) throw OptionError(s.error().message);
        const auto existing = resume  ? ExistingOut::kResume
                              : force ? ExistingOut::kOverwrite
                                      : ExistingOut::kRefuse;
        if (auto s = check_race_out(out, existing); !s) throw OptionError(s.error().message);
        auto data = check_race(*ex);
        if (!data) throw OptionError(data.error().message);
        // One process per race folder for the whole race (docs/reliability.md).
        auto lock = FolderLock::acquire(out);
        if (!lock) throw OptionError(lock.error().message);
        // Set by the interpreter's thread on Ctrl-C, polled by the runs; relaxed, as it carries
        // no data (as the CLI's flag, tools/cli/interrupt.cpp).
        std::atomic<bool> interrupt{false};
        Result<RaceOutcome> outcome = Error{""};
        run_interruptible(
            [&] {
              outcome = run_race(*ex, std::move(data).value(), out, &interrupt, {},
                                 RaceSettings{.resume = resume,
                                              .rerun_changed = resume && force,
                                              .jobs = jobs,
                                              .progress = progress,
                                              .command_line = command_line});
            },
            interrupt);
        if (!outcome) throw OptionError(outcome.error().message);
        return outcome->interrupted;
      },
      py::arg("file"), py::arg("set"), py::arg("out"), py::arg("jobs") = 1,
      py::arg("force") = false, py::arg("resume") = false, py::arg("progress") = false,
      py::arg("command_line") = std::vector<std::string>{});
}

}  // namespace stalesgd::python

// The engine runs on a thread of its own with the GIL released, so that other Python threads
// go on and a run is as fast as the CLI's; the interpreter's thread waits for it, polling
// Python's signal handlers, which is how Ctrl-C reaches a run started from Python
// (docs/python.md, "Ctrl-C").
#include <chrono>
#include <exception>
#include <future>
#include <thread>

#include "python/bindings.hpp"

namespace stalesgd::python {

namespace py = pybind11;

void run_interruptible(const std::function<void()>& work, std::atomic<bool>& interrupt,
                       const std::function<void()>& poll) {
  std::packaged_task<void()> task(work);
  std::future<void> done = task.get_future();
  std::thread runner(std::move(task));
  bool interrupted = false;
  {
    const py::gil_scoped_release release;
    while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      const py::gil_scoped_acquire acquire;
      // Python's SIGINT handler raised KeyboardInterrupt (or a handler of the user's raised):
      // the run is asked to stop and finishes writing what it recorded first.
      if (!interrupted && PyErr_CheckSignals() != 0) {
        interrupted = true;
        interrupt.store(true, std::memory_order_relaxed);
        continue;
      }
      if (poll && !interrupted) {
        try {
          poll();
        } catch (py::error_already_set& e) {
          // A failing progress callback stops the run as Ctrl-C does; its error is raised below.
          interrupted = true;
          interrupt.store(true, std::memory_order_relaxed);
          e.restore();
        }
      }
    }
  }
  runner.join();
  if (interrupted) {
    if (PyErr_Occurred() == nullptr) PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  done.get();  // rethrows the run's exception
}

}  // namespace stalesgd::python

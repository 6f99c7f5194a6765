// caught_failure: a user's module, memory or threads running out, and a bug, told apart by the
// exception's type, each with its one line.
#include "engine/caught_failure.hpp"

#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>

#include <catch2/catch.hpp>

#include "stalesgd/model/model.hpp"

using namespace stalesgd;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

template <class Throw>
CaughtFailure caught(Throw&& do_throw) {
  try {
    do_throw();
  } catch (...) {
    return caught_failure("worker 3");
  }
  FAIL("nothing was thrown");
  return {};
}

}  // namespace

TEST_CASE("caught_failure tells the module, the machine and a bug apart", "[engine][failure]") {
  const auto model = caught([] { throw ModelError("its forward fails", "Traceback ..."); });
  CHECK(model.cause == FailureCause::kModel);
  CHECK(model.message == "worker 3: its forward fails");
  CHECK(model.detail == "Traceback ...");

  const auto memory = caught([] { throw std::bad_alloc(); });
  CHECK(memory.cause == FailureCause::kResources);
  CHECK_THAT(memory.message, StartsWith("out of memory in worker 3: an allocation failed") &&
                                 Contains("fewer workers"));

  const auto thread = caught(
      [] { throw std::system_error(EAGAIN, std::generic_category(), "thread not started"); });
  CHECK(thread.cause == FailureCause::kResources);
  CHECK_THAT(thread.message,
             StartsWith("worker 3: the system would not start another thread (EAGAIN)"));

  const auto other_errno =
      caught([] { throw std::system_error(EBADF, std::generic_category(), "a bad descriptor"); });
  CHECK(other_errno.cause == FailureCause::kBug);
  CHECK_THAT(other_errno.message, StartsWith("internal error in worker 3: a bad descriptor"));

  const auto bug = caught([] { throw std::logic_error("a broken invariant"); });
  CHECK(bug.cause == FailureCause::kBug);
  CHECK(bug.message == "internal error in worker 3: a broken invariant");

  const auto odd = caught([] { throw 42; });
  CHECK(odd.cause == FailureCause::kBug);
  CHECK(odd.message == "internal error in worker 3: an exception that is not a std::exception");
}

TEST_CASE("mark_cause sets the record's flag for the module or the machine", "[engine][failure]") {
  RunRecord run;
  mark_cause(run, FailureCause::kResources);
  CHECK(run.resources_failed);
  CHECK_FALSE(run.model_failed);
  mark_cause(run, FailureCause::kModel);
  CHECK(run.model_failed);
  CHECK_FALSE(run.resources_failed);
  mark_cause(run, FailureCause::kBug);
  CHECK_FALSE(run.model_failed);
  CHECK_FALSE(run.resources_failed);
}

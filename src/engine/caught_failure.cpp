// caught_failure: the exception being handled, told apart by its type.
#include "engine/caught_failure.hpp"

#include <cerrno>
#include <exception>
#include <new>
#include <system_error>

#include <fmt/format.h>

#include "stalesgd/model/model.hpp"
#include "util/memory.hpp"
#include "util/thread_room.hpp"

namespace stalesgd {

CaughtFailure caught_failure(std::string_view where) {
  try {
    throw;
  } catch (const ModelError& e) {
    return {fmt::format("{}: {}", where, e.what()), e.detail(), FailureCause::kModel};
  } catch (const std::bad_alloc&) {
    return {out_of_memory_message(where), {}, FailureCause::kResources};
  } catch (const std::system_error& e) {
    // std::thread reports a thread the system would not start as EAGAIN (the process or
    // thread limits) or ENOMEM (no room for its stack).
    const int code = e.code().value();
    if (e.code().category() == std::generic_category() ||
        e.code().category() == std::system_category()) {
      if (code == EAGAIN) return {out_of_threads_message(where), {}, FailureCause::kResources};
      if (code == ENOMEM) return {out_of_memory_message(where), {}, FailureCause::kResources};
    }
    return {fmt::format("internal error in {}: {}", where, e.what()), {}, FailureCause::kBug};
  } catch (const std::exception& e) {
    return {fmt::format("internal error in {}: {}", where, e.what()), {}, FailureCause::kBug};
  } catch (...) {
    return {fmt::format("internal error in {}: an exception that is not a std::exception", where),
            {},
            FailureCause::kBug};
  }
}

void mark_cause(RunRecord& run, FailureCause cause) {
  run.model_failed = cause == FailureCause::kModel;
  run.resources_failed = cause == FailureCause::kResources;
}

}  // namespace stalesgd

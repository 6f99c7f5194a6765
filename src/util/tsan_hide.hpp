// Hiding a thread's memory accesses from ThreadSanitizer, for code whose synchronisation TSan
// cannot see (oneTBB's uninstrumented scheduler, src/util/parallel.hpp) or whose accesses are
// private to one thread and too many to check cheaply (the data loaders). Compiles to nothing
// outside TSan builds.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" {
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
}
#endif

namespace stalesgd::tsan {

// Hides this thread's memory accesses from TSan until the matching show(); nests (a counter).
inline void hide() {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
}
inline void show() {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
}

// hide() for one scope.
class HiddenScope {
 public:
  HiddenScope() { hide(); }
  ~HiddenScope() { show(); }
  HiddenScope(const HiddenScope&) = delete;
  HiddenScope& operator=(const HiddenScope&) = delete;
};

}  // namespace stalesgd::tsan

// Whether this test binary runs under AddressSanitizer or ThreadSanitizer (GCC says so by its
// __SANITIZE_*__ macros, clang by __has_feature). The end-to-end tests that repeat whole
// training runs take a lighter model or a shorter run there, where every access is checked and
// compute is 10-40x slower; what they check stays the same.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STALESGD_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STALESGD_TEST_SANITIZED 1
#endif
#endif
#ifndef STALESGD_TEST_SANITIZED
#define STALESGD_TEST_SANITIZED 0
#endif
#if defined(__SANITIZE_THREAD__)
#define STALESGD_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STALESGD_TEST_TSAN 1
#endif
#endif
#ifndef STALESGD_TEST_TSAN
#define STALESGD_TEST_TSAN 0
#endif

namespace stalesgd::test {

inline constexpr bool kSanitized = STALESGD_TEST_SANITIZED == 1;
// ThreadSanitizer alone: for tests whose repetitions vary single-threaded logic only.
inline constexpr bool kThreadSanitized = STALESGD_TEST_TSAN == 1;

}  // namespace stalesgd::test

// Whether this test binary runs under AddressSanitizer or ThreadSanitizer (GCC and clang say so
// by their macros). The end-to-end tests that repeat whole training runs take a lighter model
// or a shorter run there, where every access is checked and compute is 10-40x slower; what they
// check stays the same.
#pragma once

namespace stalesgd::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace stalesgd::test

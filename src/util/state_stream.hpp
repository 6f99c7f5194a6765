// StateWriter / StateReader: the binary encoding of a run's state in a checkpoint
// (docs/reliability.md). Numbers are stored as their bytes (doubles and floats bit for bit, so
// a resumed virtual-clock run continues exactly), random engines as their standard text form,
// and each part behind a tag, so that a reader out of step fails at once with the part's name.
// The reader never trusts a length: every size is checked against the bytes left before
// anything is allocated, and a malformed input only makes ok() false.
//
// Thread safety: none; one thread uses a writer or reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "stalesgd/util/seed.hpp"

namespace stalesgd {

class StateWriter {
 public:
  void tag(std::string_view name) { str(name); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void boolean(bool v) { u64(v ? 1 : 0); }
  void str(std::string_view s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  template <class T>
  void values(std::span<const T> v) {
    static_assert(std::is_trivially_copyable_v<T>);
    u64(v.size());
    raw(v.data(), v.size() * sizeof(T));
  }
  template <class T>
  void values(const std::vector<T>& v) {
    values(std::span<const T>(v));
  }
  void rng(const Rng& engine);

  const std::string& bytes() const { return out_; }

 private:
  void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class StateReader {
 public:
  explicit StateReader(std::string_view bytes) : in_(bytes) {}

  // False (and the error names `name`) when the next part is not `name`.
  bool tag(std::string_view name);
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  std::int64_t i64() { return pod<std::int64_t>(); }
  double f64() { return pod<double>(); }
  bool boolean() { return u64() != 0; }
  std::string str();
  // Reads a vector written by values(); `expected`, when given, is the only size accepted.
  template <class T>
  std::vector<T> values(std::int64_t expected = -1) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::uint64_t n = u64();
    std::vector<T> v;
    if (!ok_ || (expected >= 0 && n != static_cast<std::uint64_t>(expected)) ||
        n > left() / sizeof(T)) {
      fail("a list of the wrong length");
      return v;
    }
    v.resize(n);
    if (n != 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  void rng(Rng& engine);

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  // What went wrong first, e.g. "part 'core': a list of the wrong length".
  const std::string& error() const { return error_; }
  // Marks the input bad (a value out of its range, found by the caller).
  void fail(std::string_view what);

 private:
  std::size_t left() const { return in_.size() - pos_; }
  template <class T>
  T pod() {
    T v{};
    if (!ok_ || left() < sizeof(T)) {
      fail("the data ends early");
      return v;
    }
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
  std::string part_;  // the latest tag read
  std::string error_;
};

}  // namespace stalesgd

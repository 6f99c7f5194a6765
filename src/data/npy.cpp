// .npy parsing: the header is read as the small subset of Python literals numpy writes (strings,
// True/False, tuples of integers); a structured dtype's list is kept as text to name it.
#include "data/npy.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/zip_archive.hpp"
#include "util/printable.hpp"

namespace stalesgd {
namespace {

// numpy itself refuses headers over 10,000 bytes unless told otherwise; a megabyte is generous
// and keeps a corrupt length from being believed.
constexpr std::uint64_t kMaxHeader = 1 << 20;
constexpr const char* kResave = "save the array again with numpy.savez";

struct Known {
  std::string_view descr;
  NpyType type;
  const char* name;
};
// One-byte types have no byte order: numpy writes '|', other writers may write '<' or '>'.
constexpr Known kKnown[] = {{"|u1", NpyType::kU1, "uint8"},   {"<u1", NpyType::kU1, "uint8"},
                            {">u1", NpyType::kU1, "uint8"},   {"|i1", NpyType::kI1, "int8"},
                            {"<i1", NpyType::kI1, "int8"},    {">i1", NpyType::kI1, "int8"},
                            {"<u2", NpyType::kU2, "uint16"},  {"<i2", NpyType::kI2, "int16"},
                            {"<u4", NpyType::kU4, "uint32"},  {"<i4", NpyType::kI4, "int32"},
                            {"<u8", NpyType::kU8, "uint64"},  {"<i8", NpyType::kI8, "int64"},
                            {"<f4", NpyType::kF4, "float32"}, {"<f8", NpyType::kF8, "float64"}};

// A recursive-descent reader of the header's dict literal.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view s) : s_(s) {}

  // Fills descr, type and shape; returns what is wrong, or nothing.
  std::string read(NpyArray& a, bool& fortran) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!eat('{')) return "it does not start with '{'";
    while (!eat('}')) {
      auto key = string();
      if (!key || !eat(':')) return "expected 'key': value";
      skip_space();
      if (*key == "descr") {
        seen_descr = true;
        if (peek() == '[') {
          a.descr = printable(balanced().substr(0, 60));
        } else if (auto d = string()) {
          a.descr = printable(d->substr(0, 60));
        } else {
          return "'descr' is not a string";
        }
      } else if (*key == "fortran_order") {
        seen_order = true;
        if (word("True")) {
          fortran = true;
        } else if (!word("False")) {
          return "'fortran_order' is not True or False";
        }
      } else if (*key == "shape") {
        seen_shape = true;
        if (auto problem = shape(a.shape); !problem.empty()) return problem;
      } else {
        skip_value();
      }
      if (!eat(',') && peek() != '}') return "expected ',' or '}' after a value";
      skip_space();
    }
    if (!seen_descr || !seen_order || !seen_shape) {
      return "it lacks one of 'descr', 'fortran_order' and 'shape'";
    }
    return {};
  }

 private:
  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\t')) ++at_;
  }
  bool eat(char c) {
    skip_space();
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  bool word(std::string_view w) {
    skip_space();
    if (s_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  std::optional<std::string> string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') return std::nullopt;
    const std::size_t end = s_.find(quote, at_ + 1);
    if (end == std::string_view::npos) return std::nullopt;
    std::string out(s_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return out;
  }
  // From an opening bracket to its match (brackets inside quotes do not count).
  std::string balanced() {
    const std::size_t start = at_;
    int depth = 0;
    for (; at_ < s_.size(); ++at_) {
      const char c = s_[at_];
      if (c == '\'' || c == '"') {
        const std::size_t end = s_.find(c, at_ + 1);
        at_ = end == std::string_view::npos ? s_.size() - 1 : end;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && --depth == 0) {
        ++at_;
        break;
      }
    }
    return std::string(s_.substr(start, at_ - start));
  }
  void skip_value() {
    skip_space();
    if (peek() == '\'' || peek() == '"') {
      string();
    } else if (peek() == '(' || peek() == '[' || peek() == '{') {
      balanced();
    } else {
      while (at_ < s_.size() && s_[at_] != ',' && s_[at_] != '}') ++at_;
    }
  }
  // (N, H, W) with an optional trailing comma; Python 2's numpy wrote longs as 60000L.
  std::string shape(std::vector<std::uint64_t>& out) {
    if (!eat('(')) return "'shape' is not a tuple";
    while (!eat(')')) {
      skip_space();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) return "'shape' holds a non-integer";
      std::uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const std::uint64_t d = static_cast<std::uint64_t>(peek() - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return "'shape' overflows";
        v = v * 10 + d;
        ++at_;
      }
      if (peek() == 'L') ++at_;
      out.push_back(v);
      if (out.size() > 32) return "'shape' has more than 32 dimensions";
      if (!eat(',') && peek() != ')') return "expected ',' or ')' in 'shape'";
    }
    return {};
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

std::uint64_t read_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::size_t npy_item_bytes(NpyType type) {
  switch (type) {
    case NpyType::kU1:
    case NpyType::kI1:
      return 1;
    case NpyType::kU2:
    case NpyType::kI2:
      return 2;
    case NpyType::kU4:
    case NpyType::kI4:
    case NpyType::kF4:
      return 4;
    default:
      return 8;
  }
}

bool npy_is_integer(NpyType type) {
  return type != NpyType::kF4 && type != NpyType::kF8;
}

Result<NpyArray> parse_npy(std::span<const std::uint8_t> b, bool whole) {
  constexpr std::string_view kMagic = "\x93NUMPY";
  const auto same = [](char c, std::uint8_t u) { return static_cast<std::uint8_t>(c) == u; };
  if (b.size() < 10 || !std::equal(kMagic.begin(), kMagic.end(), b.begin(), same)) {
    return Error{fmt::format("is not a .npy array (no \\x93NUMPY magic); {}", kResave)};
  }
  const int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0) {
    return Error{fmt::format(
        "has .npy format version {}.{}; stalesgd reads 1.0, 2.0 and 3.0: {} from numpy 1.9 or "
        "later",
        major, minor, kResave)};
  }
  const std::size_t pre = major == 1 ? 10 : 12;
  if (b.size() < pre) return Error{fmt::format("is truncated inside its .npy header; {}", kResave)};
  const std::uint64_t length = read_le(b.data() + 8, pre - 8);
  if (length > kMaxHeader) {
    return Error{
        fmt::format("has a .npy header of {} bytes, over the {} a header can be: the "
                    "file is corrupt; {}",
                    length, kMaxHeader, kResave)};
  }
  if (b.size() - pre < length) {
    return Error{fmt::format("is truncated inside its .npy header; {}", kResave)};
  }
  NpyArray a;
  bool fortran = false;
  const std::string_view text(reinterpret_cast<const char*>(b.data() + pre), length);
  if (auto problem = HeaderReader(text).read(a, fortran); !problem.empty()) {
    return Error{fmt::format("has a malformed .npy header ({}); {}", problem, kResave)};
  }
  if (fortran) {
    return Error{
        "is stored in Fortran order (fortran_order True), which stalesgd does not read; save "
        "numpy.ascontiguousarray(a) instead"};
  }
  for (const auto& k : kKnown) {
    if (k.descr == a.descr) a.type = k.type;
  }
  a.elements = 1;
  for (const std::uint64_t d : a.shape) {
    if (d != 0 && a.elements > (std::uint64_t{1} << 60) / d) {
      return Error{fmt::format("has shape {}, too large for any file; the header is corrupt; {}",
                               npy_shape_text(a.shape), kResave)};
    }
    a.elements *= d;
  }
  const auto data = b.subspan(pre + length);
  if (!whole || !a.type) return a;
  const std::uint64_t need = a.elements * npy_item_bytes(*a.type);
  if (data.size() != need) {
    return Error{fmt::format(
        "holds {} bytes of data where its header (shape {}, dtype '{}') says {}: the file is "
        "truncated or corrupt; {}",
        data.size(), npy_shape_text(a.shape), a.descr, need, kResave)};
  }
  a.data = data;
  return a;
}

std::string npy_dtype_text(const NpyArray& a) {
  for (const auto& k : kKnown) {
    if (k.descr == a.descr) return fmt::format("dtype '{}' ({})", a.descr, k.name);
  }
  const std::string_view d = a.descr;
  if (d.starts_with('[')) return fmt::format("a structured dtype {}", d);
  const bool ordered = !d.empty() && std::string_view("<>|=").find(d[0]) != std::string_view::npos;
  const char kind = d.size() > (ordered ? 1u : 0u) ? d[ordered ? 1 : 0] : '?';
  std::string what = "not a numeric type stalesgd reads";
  if (d.starts_with('>') && std::string_view("iuf").find(kind) != std::string_view::npos) {
    what = "big-endian";
  } else if (kind == 'O') {
    what = "Python objects";
  } else if (kind == 'U' || kind == 'S' || kind == 'a') {
    what = "strings";
  } else if (kind == 'c') {
    what = "complex numbers";
  } else if (kind == 'b' || kind == '?') {
    what = "booleans";
  } else if (kind == 'M' || kind == 'm') {
    what = "dates or times";
  } else if (kind == 'f') {
    what = "a float width other than 32 or 64 bits";
  }
  return fmt::format("dtype '{}' ({})", d, what);
}

std::int64_t npy_integer(const NpyArray& a, std::size_t i) {
  const std::size_t n = npy_item_bytes(*a.type);
  const std::uint64_t raw = read_le(a.data.data() + i * n, n);
  switch (*a.type) {
    case NpyType::kI1:
      return static_cast<std::int8_t>(raw);
    case NpyType::kI2:
      return static_cast<std::int16_t>(raw);
    case NpyType::kI4:
      return static_cast<std::int32_t>(raw);
    case NpyType::kI8:
      return static_cast<std::int64_t>(raw);
    default:  // unsigned
      return static_cast<std::int64_t>(
          std::min<std::uint64_t>(raw, std::numeric_limits<std::int64_t>::max()));
  }
}

std::string npy_integer_text(const NpyArray& a, std::size_t i) {
  if (*a.type == NpyType::kU8) return std::to_string(read_le(a.data.data() + i * 8, 8));
  return std::to_string(npy_integer(a, i));
}

std::string npy_shape_text(const std::vector<std::uint64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace stalesgd

// The .npy array format of numpy.lib.format, versions 1.0, 2.0 and 3.0: the magic "\x93NUMPY",
// a version, a little-endian header length (2 bytes in 1.0, 4 in 2.0 and 3.0), a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (N, 28, 28), } and the data.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// The dtypes stalesgd reads: unsigned and signed integers of 1 to 8 bytes, float32, float64.
enum class NpyType { kU1, kI1, kU2, kI2, kU4, kI4, kU8, kI8, kF4, kF8 };

std::size_t npy_item_bytes(NpyType type);
bool npy_is_integer(NpyType type);

struct NpyArray {
  std::string descr;            // as written ('<f4'), printable; the list text of a structured type
  std::optional<NpyType> type;  // empty when stalesgd does not read the dtype
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 0;          // the product of shape
  std::span<const std::uint8_t> data;  // C order, little-endian; empty if parsed as a header only
};

// Parses the bytes of one .npy file. `whole`: the data must be exactly what the header
// describes; otherwise `bytes` may be just a prefix holding the header, and `data` stays empty.
// An error is a phrase without the file or array name ("is stored in Fortran order; ..."),
// which the caller puts after them; it ends with the fix.
Result<NpyArray> parse_npy(std::span<const std::uint8_t> bytes, bool whole);

// What an unreadable dtype is, for messages: "dtype '<U5' (strings)".
std::string npy_dtype_text(const NpyArray& array);

// Element i of an integer array. A uint64 above 2^63 - 1 reads as INT64_MAX, which is out of
// every label range anyway; npy_integer_text gives its real value for the message.
std::int64_t npy_integer(const NpyArray& array, std::size_t i);
std::string npy_integer_text(const NpyArray& array, std::size_t i);

// A shape as numpy prints it: "(60000, 28, 28)", "(5,)", "()".
std::string npy_shape_text(const std::vector<std::uint64_t>& shape);

}  // namespace stalesgd

// .npz data sets the reader refuses: each is one line naming the file, the array and the fix.
#include <catch2/catch.hpp>

#include <cmath>

#include "stalesgd/data/catalog.hpp"
#include "support/fixtures.hpp"
#include "support/npz_files.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

// The error of loading `bytes` as an npz data set; it must be one line that names the file.
std::string error_of(const Bytes& bytes) {
  TempDir dir;
  const fs::path file = dir / "bad.npz";
  write_bytes(file, bytes);
  auto ds = load_dataset("npz:" + file.string(), "data");
  REQUIRE_FALSE(ds.ok());
  const std::string& message = ds.error().message;
  INFO(message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK_THAT(message, StartsWith(file.string() + ": "));
  return message;
}

std::string error_of(const std::vector<ZipMember>& members, const ZipOptions& options = {}) {
  return error_of(zip_bytes(members, options));
}

// `members` with one array replaced.
std::vector<ZipMember> with(const std::string& name, Bytes bytes,
                            std::vector<ZipMember> members = small_npz_members()) {
  set_member(members, name + ".npy", std::move(bytes));
  return members;
}

// The offset of the n-th (from 0) occurrence of a 4-byte zip signature.
std::size_t find_sig(const Bytes& b, std::uint32_t sig, int n = 0) {
  for (std::size_t at = 0; at + 4 <= b.size(); ++at) {
    const std::uint32_t v =
        b[at] | b[at + 1] << 8 | b[at + 2] << 16 | std::uint32_t{b[at + 3]} << 24;
    if (v == sig && n-- == 0) return at;
  }
  FAIL("signature not found");
  return 0;
}

void put16(Bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v);
  b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}

constexpr std::uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50;

Bytes u8(std::size_t n, std::uint8_t v = 1) {
  return Bytes(n, v);
}

}  // namespace

TEST_CASE("npz errors: not a zip, a lone .npy, truncated, no arrays", "[data][npz]") {
  CHECK_THAT(error_of(Bytes{'h', 'e', 'l', 'l', 'o'}),
             Contains("not an .npz file (5 bytes, not a zip archive)") && Contains("numpy.savez"));
  CHECK_THAT(error_of(Bytes{}), Contains("not an .npz file (0 bytes"));
  CHECK_THAT(error_of(npy("|u1", {2}, u8(2))),
             Contains("a single .npy array, not an .npz archive") &&
                 Contains("numpy.savez(PATH, x_train=..., y_train=..., x_test=..., y_test=...)"));
  Bytes cut = zip_bytes(small_npz_members(), {.deflate = true});
  cut.resize(cut.size() / 2);
  CHECK_THAT(error_of(cut),
             Contains("truncated: a zip archive's start") && Contains("copy the file again"));
  CHECK_THAT(
      error_of({{"notes.txt", u8(3)}, {"readme", u8(1)}}),
      Contains("a zip archive but not an .npz: it holds no .npy arrays (notes.txt, readme)"));
}

TEST_CASE("npz errors: a missing array names the ones the file has", "[data][npz]") {
  auto members = small_npz_members();
  members.pop_back();  // y_test
  CHECK_THAT(error_of(members),
             Contains("no array 'y_test' (the file holds x_train, y_train, x_test)") &&
                 Contains("needs x_train, y_train, x_test and y_test"));
}

TEST_CASE("npz errors: lengths, shapes and empty splits", "[data][npz]") {
  CHECK_THAT(error_of(with("y_train", npy<std::int64_t>("<i8", {5}, {0, 1, 2, 0, 1}))),
             Contains("x_train holds 6 samples but y_train holds 5 labels"));
  CHECK_THAT(error_of(with("x_test", npy("|u1", {3, 3, 2}, u8(18)))),
             Contains("x_train's samples are 1x2x3 (shape (6, 2, 3)) but x_test's 1x3x2 "
                      "(shape (3, 3, 2))") &&
                 Contains("the same sample shape"));
  CHECK_THAT(error_of(with("x_test", npy("|u1", {3, 6}, u8(18)))),
             Contains("but x_test's 1x1x6 (shape (3, 6))"));
  auto empty = with("x_train", npy("|u1", {0, 2, 3}, u8(0)));
  CHECK_THAT(error_of(with("y_train", npy<std::int64_t>("<i8", {0}, {}), empty)),
             Contains("x_train holds no samples (shape (0, 2, 3))"));
  CHECK_THAT(error_of(with("x_train", npy("|u1", {6}, u8(6)))),
             Contains("x_train has shape (6,); samples must be vectors (N, D), images (N, H, W)"));
  CHECK_THAT(error_of(with("y_train", npy("|u1", {6, 3}, u8(18)))),
             Contains("y_train has shape (6, 3); labels must be one integer per sample") &&
                 Contains("y_train.argmax(1)"));
}

TEST_CASE("npz errors: labels out of range name the first bad one", "[data][npz]") {
  auto two = with("num_classes", npy<std::int64_t>("<i8", {}, {2}));
  CHECK_THAT(error_of(two), Contains("y_train[2] = 2 is out of range [0, 2) (num_classes = 2)"));
  CHECK_THAT(error_of(with("y_test", npy<std::int32_t>("<i4", {3}, {2, -1, 0}))),
             Contains("y_test[1] = -1 is negative"));
  CHECK_THAT(error_of(with("y_train", npy<std::int16_t>("<i2", {6}, {0, 300, 1, 1, 1, 1}))),
             Contains("y_train[1] = 300 is over 255") && Contains("at most 256 classes"));
  CHECK_THAT(
      error_of(with("y_test", npy<std::uint64_t>("<u8", {3}, {0, 18446744073709551615u, 1}))),
      Contains("y_test[1] = 18446744073709551615 is over 255"));
  auto one = with("y_train", npy<std::int64_t>("<i8", {6}, {0, 0, 0, 0, 0, 0}));
  CHECK_THAT(error_of(with("y_test", npy<std::int64_t>("<i8", {3}, {0, 0, 0}), one)),
             Contains("every label is 0, one class"));
  CHECK_THAT(error_of(with("num_classes", npy<std::int64_t>("<i8", {}, {1}))),
             Contains("num_classes = 1 is out of range; stalesgd trains 2 to 256 classes"));
  CHECK_THAT(error_of(with("num_classes", npy<std::int64_t>("<i8", {}, {1000}))),
             Contains("num_classes = 1000 is out of range"));
  CHECK_THAT(
      error_of(with("num_classes", npy<std::int64_t>("<i8", {2}, {3, 3}))),
      Contains("num_classes has shape (2,) and dtype '<i8' (int64); it must be one integer"));
  CHECK_THAT(error_of(with("num_classes", npy<double>("<f8", {}, {3.0}))),
             Contains("num_classes has shape () and dtype '<f8' (float64)"));
}

TEST_CASE("npz errors: dtypes stalesgd does not read", "[data][npz]") {
  const auto x_error = [](const std::string& descr, std::size_t item) {
    return error_of(with("x_train", npy_bytes(descr, {6, 2, 3}, u8(36 * item))));
  };
  const std::string pixels =
      "features must be uint8 pixels (0..255, scaled to [0, 1]) or "
      "float32 or float64 values (taken as is): save "
      "x_train.astype('float32')";
  CHECK_THAT(x_error("|O", 8),
             Contains("x_train has dtype '|O' (Python objects)") && Contains(pixels));
  CHECK_THAT(x_error("<U5", 20), Contains("dtype '<U5' (strings)"));
  CHECK_THAT(x_error("<c8", 8), Contains("dtype '<c8' (complex numbers)"));
  CHECK_THAT(x_error(">f4", 4), Contains("dtype '>f4' (big-endian)"));
  CHECK_THAT(x_error("|b1", 1), Contains("dtype '|b1' (booleans)"));
  CHECK_THAT(x_error("<f2", 2), Contains("dtype '<f2' (a float width other than 32 or 64 bits)"));
  CHECK_THAT(x_error("<i8", 8), Contains("dtype '<i8' (int64)") && Contains(pixels));
  CHECK_THAT(x_error("[('a', '<f4')]", 4), Contains("a structured dtype [('a', '<f4')]"));
  CHECK_THAT(error_of(with("y_train", npy<float>("<f4", {6}, {0, 1, 2, 0, 1, 2}))),
             Contains("y_train has dtype '<f4' (float32); labels must be integers") &&
                 Contains("y_train.astype('int64')"));
  CHECK_THAT(error_of(with("y_test", npy_bytes(">i4", {3}, u8(12, 0)))),
             Contains("y_test has dtype '>i4' (big-endian)"));
}

TEST_CASE("npz errors: non-finite features", "[data][npz]") {
  std::vector<float> f4(36, 0.5f);
  f4[8] = NAN;
  CHECK_THAT(error_of(with("x_train", npy("<f4", {6, 2, 3}, f4))),
             Contains("x_train holds nan at sample 1, element 2; features must be finite"));
  auto f4_train = with("x_train", npy("<f4", {6, 2, 3}, std::vector<float>(36, 0.5f)));
  std::vector<double> f8(18, 0.0);
  f8[0] = INFINITY;
  // The splits may differ in dtype.
  CHECK_THAT(error_of(with("x_test", npy("<f8", {3, 2, 3}, f8), f4_train)),
             Contains("x_test holds inf at sample 0, element 0"));
  auto f8_train = with("x_train", npy("<f8", {6, 2, 3}, std::vector<double>(36, 0.5)));
  f8[0] = 0.0;
  f8[17] = 1e300;
  CHECK_THAT(error_of(with("x_test", npy("<f8", {3, 2, 3}, f8), f8_train)),
             Contains("x_test holds 1e+300 at sample 2, element 5, beyond float32's range"));
}

TEST_CASE("npz errors: .npy headers", "[data][npz]") {
  CHECK_THAT(error_of(with("x_train", npy_bytes("|u1", {6, 2, 3}, u8(36), 1, true))),
             Contains("x_train is stored in Fortran order") && Contains("numpy.ascontiguousarray"));
  Bytes v4 = npy("|u1", {6, 2, 3}, u8(36));
  v4[6] = 4;
  CHECK_THAT(error_of(with("x_train", v4)), Contains("x_train has .npy format version 4.0"));
  CHECK_THAT(error_of(with("y_test", npy_bytes("<i8", {3}, u8(20, 0)))),
             Contains("y_test holds 20 bytes of data where its header (shape (3,), dtype '<i8') "
                      "says 24: the file is truncated or corrupt"));
  const std::string header = "{'descr': '|u1', 'fortran_order': False}\n";
  Bytes no_shape{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(header.size()), 0};
  no_shape.insert(no_shape.end(), header.begin(), header.end());
  CHECK_THAT(error_of(with("x_train", no_shape)),
             Contains("x_train has a malformed .npy header (it lacks one of 'descr', "
                      "'fortran_order' and 'shape')") &&
                 Contains("numpy.savez"));
  CHECK_THAT(error_of(with("x_train", u8(40))),
             Contains("x_train is not a .npy array (no \\x93NUMPY magic)"));
}

TEST_CASE("npz errors: corrupt and unsupported zip entries", "[data][npz]") {
  Bytes stored = zip_bytes(small_npz_members());
  Bytes flipped = stored;
  flipped[find_sig(flipped, kLocal, 1) - 1] ^= 0xff;  // the last byte of x_train's data
  CHECK_THAT(error_of(flipped),
             Contains("bad.npz: x_train.npy: CRC-32 mismatch") && Contains("the file is corrupt"));

  Bytes deflated = zip_bytes(small_npz_members(), {.deflate = true});
  const std::size_t body = 30 + 11, next = find_sig(deflated, kLocal, 1);
  // Not the last byte: the bits after the end-of-block code pad it and may change freely.
  for (std::size_t at = body; at + 1 < next; ++at) {
    Bytes bad = deflated;
    bad[at] ^= 0x55;
    const std::string e = error_of(bad);
    INFO("byte " << at << ": " << e);
    CHECK_THAT(e, Contains("x_train.npy: ") &&
                      (Contains("corrupt deflate data") || Contains("CRC-32 mismatch")));
  }

  Bytes bzip2 = stored;
  put16(bzip2, find_sig(bzip2, kCentral) + 10, 12);
  CHECK_THAT(error_of(bzip2), Contains("x_train.npy: compressed with zip method 12") &&
                                  Contains("numpy.savez_compressed"));
  Bytes encrypted = stored;
  put16(encrypted, find_sig(encrypted, kCentral) + 8, 1);
  CHECK_THAT(error_of(encrypted), Contains("x_train.npy: encrypted"));
  Bytes outside = stored;
  put16(outside, find_sig(outside, kEnd) + 18, 0x7fff);  // the directory's offset, high half
  CHECK_THAT(error_of(outside), Contains("the central directory") && Contains("lies outside"));
  // Two members of one name (Python's zipfile appends one with a warning): refused, since
  // numpy.load reads the last and a first-match reader the first.
  auto twice = small_npz_members();
  twice.push_back(ZipMember{"x_train.npy", npy("<f4", {6, 2, 3}, Bytes(6 * 2 * 3 * 4, 0))});
  CHECK_THAT(error_of(twice), Contains("two members named x_train.npy (entries 1 and 5)") &&
                                  Contains("numpy.load would read the last one"));
  Bytes bomb = deflated;
  put16(bomb, find_sig(bomb, kCentral) + 26, 0x7fff);  // x_train's size, high half
  CHECK_THAT(error_of(bomb), Contains("more than deflate can produce"));
}

namespace {

// The line after "PATH: ", for the checks of data that reads but looks wrong.
std::string refusal(const std::vector<ZipMember>& members) {
  const std::string message = error_of(members);
  return message.substr(message.find("bad.npz: ") + 9);
}

// 0 rising to `largest` at the last of n.
Bytes u8_values(std::size_t n, int largest) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * largest / (n - 1));
  return b;
}

// small_npz_members with uint8 features 0 .. largest (x_test reaching it).
std::vector<ZipMember> dark(int largest) {
  auto members = with("x_train", npy("|u1", {6, 2, 3}, u8_values(36, largest / 2)));
  return with("x_test", npy("|u1", {3, 2, 3}, u8_values(18, largest)), members);
}

std::vector<ZipMember> labels(std::vector<std::int64_t> train, std::vector<std::int64_t> test) {
  auto members = with("y_train", npy<std::int64_t>("<i8", {6}, train));
  return with("y_test", npy<std::int64_t>("<i8", {3}, test), members);
}

}  // namespace

TEST_CASE("npz errors: uint8 features far below 255 name the division or pixel_max",
          "[data][npz]") {
  CHECK(refusal(dark(16)) ==
        "x_train and x_test are uint8 with maximum 16; stalesgd scales uint8 by 1/255, so every "
        "feature would be at most 16/255 = 0.063: save numpy.savez(PATH, x_train=(x_train / "
        "16).astype('float32'), x_test=(x_test / 16).astype('float32'), ...), or store "
        "pixel_max=16 to scale by 1/16 (pixel_max=255 keeps 1/255)");
  CHECK_THAT(refusal(dark(63)), StartsWith("x_train and x_test are uint8 with maximum 63;"));
  // Only the uint8 split is named.
  auto floats = with("x_train", npy("<f4", {6, 2, 3}, std::vector<float>(36, 0.5f)), dark(16));
  CHECK(refusal(floats) ==
        "x_test is uint8 with maximum 16; stalesgd scales uint8 by 1/255, so every feature "
        "would be at most 16/255 = 0.063: save numpy.savez(PATH, x_test=(x_test / "
        "16).astype('float32'), ...), or store pixel_max=16 to scale by 1/16 (pixel_max=255 "
        "keeps 1/255)");
}

TEST_CASE("npz errors: pixel_max that does not fit the features", "[data][npz]") {
  auto ten = with("pixel_max", npy<std::int64_t>("<i8", {}, {10}), dark(16));
  CHECK(refusal(ten) ==
        "x_test holds 11 at sample 2, element 0, over pixel_max = 10, so it would read as 1.1: "
        "store pixel_max=16, the largest value of x_train and x_test (or drop pixel_max to scale "
        "by 1/255)");
  auto floats = with("x_train", npy("<f4", {6, 2, 3}, std::vector<float>(36, 0.5f)),
                     with("x_test", npy("<f8", {3, 2, 3}, std::vector<double>(18, 0.5)), ten));
  CHECK(refusal(floats) ==
        "pixel_max = 10 is stored, but x_train is float32 and x_test float64, taken as they "
        "are; pixel_max scales uint8 features only: drop it");
  CHECK(refusal(with("pixel_max", npy<std::int64_t>("<i8", {}, {0}))) ==
        "pixel_max = 0 is out of range; it is the largest value uint8 features mean, 1 to 255");
  CHECK_THAT(refusal(with("pixel_max", npy<std::int32_t>("<i4", {}, {256}))),
             StartsWith("pixel_max = 256 is out of range"));
  CHECK(refusal(with("pixel_max", npy<double>("<f8", {}, {16.0}))) ==
        "pixel_max has shape () and dtype '<f8' (float64); it must be one integer: "
        "numpy.savez(..., pixel_max=16)");
}

TEST_CASE("npz errors: labels that start above 0 or skip a class name the renumbering",
          "[data][npz]") {
  CHECK(refusal(labels({1, 2, 3, 1, 2, 3}, {3, 2, 1})) ==
        "the smallest label is 1 (y_train and y_test hold 1 .. 3), so class 0 would be empty "
        "and stalesgd would train 4 classes: save numpy.savez(PATH, ..., y_train=y_train - 1, "
        "y_test=y_test - 1), or store num_classes=4 if class 0 is meant to be empty");
  CHECK(refusal(labels({3, 4, 3, 4, 3, 4}, {4, 3, 3})) ==
        "the smallest label is 3 (y_train and y_test hold 3 .. 4), so classes 0 .. 2 would be "
        "empty and stalesgd would train 5 classes: save numpy.savez(PATH, ..., "
        "y_train=y_train - 3, y_test=y_test - 3), or store num_classes=5 if classes 0 .. 2 are "
        "meant to be empty");
  // A class only y_test has is a class.
  const std::string skip =
      "no label is 2 (y_train and y_test hold 0 .. 3), so class 2 of 4 would be empty: renumber "
      "the labels, numpy.savez(PATH, ..., y_train=numpy.searchsorted(numpy.union1d(y_train, "
      "y_test), y_train), y_test=numpy.searchsorted(numpy.union1d(y_train, y_test), y_test)), "
      "or store num_classes=4 if it is meant to be empty";
  CHECK(refusal(labels({0, 1, 1, 0, 1, 0}, {3, 0, 1})) == skip);
  CHECK_THAT(refusal(labels({0, 9, 0, 9, 0, 9}, {9, 0, 9})),
             StartsWith("no label is 1, 2, 3, 4 or 4 others (y_train and y_test hold 0 .. 9), so "
                        "8 of the 10 classes would be empty") &&
                 Contains("or store num_classes=10 if they are meant to be empty"));
  // Above 0 and a gap: the renumbering, which fixes both.
  CHECK_THAT(refusal(labels({1, 3, 1, 3, 1, 3}, {3, 1, 1})),
             StartsWith("no label is 0 or 2 (y_train and y_test hold 1 .. 3), so 2 of the 4 "
                        "classes would be empty"));
  CHECK_THAT(refusal(labels({5, 5, 5, 5, 5, 5}, {5, 5, 5})),
             StartsWith("every label is 5, one class"));
}

TEST_CASE("npz errors: a 4-D x that looks channels-last names the transpose or channels_first",
          "[data][npz]") {
  const auto x = [](std::vector<std::uint64_t> train, std::vector<std::uint64_t> test) {
    std::size_t n = 1, m = 1;
    for (const auto d : train) n *= d;
    for (const auto d : test) m *= d;
    return with("x_train", npy("<f4", train, std::vector<float>(n, 0.5f)),
                with("x_test", npy("<f4", test, std::vector<float>(m, 0.5f))));
  };
  CHECK(refusal(x({6, 2, 2, 1}, {3, 2, 2, 1})) ==
        "x_train has shape (6, 2, 2, 1), which stalesgd reads channels first (N, C, H, W), as 2 "
        "channels of 2x1; a last axis of 1 looks like channels-last images (N, H, W, C): save "
        "numpy.savez(PATH, x_train=x_train.transpose(0, 3, 1, 2), x_test=x_test.transpose(0, 3, "
        "1, 2), ...), or store channels_first=1 if it is 2 channels of 2x1");
  CHECK_THAT(refusal(x({6, 5, 5, 3}, {3, 5, 5, 3})),
             Contains("as 5 channels of 5x3; a last axis of 3"));
  CHECK_THAT(refusal(x({6, 8, 2, 4}, {3, 8, 2, 4})), Contains("a last axis of 4"));
  CHECK(refusal(with("channels_first", npy<std::int64_t>("<i8", {}, {1}))) ==
        "channels_first = 1 is stored, but x_train has shape (6, 2, 3), not (N, C, H, W); it "
        "applies to a 4-D x only: drop it");
  CHECK(refusal(with("channels_first", npy<std::int64_t>("<i8", {}, {0}),
                     x({6, 2, 2, 1}, {3, 2, 2, 1}))) ==
        "channels_first = 0 is out of range; it must be 1, to keep a 4-D x as (N, C, H, W) "
        "(channels-last images are turned with x.transpose(0, 3, 1, 2))");
}

// Zip reading per PKWARE's APPNOTE (sections 4.3 and 4.5): the end-of-central-directory record
// (zip64 when a count, size or offset overflows 16 or 32 bits), the central directory's file
// headers and their zip64 extra field (id 0x0001), then each entry behind its local header.
#include "data/zip_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "util/crc32.hpp"
#include "util/printable.hpp"

namespace stalesgd {
namespace {

constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::uint32_t kEnd64Sig = 0x06064b50;
constexpr std::uint32_t kLocator64Sig = 0x07064b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::size_t kEndBytes = 22, kLocatorBytes = 20, kEnd64Bytes = 56;
constexpr std::size_t kCentralBytes = 46, kLocalBytes = 30;
// zlib's bound on deflate: at most 1032 output bytes per input byte. A directory claiming more
// is corrupt, and is refused before its buffer is allocated.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
constexpr const char* kCorruptFix = "copy the file again, or save it again with numpy.savez";

// The little-endian integer of `n` bytes at `at` (+ `off`); callers have checked the bounds.
std::uint64_t le(std::span<const std::uint8_t> b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[at + static_cast<std::size_t>(i)];
  return v;
}
std::uint64_t le(std::span<const std::uint8_t> b, std::size_t at, std::size_t off, int n) {
  return le(b, at + off, n);
}

struct Directory {
  std::uint64_t count = 0, size = 0, offset = 0;
};

Error not_a_zip(std::span<const std::uint8_t> bytes, const std::string& file) {
  const auto starts = [&](std::string_view magic) {
    return bytes.size() >= magic.size() &&
           std::equal(magic.begin(), magic.end(), bytes.begin(),
                      [](char c, std::uint8_t u) { return static_cast<std::uint8_t>(c) == u; });
  };
  if (starts("\x93NUMPY")) {
    return Error{
        fmt::format("{}: a single .npy array, not an .npz archive; save the arrays together with "
                    "numpy.savez(PATH, x_train=..., y_train=..., x_test=..., y_test=...)",
                    file)};
  }
  if (starts("PK\x03\x04")) {
    return Error{fmt::format(
        "{}: truncated: a zip archive's start ({} bytes) without its end-of-central-directory "
        "record; {}",
        file, bytes.size(), kCorruptFix)};
  }
  return Error{fmt::format(
      "{}: not an .npz file ({} bytes, not a zip archive); write it with numpy.savez or "
      "numpy.savez_compressed",
      file, bytes.size())};
}

// The last end-of-central-directory record (a comment may follow it), and the zip64 one when
// its locator sits just before it.
Result<Directory> find_directory(std::span<const std::uint8_t> b, const std::string& file) {
  if (b.size() < kEndBytes) return not_a_zip(b, file);
  const std::size_t lowest =
      b.size() - kEndBytes - std::min<std::size_t>(b.size() - kEndBytes, 0xffff);
  for (std::size_t at = b.size() - kEndBytes + 1; at-- > lowest;) {
    if (le(b, at, 4) != kEndSig || at + kEndBytes + le(b, at, 20, 2) > b.size()) continue;
    Directory d{le(b, at, 10, 2), le(b, at, 12, 4), le(b, at, 16, 4)};
    if (at >= kLocatorBytes && le(b, at - kLocatorBytes, 4) == kLocator64Sig) {
      const std::uint64_t end64 = le(b, at - kLocatorBytes + 8, 8);
      if (b.size() < kEnd64Bytes || end64 > b.size() - kEnd64Bytes ||
          le(b, end64, 4) != kEnd64Sig) {
        return Error{
            fmt::format("{}: corrupt zip64 end-of-central-directory record (offset {}); {}", file,
                        end64, kCorruptFix)};
      }
      d = Directory{le(b, end64 + 32, 8), le(b, end64 + 40, 8), le(b, end64 + 48, 8)};
    } else if (d.count == 0xffff || d.size == 0xffffffff || d.offset == 0xffffffff) {
      return Error{fmt::format("{}: its zip64 end-of-central-directory record is missing; {}", file,
                               kCorruptFix)};
    }
    if (d.offset > b.size() || d.size > b.size() - d.offset) {
      return Error{fmt::format(
          "{}: truncated or corrupt: the central directory ({} bytes at offset {}) lies outside "
          "the file's {} bytes; {}",
          file, d.size, d.offset, b.size(), kCorruptFix)};
    }
    return d;
  }
  return not_a_zip(b, file);
}

// The zip64 extra field holds, in this order, each of the header's values that is 0xffffffff.
Status apply_zip64(std::span<const std::uint8_t> extra, ZipEntry& e, const std::string& file) {
  std::size_t at = 0;
  while (at + 4 <= extra.size()) {
    const std::uint64_t id = le(extra, at, 2), n = le(extra, at + 2, 2);
    if (at + 4 + n > extra.size()) break;
    if (id == 0x0001) {
      std::size_t p = at + 4;
      for (std::uint64_t* field : {&e.size, &e.compressed_size, &e.local_offset}) {
        if (*field != 0xffffffff) continue;
        if (p + 8 > at + 4 + n) break;
        *field = le(extra, p, 8);
        p += 8;
      }
    }
    at += 4 + n;
  }
  if (e.size == 0xffffffff || e.compressed_size == 0xffffffff || e.local_offset == 0xffffffff) {
    return Error{fmt::format("{}: {}: its zip64 sizes are missing from the central directory; {}",
                             file, printable(e.name), kCorruptFix)};
  }
  return {};
}

// Raw deflate (no zlib or gzip wrapper) into `want` bytes of the `recorded` the entry holds;
// `whole` (want == recorded): the stream must end there.
Result<std::vector<std::uint8_t>> inflate_entry(std::span<const std::uint8_t> in,
                                                std::uint64_t want, std::uint64_t recorded,
                                                const std::string& what) {
  const bool whole = want == recorded;
  // One spare byte: a stream that would pass `want` shows it by filling the spare.
  const std::size_t cap = static_cast<std::size_t>(want) + (whole ? 1 : 0);
  // Grown as the stream proves its size: a corrupt directory cannot make it allocate up front.
  std::vector<std::uint8_t> out(std::min<std::size_t>(cap, 1 << 24));
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return Error{what + ": zlib could not start inflating"};
  std::size_t in_pos = 0, out_pos = 0;
  std::string problem;
  for (;;) {
    if (out_pos == cap) {
      if (whole) {
        problem = fmt::format("it inflates to more than the {} bytes its directory records", want);
      }
      break;
    }
    const std::size_t in_n = std::min<std::size_t>(in.size() - in_pos, 1u << 30);
    if (out_pos == out.size()) out.resize(std::min(cap, 2 * out.size()));
    const std::size_t out_n = std::min<std::size_t>(out.size() - out_pos, 1u << 30);
    zs.next_in = const_cast<Bytef*>(in.data() + in_pos);  // zlib's API is not const; it only reads
    zs.avail_in = static_cast<uInt>(in_n);
    zs.next_out = out.data() + out_pos;
    zs.avail_out = static_cast<uInt>(out_n);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_n - zs.avail_in;
    out_pos += out_n - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (out_pos != want) {
        problem =
            fmt::format("it inflates to {} bytes, its directory records {}", out_pos, recorded);
      }
      break;
    }
    // The input is used up with room left for output (or no progress was possible): the stream
    // was cut short.
    const bool stuck = rc == Z_BUF_ERROR && in_n == zs.avail_in && out_n == zs.avail_out;
    if ((rc == Z_OK || rc == Z_BUF_ERROR) && ((in_pos == in.size() && zs.avail_out > 0) || stuck)) {
      problem = fmt::format("the stream ends after {} of {} bytes", out_pos, recorded);
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      problem = printable(zs.msg != nullptr ? zs.msg : "zlib error");
      break;
    }
  }
  inflateEnd(&zs);
  if (!problem.empty()) {
    return Error{fmt::format("{}: corrupt deflate data ({}); {}", what, problem, kCorruptFix)};
  }
  out.resize(static_cast<std::size_t>(want));
  return out;
}

}  // namespace

Result<std::vector<ZipEntry>> read_zip_directory(std::span<const std::uint8_t> b,
                                                 const std::string& file) {
  auto dir = find_directory(b, file);
  if (!dir) return dir.error();
  std::vector<ZipEntry> entries;
  entries.reserve(std::min<std::uint64_t>(dir->count, dir->size / kCentralBytes));
  std::size_t at = dir->offset;
  const std::size_t end = dir->offset + dir->size;
  // Each member's name and its entry number: a zip may hold one name twice, where readers
  // disagree (numpy.load returns the last, a first-match reader the first), so it is refused.
  std::unordered_map<std::string, std::uint64_t> seen;
  for (std::uint64_t i = 0; i < dir->count; ++i) {
    if (at + kCentralBytes > end || le(b, at, 4) != kCentralSig) {
      return Error{fmt::format("{}: corrupt central directory (entry {} of {} at offset {}); {}",
                               file, i + 1, dir->count, at, kCorruptFix)};
    }
    const std::size_t name_n = le(b, at, 28, 2), extra_n = le(b, at, 30, 2);
    const std::size_t comment_n = le(b, at, 32, 2);
    if (at + kCentralBytes + name_n + extra_n + comment_n > end) {
      return Error{fmt::format("{}: corrupt central directory (entry {} runs past its end); {}",
                               file, i + 1, kCorruptFix)};
    }
    ZipEntry e;
    e.flags = static_cast<std::uint16_t>(le(b, at, 8, 2));
    e.method = static_cast<std::uint16_t>(le(b, at, 10, 2));
    e.crc = static_cast<std::uint32_t>(le(b, at, 16, 4));
    e.compressed_size = le(b, at, 20, 4);
    e.size = le(b, at, 24, 4);
    e.local_offset = le(b, at, 42, 4);
    const auto* name = reinterpret_cast<const char*>(b.data() + at + kCentralBytes);
    e.name.assign(name, name_n);
    if (auto s = apply_zip64(b.subspan(at + kCentralBytes + name_n, extra_n), e, file); !s) {
      return s.error();
    }
    if (const auto [it, fresh] = seen.emplace(e.name, i + 1); !fresh) {
      return Error{fmt::format(
          "{}: two members named {} (entries {} and {}): numpy.load would read the last one; "
          "save the arrays again with numpy.savez, once each",
          file, printable(e.name), it->second, i + 1)};
    }
    entries.push_back(std::move(e));
    at += kCentralBytes + name_n + extra_n + comment_n;
  }
  return entries;
}

Result<ZipData> read_zip_entry(std::span<const std::uint8_t> b, const ZipEntry& e,
                               const std::string& file, std::uint64_t limit) {
  const std::string what = fmt::format("{}: {}", file, printable(e.name));
  if (e.flags & 1) {
    return Error{what +
                 ": encrypted; numpy does not encrypt, save the arrays again with "
                 "numpy.savez"};
  }
  if (e.method != 0 && e.method != 8) {
    return Error{fmt::format(
        "{}: compressed with zip method {}; numpy writes stored (numpy.savez) or deflated "
        "(numpy.savez_compressed) entries: save the arrays again with one of them",
        what, e.method)};
  }
  if (e.local_offset > b.size() || b.size() - e.local_offset < kLocalBytes ||
      le(b, e.local_offset, 4) != kLocalSig) {
    return Error{fmt::format("{}: corrupt or missing local header (offset {}); {}", what,
                             e.local_offset, kCorruptFix)};
  }
  const std::uint64_t start =
      e.local_offset + kLocalBytes + le(b, e.local_offset + 26, 2) + le(b, e.local_offset + 28, 2);
  if (start > b.size() || e.compressed_size > b.size() - start) {
    return Error{fmt::format(
        "{}: truncated: its {} bytes at offset {} run past the end of the file ({} bytes); {}",
        what, e.compressed_size, start, b.size(), kCorruptFix)};
  }
  const auto raw = b.subspan(start, e.compressed_size);
  const bool whole = limit >= e.size;
  ZipData data;
  if (e.method == 0) {
    if (e.compressed_size != e.size) {
      return Error{fmt::format("{}: a stored entry of {} bytes that records {} uncompressed; {}",
                               what, e.compressed_size, e.size, kCorruptFix)};
    }
    data = ZipData(whole ? raw : raw.first(limit));
  } else {
    if (e.size > e.compressed_size * kMaxDeflateRatio + 64) {
      return Error{fmt::format(
          "{}: its directory records {} bytes from {} compressed, more than deflate can "
          "produce; {}",
          what, e.size, e.compressed_size, kCorruptFix)};
    }
    auto inflated = inflate_entry(raw, whole ? e.size : limit, e.size, what);
    if (!inflated) return inflated.error();
    data = ZipData(std::move(inflated).value());
  }
  if (whole) {
    if (const std::uint32_t crc = crc32_of(data.bytes()); crc != e.crc) {
      return Error{
          fmt::format("{}: CRC-32 mismatch (recorded {:08x}, data {:08x}): the file is corrupt; {}",
                      what, e.crc, crc, kCorruptFix)};
    }
  }
  return data;
}

}  // namespace stalesgd

// The .npy and zip writers of npz_files.hpp (zip layout per PKWARE's APPNOTE 4.3).
#include "support/npz_files.hpp"

#include <zlib.h>

#include <stdexcept>

#include "support/fixtures.hpp"

namespace stalesgd::test {
namespace {

void put(Bytes& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

Bytes raw_deflate(const Bytes& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  Bytes out(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

Bytes npy_bytes(const std::string& descr, const std::vector<std::uint64_t>& shape,
                const Bytes& data, int major, bool fortran) {
  std::string dims;
  for (const auto d : shape) dims += std::to_string(d) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  // A structured dtype's descr is a list, written as it is.
  const std::string d = descr.starts_with('[') ? descr : "'" + descr + "'";
  std::string header = "{'descr': " + d + ", 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': (" + dims + "), }";
  // numpy pads with spaces and a newline so that the data starts at a multiple of 64.
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  Bytes out{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), 0};
  put(out, header.size(), major == 1 ? 2 : 4);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes zip_bytes(const std::vector<ZipMember>& members, const ZipOptions& options) {
  Bytes out, central;
  const std::uint16_t method = options.deflate ? 8 : 0;
  for (const auto& m : members) {
    const Bytes body = options.deflate ? raw_deflate(m.bytes) : m.bytes;
    const std::uint32_t crc =
        static_cast<std::uint32_t>(crc32(0, m.bytes.data(), static_cast<uInt>(m.bytes.size())));
    const std::uint64_t offset = out.size();
    const auto z = [&](std::uint64_t v) { return options.zip64 ? 0xffffffffu : v; };
    // Local header; numpy forces zip64 here: sizes 0xffffffff and an extra field holding both.
    put(out, 0x04034b50, 4);
    put(out, options.zip64 ? 45 : 20, 2);
    put(out, 0, 2);
    put(out, method, 2);
    put(out, 0, 4);  // time, date
    put(out, crc, 4);
    put(out, z(body.size()), 4);
    put(out, z(m.bytes.size()), 4);
    put(out, m.name.size(), 2);
    put(out, options.zip64 ? 20 : 0, 2);
    out.insert(out.end(), m.name.begin(), m.name.end());
    if (options.zip64) {
      put(out, 1, 2);
      put(out, 16, 2);
      put(out, m.bytes.size(), 8);
      put(out, body.size(), 8);
    }
    out.insert(out.end(), body.begin(), body.end());
    // Central directory header: the zip64 extra holds size, compressed size, offset, in order.
    put(central, 0x02014b50, 4);
    put(central, options.zip64 ? 45 : 20, 2);
    put(central, options.zip64 ? 45 : 20, 2);
    put(central, 0, 2);
    put(central, method, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, z(body.size()), 4);
    put(central, z(m.bytes.size()), 4);
    put(central, m.name.size(), 2);
    put(central, options.zip64 ? 28 : 0, 2);
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, z(offset), 4);
    central.insert(central.end(), m.name.begin(), m.name.end());
    if (options.zip64) {
      put(central, 1, 2);
      put(central, 24, 2);
      put(central, m.bytes.size(), 8);
      put(central, body.size(), 8);
      put(central, offset, 8);
    }
  }
  const std::uint64_t cd_offset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  if (options.zip64) {
    const std::uint64_t end64 = out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);  // the record's size after this field
    put(out, 45, 2);
    put(out, 45, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, members.size(), 8);
    put(out, members.size(), 8);
    put(out, central.size(), 8);
    put(out, cd_offset, 8);
    put(out, 0x07064b50, 4);  // the locator
    put(out, 0, 4);
    put(out, end64, 8);
    put(out, 1, 4);
  }
  put(out, 0x06054b50, 4);
  put(out, 0, 4);  // disks
  put(out, options.zip64 ? 0xffff : members.size(), 2);
  put(out, options.zip64 ? 0xffff : members.size(), 2);
  put(out, options.zip64 ? 0xffffffff : central.size(), 4);
  put(out, options.zip64 ? 0xffffffff : cd_offset, 4);
  put(out, 0, 2);  // comment
  return out;
}

std::vector<ZipMember> small_npz_members() {
  std::vector<std::uint8_t> x_train(6 * 6), x_test(3 * 6);
  for (std::size_t i = 0; i < x_train.size(); ++i)
    x_train[i] = static_cast<std::uint8_t>(i / 6 * 10 + i % 6);
  for (std::size_t i = 0; i < x_test.size(); ++i)
    x_test[i] = static_cast<std::uint8_t>(100 + i / 6 * 10 + i % 6);
  return {{"x_train.npy", npy("|u1", {6, 2, 3}, x_train)},
          {"y_train.npy", npy<std::int64_t>("<i8", {6}, {0, 1, 2, 0, 1, 2})},
          {"x_test.npy", npy("|u1", {3, 2, 3}, x_test)},
          {"y_test.npy", npy<std::int64_t>("<i8", {3}, {2, 1, 0})}};
}

void set_member(std::vector<ZipMember>& members, const std::string& name, Bytes bytes) {
  for (auto& m : members) {
    if (m.name == name) {
      m.bytes = std::move(bytes);
      return;
    }
  }
  members.push_back({name, std::move(bytes)});
}

void write_npz(const std::filesystem::path& path, const std::vector<ZipMember>& members,
               const ZipOptions& options) {
  write_bytes(path, zip_bytes(members, options));
}

}  // namespace stalesgd::test

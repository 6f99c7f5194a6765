// Incremental, whole-row reading of a journal CSV that another process is appending to.
#include "serve/csv_journal.hpp"

#include "util/regular_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace stalesgd::serve {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kChunk = 1 << 20;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Splits `line` into `row` as numbers without allocating (journal rows hold no quotes but
// results.csv labels do; a quoted field is not a number anyway).
void parse_numbers(std::string_view line, std::size_t width, std::vector<double>& row) {
  row.assign(width, kNaN);
  std::size_t i = 0;
  while (i < width) {
    const auto comma = line.find(',');
    row[i++] = csv_number(line.substr(0, comma));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
}

}  // namespace

std::vector<std::string> split_csv_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

double csv_number(std::string_view field) {
  while (!field.empty() && (field.front() == ' ')) field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\r')) field.remove_suffix(1);
  if (field.empty()) return kNaN;
  double v = 0.0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(v)) return kNaN;
  return v;
}

CsvJournal::CsvJournal(fs::path path) : path_(std::move(path)) {}

int CsvJournal::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

void CsvJournal::reset() {
  columns_.clear();
  scanned_ = rows_ = 0;
  index_.clear();
  ++generation_;
}

void CsvJournal::refresh(const RowSink& sink) {
  const RegularFile file = RegularFile::open(path_);
  refused_ = file.why();
  if (!file.is_open()) {
    if (scanned_ > 0) reset();
    return;
  }
  const std::uint64_t size = file.size(), inode = file.inode();
  if (scanned_ > 0 && (size < scanned_ || inode != inode_)) reset();
  inode_ = inode;
  if (size == scanned_) return;
  std::string buf;
  std::uint64_t buf_at = scanned_;  // file offset of buf[0]
  std::vector<char> chunk(kChunk);
  for (;;) {
    const auto got = file.read_at(buf_at + buf.size(), chunk.data(), chunk.size());
    if (got <= 0) break;
    buf.append(chunk.data(), static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string_view line(buf.data() + start, nl - start);
      const std::uint64_t at = buf_at + start;
      if (columns_.empty() && at == 0) {
        columns_ = split_csv_line(line);
        continue;
      }
      if (rows_ % kIndexStride == 0) index_.push_back(at);
      ++rows_;
      if (sink) {
        parse_numbers(line, columns_.size(), row_);
        sink(row_);
      }
    }
    // Keep the partial line (if any) for the next chunk or the next refresh.
    scanned_ = buf_at + start;
    buf.erase(0, start);
    buf_at = scanned_;
  }
}

std::vector<std::vector<double>> CsvJournal::read(std::uint64_t first, std::uint64_t max_rows,
                                                  std::span<const std::string> wanted) const {
  std::vector<std::vector<double>> out(wanted.size());
  if (first >= rows_ || max_rows == 0) return out;
  std::vector<int> at;
  for (const auto& name : wanted) at.push_back(column(name));
  const std::uint64_t slot = first / kIndexStride;
  std::uint64_t row = slot * kIndexStride;
  const RegularFile file = RegularFile::open(path_);
  if (!file.is_open() || slot >= index_.size()) return out;
  const std::uint64_t end = std::min(rows_, first + max_rows);
  // Only the bytes refresh() has seen: whole rows, ending at scanned_ on a '\n'.
  std::uint64_t offset = index_[slot];
  std::string buf;
  std::vector<char> chunk(kChunk);
  std::vector<double> fields;
  while (row < end && offset < scanned_) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, scanned_ - offset));
    const auto got = file.read_at(offset, chunk.data(), want);
    if (got <= 0) break;  // the file shrank under us
    offset += static_cast<std::uint64_t>(got);
    buf.append(chunk.data(), static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t nl; row < end && (nl = buf.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      if (row++ < first) continue;
      parse_numbers(std::string_view(buf.data() + start, nl - start), columns_.size(), fields);
      for (std::size_t c = 0; c < at.size(); ++c) {
        if (at[c] >= 0) out[c].push_back(fields[static_cast<std::size_t>(at[c])]);
      }
    }
    buf.erase(0, start);
  }
  return out;
}

}  // namespace stalesgd::serve

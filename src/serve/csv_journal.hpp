// CsvJournal: one of a run's journal files (updates.csv, gradients.csv, evals.csv) read while
// the run appends to it, for `stalesgd serve` (docs/serve.md). Only whole rows count: the bytes
// after the last '\n' (a row being written, or one a crash cut) are left for the next refresh,
// so a half row is never read. Each refresh reads only the bytes appended since the last one;
// a sparse index of byte offsets (one per kIndexStride rows) lets a client's "rows since N" be
// read again from the file without keeping the rows in memory.
//
// Thread safety: not thread-safe; the caller (ServeState) serialises every call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stalesgd::serve {

// The fields of one CSV line; a quoted field ("a, b" or "say ""hi""") is unquoted.
std::vector<std::string> split_csv_line(std::string_view line);

// A field as a number; NaN when it is empty or not a number (JSON writes NaN as null).
double csv_number(std::string_view field);

class CsvJournal {
 public:
  static constexpr std::uint64_t kIndexStride = 1024;

  // A whole data row: its fields as numbers, in the header's order (missing fields are NaN).
  using RowSink = std::function<void(std::span<const double> row)>;

  explicit CsvJournal(std::filesystem::path path);

  // Reads the rows appended since the last refresh and hands each to `sink` (may be empty). A
  // file that shrank or was replaced (train --resume cuts it back; race --force writes it anew)
  // is read again from its start, and generation() goes up so that callers drop what they
  // derived from the old rows. A missing file has no rows, and so has one that is not a regular
  // file (a FIFO: refused() says so; it is never opened in a way that could block serve).
  // Never throws on the file's content.
  void refresh(const RowSink& sink = {});

  // Data rows read so far (the header not counted).
  std::uint64_t rows() const { return rows_; }
  // Empty, or the one line saying why the file is there but not read (regular_file.hpp).
  const std::string& refused() const { return refused_; }
  // Bumped each time the file was found shrunk or replaced.
  std::uint64_t generation() const { return generation_; }
  const std::vector<std::string>& columns() const { return columns_; }
  // The index of a column in columns(), or -1.
  int column(std::string_view name) const;

  // Rows [first, first + max_rows) of those refresh() has seen, re-read from the file, as one
  // vector per wanted column (a column the file lacks gives an empty vector). Stops early if
  // the file changed since the last refresh.
  std::vector<std::vector<double>> read(std::uint64_t first, std::uint64_t max_rows,
                                        std::span<const std::string> wanted) const;

 private:
  void reset();

  std::filesystem::path path_;
  std::string refused_;
  std::vector<std::string> columns_;
  std::uint64_t scanned_ = 0;  // bytes consumed: the header and whole rows
  std::uint64_t rows_ = 0;
  std::uint64_t generation_ = 0;
  std::uint64_t inode_ = 0;
  std::vector<std::uint64_t> index_;  // byte offset of row i * kIndexStride
  std::vector<double> row_;           // scratch for one parsed row
};

}  // namespace stalesgd::serve

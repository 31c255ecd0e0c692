#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance {

// CsvTable: a whole CSV file (RFC 4180: comma separated, optional double quotes, "" escapes a
// quote, CRLF or LF) read into memory, with typed accessors whose errors name the file, line,
// column and field, e.g. "pods.csv:12:19: field 'gpu_milli': expected an integer, got 'abc'".
// Thread-safety: immutable after Parse; safe to read from many threads.
class CsvTable {
 public:
  // One data row. Fields are views into the table's buffer.
  struct Row {
    std::uint32_t line = 0;             // 1-based line number in the file
    std::vector<std::string_view> fields;
    std::vector<std::uint32_t> columns;  // 1-based byte column where each field starts
  };

  // Reads and parses `path`. Errors: kNotFound (cannot open), kInvalidArgument (empty file,
  // no header, a row with the wrong number of fields, an unterminated quote).
  static Result<CsvTable> ReadFile(const std::string& path);
  // Parses `text`; `name` is used in error messages.
  static Result<CsvTable> Parse(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<Row>& rows() const { return rows_; }

  // Returns the index of `column`, or kInvalidArgument naming the file and the missing column.
  Result<std::size_t> ColumnIndex(std::string_view column) const;
  // Returns the index of `column` or -1 when absent (optional columns).
  std::ptrdiff_t FindColumn(std::string_view column) const;

  // Typed field accessors. `col` is a ColumnIndex() result.
  Result<std::int64_t> Int(const Row& row, std::size_t col) const;
  Result<double> Double(const Row& row, std::size_t col) const;
  std::string_view Str(const Row& row, std::size_t col) const { return row.fields[col]; }

  // Returns kInvalidArgument "file:line:column: field 'name': what".
  Status FieldError(const Row& row, std::size_t col, std::string_view what) const;

 private:
  std::string name_;
  // Unescaped field storage; rows_ views point into it. Held by pointer so that moving the table
  // does not move the characters (a short std::string keeps them inline).
  std::unique_ptr<std::string> buffer_ = std::make_unique<std::string>();
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

}  // namespace seedance

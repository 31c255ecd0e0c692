#include "seedance/core/csv.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace seedance {
namespace {

struct RawField {
  std::size_t begin = 0;  // offset into the unescaped buffer
  std::size_t size = 0;
  std::uint32_t column = 0;
};

}  // namespace

Result<CsvTable> CsvTable::ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return NotFoundError(path + ": read error");
  return Parse(path, ss.str());
}

Result<CsvTable> CsvTable::Parse(std::string name, std::string text) {
  CsvTable t;
  t.name_ = std::move(name);
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    text.erase(0, 3);  // UTF-8 byte-order mark
  }
  // Pass 1: split into records of raw fields, unescaping into one buffer.
  std::string& buf = *t.buffer_;
  buf.reserve(text.size());
  struct Record {
    std::uint32_t line;
    std::vector<RawField> fields;
  };
  std::vector<Record> records;
  std::uint32_t line = 1;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    Record rec{line, {}};
    std::size_t line_start = i;
    bool end_of_record = false;
    bool blank = true;
    while (!end_of_record) {
      RawField f;
      f.column = static_cast<std::uint32_t>(i - line_start + 1);
      f.begin = buf.size();
      if (i < n && text[i] == '"') {
        blank = false;
        ++i;
        bool closed = false;
        while (i < n) {
          char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              buf.push_back('"');
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (c == '\n') ++line;
          buf.push_back(c);
          ++i;
        }
        if (!closed) {
          return InvalidArgumentError(t.name_ + ":" + std::to_string(rec.line) + ":" +
                                      std::to_string(f.column) + ": unterminated quoted field");
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          return InvalidArgumentError(t.name_ + ":" + std::to_string(line) + ":" +
                                      std::to_string(i - line_start + 1) +
                                      ": unexpected character after closing quote");
        }
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          buf.push_back(text[i]);
          ++i;
          blank = false;
        }
      }
      f.size = buf.size() - f.begin;
      rec.fields.push_back(f);
      if (i >= n) {
        end_of_record = true;
      } else if (text[i] == ',') {
        blank = false;
        ++i;
      } else {
        if (text[i] == '\r') ++i;
        if (i < n && text[i] == '\n') ++i;
        ++line;
        end_of_record = true;
      }
    }
    if (!blank) records.push_back(std::move(rec));
  }
  if (records.empty()) return InvalidArgumentError(t.name_ + ": empty file (no header)");
  // Pass 2: header and rows as views (the buffer no longer reallocates).
  const Record& head = records.front();
  for (const RawField& f : head.fields) {
    std::string h = buf.substr(f.begin, f.size);
    while (!h.empty() && (h.back() == ' ')) h.pop_back();
    t.header_.push_back(std::move(h));
  }
  t.rows_.reserve(records.size() - 1);
  for (std::size_t r = 1; r < records.size(); ++r) {
    const Record& rec = records[r];
    if (rec.fields.size() != head.fields.size()) {
      return InvalidArgumentError(t.name_ + ":" + std::to_string(rec.line) + ": expected " +
                                  std::to_string(head.fields.size()) + " fields, got " +
                                  std::to_string(rec.fields.size()));
    }
    Row row;
    row.line = rec.line;
    row.fields.reserve(rec.fields.size());
    row.columns.reserve(rec.fields.size());
    for (const RawField& f : rec.fields) {
      row.fields.emplace_back(buf.data() + f.begin, f.size);
      row.columns.push_back(f.column);
    }
    t.rows_.push_back(std::move(row));
  }
  return t;
}

std::ptrdiff_t CsvTable::FindColumn(std::string_view column) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == column) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

Result<std::size_t> CsvTable::ColumnIndex(std::string_view column) const {
  std::ptrdiff_t i = FindColumn(column);
  if (i < 0) {
    return InvalidArgumentError(name_ + ":1: missing column '" + std::string(column) + "'");
  }
  return static_cast<std::size_t>(i);
}

Status CsvTable::FieldError(const Row& row, std::size_t col, std::string_view what) const {
  return InvalidArgumentError(name_ + ":" + std::to_string(row.line) + ":" +
                              std::to_string(row.columns[col]) + ": field '" + header_[col] +
                              "': " + std::string(what));
}

Result<std::int64_t> CsvTable::Int(const Row& row, std::size_t col) const {
  std::string_view s = row.fields[col];
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return FieldError(row, col, "expected an integer, got an empty field");
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return FieldError(row, col, "integer out of range: '" + std::string(s) + "'");
  }
  if (ec != std::errc() || p != s.data() + s.size()) {
    return FieldError(row, col, "expected an integer, got '" + std::string(s) + "'");
  }
  return v;
}

Result<double> CsvTable::Double(const Row& row, std::size_t col) const {
  std::string_view s = row.fields[col];
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return FieldError(row, col, "expected a number, got an empty field");
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) {
    return FieldError(row, col, "expected a finite number, got '" + std::string(s) + "'");
  }
  return v;
}

}  // namespace seedance

#include "seedance/core/csv.h"

#include <gtest/gtest.h>

namespace seedance {
namespace {

TEST(CsvTest, ParsesHeaderRowsAndQuotes) {
  auto t = CsvTable::Parse("x.csv", "a,b,c\r\n1,\"x,\"\"y\"\"\",3\n\n4,,6\n");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  ASSERT_EQ(t->header().size(), 3u);
  ASSERT_EQ(t->rows().size(), 2u);
  EXPECT_EQ(t->Str(t->rows()[0], 1), "x,\"y\"");
  EXPECT_EQ(t->rows()[1].line, 4u);
  EXPECT_EQ(*t->Int(t->rows()[1], 2), 6);
}

TEST(CsvTest, ErrorsNameFileLineColumnAndField) {
  auto t = CsvTable::Parse("pods.csv", "name,gpu_milli\np0,12\np1,abc\n");
  ASSERT_TRUE(t.has_value());
  auto col = t->ColumnIndex("gpu_milli");
  ASSERT_TRUE(col.has_value());
  auto v = t->Int(t->rows()[1], *col);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().message(), "pods.csv:3:4: field 'gpu_milli': expected an integer, got 'abc'");
  auto missing = t->ColumnIndex("num_gpu");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message(), "pods.csv:1: missing column 'num_gpu'");
}

TEST(CsvTest, RejectsEmptyRaggedAndUnterminated) {
  EXPECT_FALSE(CsvTable::Parse("e.csv", "").has_value());
  EXPECT_FALSE(CsvTable::Parse("e.csv", "\n\n").has_value());
  auto ragged = CsvTable::Parse("r.csv", "a,b\n1\n");
  ASSERT_FALSE(ragged.has_value());
  EXPECT_EQ(ragged.error().message(), "r.csv:2: expected 2 fields, got 1");
  EXPECT_FALSE(CsvTable::Parse("q.csv", "a\n\"abc\n").has_value());
  EXPECT_FALSE(CsvTable::ReadFile("/nonexistent/file.csv").has_value());
}

TEST(CsvTest, IntegerAndDoubleEdgeCases) {
  auto t = CsvTable::Parse("n.csv", "v\n-5\n99999999999999999999\n1.5\nnan\n 7 \n");
  ASSERT_TRUE(t.has_value());
  const auto& r = t->rows();
  EXPECT_EQ(*t->Int(r[0], 0), -5);
  EXPECT_FALSE(t->Int(r[1], 0).has_value());
  EXPECT_FALSE(t->Int(r[2], 0).has_value());
  EXPECT_DOUBLE_EQ(*t->Double(r[2], 0), 1.5);
  EXPECT_FALSE(t->Double(r[3], 0).has_value());
  EXPECT_EQ(*t->Int(r[4], 0), 7);
}

// Deterministic fuzz: random byte strings never crash the parser and either parse or fail with
// an error that names the file.
TEST(CsvTest, FuzzNeverCrashes) {
  std::uint64_t s = 12345;
  const char alphabet[] = "ab,\"\n\r 01-.";
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    std::size_t len = (s >> 33) % 40;
    for (std::size_t i = 0; i < len; ++i) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      text.push_back(alphabet[(s >> 33) % (sizeof(alphabet) - 1)]);
    }
    auto t = CsvTable::Parse("fuzz.csv", text);
    if (!t.has_value()) {
      EXPECT_EQ(t.error().message().rfind("fuzz.csv", 0), 0u) << t.error().message();
      continue;
    }
    for (const auto& row : t->rows()) {
      for (std::size_t c = 0; c < row.fields.size(); ++c) {
        (void)t->Int(row, c);
        (void)t->Double(row, c);
      }
    }
  }
}

}  // namespace
}  // namespace seedance

namespace seedance {
namespace {

// Regression: fields of a short file must survive moving the table (they once pointed into a
// small-string buffer that moved with it; ASan caught it through the fuzz test).
TEST(CsvTest, FieldsSurviveAMove) {
  Result<CsvTable> r = CsvTable::Parse("s.csv", "a\nx\n");
  ASSERT_TRUE(r.has_value());
  CsvTable moved = std::move(r).value();
  CsvTable again = std::move(moved);
  EXPECT_EQ(again.Str(again.rows()[0], 0), "x");
}

}  // namespace
}  // namespace seedance

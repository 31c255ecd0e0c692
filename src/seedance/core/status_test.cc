#include "seedance/core/status.h"

#include <gtest/gtest.h>

namespace seedance {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  SEEDANCE_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

Status CheckEven(int x) {
  SEEDANCE_RETURN_IF_ERROR(Half(x).has_value() ? Status::Ok() : InvalidArgumentError("odd"));
  return Status::Ok();
}

TEST(StatusTest, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFoundError("x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: x");
}

TEST(StatusTest, ResultPropagates) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_FALSE(Quarter(6).has_value());
  EXPECT_EQ(Quarter(6).error().message(), "odd");
  EXPECT_TRUE(CheckEven(2).ok());
  EXPECT_EQ(CheckEven(3).code(), StatusCode::kInvalidArgument);
}

TEST(StatusDeathTest, ValueOfErrorAborts) {
  Result<int> r = InternalError("boom");
  EXPECT_DEATH((void)r.value(), "boom");
}

}  // namespace
}  // namespace seedance

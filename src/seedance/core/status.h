#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "seedance/core/check.h"

namespace seedance {

// Canonical error codes, an abseil subset.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kResourceExhausted,
  kOutOfRange,
  kUnavailable,
  kDeadlineExceeded,
  kUnimplemented,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

// Status: a code plus a human-readable message. Library code returns Status instead of throwing.
// Thread-safety: a value type; copies are independent.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Returns "CODE: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFoundError(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status OutOfRangeError(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status UnavailableError(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}

// Result<T>: a T or a non-OK Status. Method names follow std::expected so that a later move to
// C++23 is mechanical.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    SEEDANCE_CHECK(!std::get<Status>(v_).ok()) << "Result built from an OK status";
  }

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    SEEDANCE_CHECK(has_value()) << error().ToString();
    return std::get<T>(v_);
  }
  const T& value() const& {
    SEEDANCE_CHECK(has_value()) << error().ToString();
    return std::get<T>(v_);
  }
  T&& value() && {
    SEEDANCE_CHECK(has_value()) << error().ToString();
    return std::get<T>(std::move(v_));
  }
  // REQUIRES: !has_value().
  const Status& error() const { return std::get<Status>(v_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace seedance

#define SEEDANCE_CONCAT_INNER_(a, b) a##b
#define SEEDANCE_CONCAT_(a, b) SEEDANCE_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define SEEDANCE_RETURN_IF_ERROR(expr)           \
  do {                                           \
    ::seedance::Status seedance_status_ = (expr); \
    if (!seedance_status_.ok()) return seedance_status_; \
  } while (false)

// Declares `lhs` from a Result expression, returning its error from the enclosing function.
#define SEEDANCE_ASSIGN_OR_RETURN(lhs, expr) \
  SEEDANCE_ASSIGN_OR_RETURN_IMPL_(SEEDANCE_CONCAT_(seedance_result_, __LINE__), lhs, expr)
#define SEEDANCE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.has_value()) return tmp.error();             \
  lhs = std::move(tmp).value()

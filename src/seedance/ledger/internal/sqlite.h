#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/core/status.h"

// Thin RAII helpers over the SQLite C API. Private to the ledger module.
namespace seedance::ledger::internal {

// Returns kInternal "what: <sqlite message>" (kUnavailable for BUSY/LOCKED).
inline Status SqliteError(sqlite3* db, std::string_view what) {
  int code = sqlite3_errcode(db);
  std::string msg = std::string(what) + ": " + sqlite3_errmsg(db);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) return UnavailableError(msg);
  return InternalError(msg);
}

inline Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return InternalError(std::string("sqlite: ") + msg + " in: " + std::string(sql).substr(0, 80));
  }
  return Status::Ok();
}

// A prepared statement; reset after each Step() cycle by the caller via Reset().
class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(stmt_); }

  Status Prepare(sqlite3* db, const char* sql) {
    db_ = db;
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      return SqliteError(db, std::string("prepare '") + std::string(sql).substr(0, 60) + "'");
    }
    return Status::Ok();
  }
  void Bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void Bind(int i, std::string_view v) {
    // An empty view may have a null data pointer, which SQLite would bind as NULL.
    sqlite3_bind_text(stmt_, i, v.data() != nullptr ? v.data() : "", static_cast<int>(v.size()),
                      SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  // Returns true when a row is available, false when done; errors as Status.
  Result<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, "step");
  }
  Status Run() {
    auto r = Step();
    Reset();
    if (!r.has_value()) return r.error();
    return Status::Ok();
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(t),
                                      static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// The stored samples of one series over [from, to), as the telemetry readers (attribution, job
// telemetry) read them: one prepared statement, run once per series.
class SeriesSamples {
 public:
  Status Prepare(sqlite3* db) {
    return st_.Prepare(db, "SELECT ts_ms, value FROM samples WHERE series_id=?1 AND ts_ms>=?2 AND ts_ms<?3");
  }
  // Calls fn(ts_ms, value) for each sample of `series_id` in [from_ms, to_ms) that has a value.
  template <typename Fn>
  Status ForEach(std::int64_t series_id, std::int64_t from_ms, std::int64_t to_ms, Fn&& fn) {
    st_.Bind(1, series_id);
    st_.Bind(2, from_ms);
    st_.Bind(3, to_ms);
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st_.Step());
      if (!row) break;
      if (st_.IsNull(1)) continue;
      fn(st_.Int(0), st_.Double(1));
    }
    st_.Reset();
    return Status::Ok();
  }

 private:
  Stmt st_;
};

}  // namespace seedance::ledger::internal

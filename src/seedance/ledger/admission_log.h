#pragma once

// The admission part's durable state (issue 26): every workload `seedance server`'s
// /v1/workloads knows and every decision about it, in the ledger's SQLite file. The server writes
// a request's state changes and decisions in one transaction before any client hears of them, so
// a client that lost a response reads the decision back (DecisionsSince), and a restarted server
// rebuilds its Admitter from the live rows (Live).
//
// Two backends, one contract (admission_log_contract_test.cc runs on both):
// - SQLite (a file path): the ledger's tables admission_workloads (one row per workload: identity,
//   what was submitted, its current state) and admission_decisions (append-only; seq orders them
//   and never repeats, AUTOINCREMENT), migration 4. One replica: the file has one writer.
// - PostgreSQL (a postgresql:// or postgres:// URL): the same tables named seedance_admission_*,
//   shared by the server's replicas, plus the fencing row seedance_admission_epoch. A replica that
//   becomes leader calls TakeOver(), which bumps the epoch under SELECT ... FOR UPDATE; each
//   Commit reads the epoch FOR SHARE in its own transaction and is refused when another replica
//   took over since, so a deposed leader (partitioned, still running) cannot write after the new
//   one started, and the new one's rebuild (Live, after TakeOver) sees every commit that any
//   client was told about.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::ledger {


// One workload. The state is one of kAdmissionStates; the request is a JSON object of resource
// name -> quantity in thousandths of the resource's unit (tenancy::Quantity), exact.
struct AdmissionWorkloadRow {
  std::int64_t id = 0;  // the Admitter's id; unique over the ledger's life
  std::string namespace_name, name, uid;
  std::string tenant, tier;
  int priority = 0;
  std::string request_json;
  double creation_s = 0;   // queue order (Unix seconds)
  std::string state;       // pending | admitted | evicting | finished | withdrawn
  double admitted_at_s = 0;        // admitted, evicting: when it was (last) admitted
  std::int64_t evicted_for = -1;   // evicting: the id of the workload it makes room for
  std::int64_t created_ms = 0, updated_ms = 0;

  bool live() const { return state == "pending" || state == "admitted" || state == "evicting"; }
};

inline constexpr const char* kAdmissionStates[] = {"pending", "admitted", "evicting", "finished", "withdrawn"};
inline constexpr const char* kAdmissionDecisionKinds[] = {"submit", "admit", "evict", "requeue", "finish", "withdraw"};

// One decision, in the order it was taken.
struct AdmissionDecisionRow {
  std::int64_t seq = 0;  // set by Commit
  std::int64_t workload_id = 0;
  std::string namespace_name, name, uid;
  std::string kind;         // one of kAdmissionDecisionKinds
  std::string reason;       // why, in words
  std::string detail_json;  // the kind's fields as the API shows them ({"borrowing":..}, {"for":..}); "{}" if none
  std::int64_t at_ms = 0;
};

// Thread-compatible: the server's admission part calls it under its own lock.
class AdmissionLog {
 public:
  // Opens `path`: an SQLite ledger file (created and migrated; errors as Ledger::Open), or a
  // PostgreSQL URL (connected and migrated; kUnavailable when it cannot connect).
  static Result<std::unique_ptr<AdmissionLog>> Open(const std::string& path);
  static bool IsPostgresUrl(const std::string& path);
  virtual ~AdmissionLog() = default;

  // Makes this log the only writer: later commits of any log that took over before are refused.
  // Returns the new epoch. `holder` names this replica in the fencing row (and in the refusals
  // of the others). PostgreSQL: required before the first Commit. SQLite: one writer by
  // construction; returns 1 and never fences.
  virtual Result<std::int64_t> TakeOver(const std::string& holder, std::int64_t now_ms) = 0;
  // True once a Commit was refused because another replica took over (until the next TakeOver).
  virtual bool fenced() const = 0;

  // In one transaction: each of `workloads` replaces the row of its id (or is inserted), then
  // `decisions` are appended in order and their seq set. On error nothing is written (and the
  // decisions' seq stay 0); a fenced log answers kFailedPrecondition naming the new holder.
  // Durable when it returns OK (SQLite's synchronous=FULL; PostgreSQL's COMMIT).
  virtual Status Commit(std::span<const AdmissionWorkloadRow> workloads, std::span<AdmissionDecisionRow> decisions) = 0;

  // Workloads pending, admitted or evicting, by id.
  virtual Result<std::vector<AdmissionWorkloadRow>> Live() = 0;
  // The newest workload (largest id) named namespace/name, any state.
  virtual Result<std::optional<AdmissionWorkloadRow>> Latest(const std::string& namespace_name,
                                                             const std::string& name) = 0;
  // The workload namespace/name with `uid`, any state.
  virtual Result<std::optional<AdmissionWorkloadRow>> ByUid(const std::string& namespace_name,
                                                            const std::string& name, const std::string& uid) = 0;
  // A workload's decisions, by seq.
  virtual Result<std::vector<AdmissionDecisionRow>> History(std::int64_t workload_id) = 0;
  // Up to `limit` decisions with seq > `after`, by seq.
  virtual Result<std::vector<AdmissionDecisionRow>> DecisionsSince(std::int64_t after, std::size_t limit) = 0;
  // The largest workload id ever stored (0 when none) and the last seq (0 when none).
  virtual Result<std::int64_t> MaxWorkloadId() = 0;
  virtual Result<std::int64_t> LastSeq() = 0;
};

#ifdef SEEDANCE_HAVE_POSTGRESQL
// The PostgreSQL backend (pg_admission_log.cc); Open() picks it for a postgresql:// URL.
Result<std::unique_ptr<AdmissionLog>> OpenPgAdmissionLog(const std::string& conninfo);
#endif

}  // namespace seedance::ledger

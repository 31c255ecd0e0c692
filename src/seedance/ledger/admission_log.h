#pragma once

// The admission part's durable state (issue 26): every workload `seedance server`'s
// /v1/workloads knows and every decision about it, in the ledger's SQLite file. The server writes
// a request's state changes and decisions in one transaction before any client hears of them, so
// a client that lost a response reads the decision back (DecisionsSince), and a restarted server
// rebuilds its Admitter from the live rows (Live).
//
// Tables (ledger migration 4): admission_workloads (one row per workload: identity, what was
// submitted, its current state) and admission_decisions (append-only; seq orders them and never
// repeats, AUTOINCREMENT).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::ledger {

class Ledger;

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
  // Opens (creating and migrating) the ledger at `path`. Errors as Ledger::Open.
  static Result<std::unique_ptr<AdmissionLog>> Open(const std::string& path);
  ~AdmissionLog();
  AdmissionLog(const AdmissionLog&) = delete;
  AdmissionLog& operator=(const AdmissionLog&) = delete;

  // In one transaction: each of `workloads` replaces the row of its id (or is inserted), then
  // `decisions` are appended in order and their seq set. On error nothing is written (and the
  // decisions' seq stay 0). Durable when it returns OK (the ledger's synchronous=FULL).
  Status Commit(std::span<const AdmissionWorkloadRow> workloads, std::span<AdmissionDecisionRow> decisions);

  // Workloads pending, admitted or evicting, by id.
  Result<std::vector<AdmissionWorkloadRow>> Live();
  // The newest workload (largest id) named namespace/name, any state.
  Result<std::optional<AdmissionWorkloadRow>> Latest(const std::string& namespace_name, const std::string& name);
  // The workload namespace/name with `uid`, any state.
  Result<std::optional<AdmissionWorkloadRow>> ByUid(const std::string& namespace_name, const std::string& name,
                                                    const std::string& uid);
  // A workload's decisions, by seq.
  Result<std::vector<AdmissionDecisionRow>> History(std::int64_t workload_id);
  // Up to `limit` decisions with seq > `after`, by seq.
  Result<std::vector<AdmissionDecisionRow>> DecisionsSince(std::int64_t after, std::size_t limit);
  // The largest workload id ever stored (0 when none) and the last seq (0 when none).
  Result<std::int64_t> MaxWorkloadId();
  Result<std::int64_t> LastSeq();

 private:
  explicit AdmissionLog(std::unique_ptr<Ledger> ledger);
  struct Statements;
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<Statements> stmts_;
};

}  // namespace seedance::ledger

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"

namespace seedance::audit {

// Admission states of a node (S7.3).
enum class AdmissionState : std::uint8_t { kPending, kAdmitted, kObservation, kRemoved };

std::string_view AdmissionStateName(AdmissionState s);  // "pending", "admitted", ...
Result<AdmissionState> ParseAdmissionState(std::string_view name);
// What the scheduler may place on a node in state `s`: admitted -> anything, observation ->
// Bronze (best-effort) only, pending and removed -> nothing.
cluster::NodeEligibility EligibilityOf(AdmissionState s);

// The result of one audit of one node.
enum class AuditOutcome : std::uint8_t {
  kPass,
  kFail,        // a health category failed or the deviation rate is unhealthy
  kIncomplete,  // the evidence is missing, too short or inconsistent: never admits a node
};
std::string_view AuditOutcomeName(AuditOutcome o);  // "pass", "fail", "incomplete"

// Plain aggregate with the seed's defaults.
struct AdmissionConfig {
  double pending_evidence_hours = 48;  // clean telemetry a new node must show before admission
  int removal_failures = 2;            // consecutive failed audits that remove a node (>= 1)
  int recovery_clean_audits = 3;       // consecutive clean audits that re-admit a node (>= 1)

  // Errors: kInvalidArgument naming the key.
  Status Validate() const;
};

// The admission record of one node. Plain value.
struct NodeAdmission {
  AdmissionState state = AdmissionState::kPending;
  std::int64_t since_s = 0;  // audit time (Unix s) of the last state change (or first audit)
  int consecutive_failures = 0;
  int clean_audits = 0;      // consecutive passing audits since the last failure
  std::string grade;         // last grade given
  std::int64_t last_audit_s = 0;
};

// What one audit found, as the state machine needs it.
struct AuditVerdict {
  AuditOutcome outcome = AuditOutcome::kIncomplete;
  double evidence_hours = 0;           // span of the telemetry the audit read
  std::vector<std::string> evidence;   // why: failed categories, missing fields, ...
};

// A logged state change with its evidence.
struct Transition {
  std::string node;
  std::int64_t at_s = 0;
  AdmissionState from = AdmissionState::kPending;
  AdmissionState to = AdmissionState::kPending;
  std::string reason;
  std::vector<std::string> evidence;
};

// Applies one audit to `record` (the S7.3 state machine):
//   pending     --pass with >= pending_evidence_hours of evidence--> admitted
//   pending     --anything else--> pending
//   admitted    --fail|incomplete--> observation (removed when removal_failures == 1)
//   observation --fail|incomplete, consecutive failures reach removal_failures--> removed
//   observation --recovery_clean_audits consecutive passes--> admitted
//   removed     --recovery_clean_audits consecutive passes--> admitted
// Incomplete evidence counts as a failure for a node that was admitted: a node that stops
// reporting does not keep its work. Returns the transition when the state changed.
// REQUIRES: config.Validate().ok().
std::optional<Transition> ApplyAudit(const AdmissionConfig& config, const std::string& node,
                                     const AuditVerdict& verdict, std::int64_t now_s,
                                     NodeAdmission& record);

// The persisted admission state of a fleet: records by node and the transition log.
struct AdmissionLedger {
  std::map<std::string, NodeAdmission> nodes;
  std::vector<Transition> log;

  // Serializes to JSON text (sorted by node; the log in order). Deterministic.
  std::string ToJson() const;
  // Parses ToJson's output. Errors: kInvalidArgument naming `name` and the field.
  static Result<AdmissionLedger> FromJson(std::string_view text, const std::string& name);
  // Reads `path`; a missing file is an empty ledger. Errors as FromJson.
  static Result<AdmissionLedger> LoadFile(const std::string& path);
};

}  // namespace seedance::audit

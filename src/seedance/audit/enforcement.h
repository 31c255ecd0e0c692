#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/audit/admission.h"
#include "seedance/audit/audit.h"
#include "seedance/audit/synthetic.h"
#include "seedance/core/status.h"

namespace seedance::audit {

// The enforcement scenario (S7.3): a simulated fleet with injected faults is audited every
// `audit_period_h`; between audits a batch of pods (half Bronze/best-effort, half guaranteed) is
// placed with a sched placement policy on a ClusterState whose admission mask follows the
// audit; pods of an epoch finish at its end. Everything is seeded and deterministic.
struct EnforcementSpec {
  std::vector<SyntheticNode> nodes;  // telemetry; each node gets 8 GPUs of its model
  int epochs = 7;                    // audits happen at the end of each epoch
  double audit_period_h = 24;
  std::int64_t start_s = 1'790'000'000;
  std::int64_t step_s = 300;         // telemetry sample interval
  int pods_per_epoch = 60;
  std::string policy = "bestfit";
  std::uint64_t seed = 42;
  AuditConfig config;
};

// The default scenario: 8 A100 nodes; node-2's power drifts (+60 %/day from 80 h), node-5
// reports XID 79 hourly from 80 h.
EnforcementSpec DefaultEnforcementSpec();

struct EnforcementEpoch {
  std::int64_t start_s = 0;
  std::vector<AdmissionState> state;   // per node (spec order), during this epoch
  std::vector<double> weight;          // per node: the grade's placement weight (1 ungraded)
  std::vector<int> placed_guaranteed;  // per node: new non-best-effort pods
  std::vector<int> placed_best_effort;  // per node: new Bronze pods
  int unschedulable = 0;
};

struct EnforcementResult {
  std::vector<std::string> hosts;          // spec order
  std::vector<EnforcementEpoch> epochs;    // in time order
  AdmissionLedger ledger;                  // final states and every transition
  FleetAudit last_audit;                   // the final audit
};

// Errors: an invalid config or an unknown policy (kInvalidArgument).
Result<EnforcementResult> RunEnforcementScenario(const EnforcementSpec& spec);

}  // namespace seedance::audit

#pragma once

#include <string>

#include "seedance/audit/admission.h"
#include "seedance/audit/audit.h"
#include "seedance/audit/enforcement.h"

namespace seedance::report {

// Returns an HTML <section> (self-contained: inline SVG, no script) for the health audit:
// a node-grade bar chart (energy ratio per node, coloured by grade, with the grade bounds as
// dashed lines), a table of node / grade / weight / state / since / outcome, the power-model
// fits with R², and the transition log with its evidence. All text is escaped. Deterministic.
std::string RenderAuditSection(const audit::FleetAudit& audit, const audit::AdmissionLedger& ledger,
                               const audit::AuditConfig& config);

// Returns an HTML <section> showing an enforcement scenario: per epoch and node, the admission
// state and the new pods placed (guaranteed / Bronze), followed by RenderAuditSection of the last
// audit.
std::string RenderEnforcementSection(const audit::EnforcementResult& result,
                                     const audit::AuditConfig& config);

}  // namespace seedance::report

#pragma once

#include <string>
#include <string_view>

#include "seedance/audit/admission.h"
#include "seedance/audit/audit.h"
#include "seedance/audit/signing.h"
#include "seedance/core/status.h"

namespace seedance::audit {

inline constexpr std::string_view kSnapshotSchema = "seedance.health-snapshot/1";

// Renders `health-snapshot-<node>.json` (S7.4): schema, timestamp, node, device fingerprint
// (host, driver, GPU UUIDs and models), window, the 12 raw metrics (null = not measured), health
// categories, grade (name, weight, the grade criteria that were not measured as "missing", and
// "capped": whether they withheld a better grade), admission state, evidence issues and the
// signature.
//
// Canonical form: the file is exactly nlohmann::json's dump(2) of its own content plus "\n"
// (keys sorted, fixed number formatting); the signed message is the compact dump() of the
// object with `signature.value` removed (so the algorithm and key id are signed too). Any
// change to the file therefore breaks either the canonical form or the signature.
// `key` == nullptr writes an unsigned snapshot (signature.algorithm "none"), which verify
// rejects. Deterministic for a deterministic key (HMAC, Ed25519).
Result<std::string> RenderSnapshot(const NodeAudit& audit, const NodeAdmission& admission,
                                   std::int64_t now_s, const SnapshotKey* key);

// Checks a snapshot file's text against `key`: JSON, required fields (errors name the field,
// e.g. "field 'metrics.xid_events' is missing"), canonical form, known algorithm matching the
// key, key id, and the signature. Returns OK only for an intact, correctly signed file.
// Errors: kFailedPrecondition (tampered, wrong key, unsigned) or kInvalidArgument (malformed);
// both mean "failed check".
Status VerifySnapshot(std::string_view text, const SnapshotKey& key);

// File name of a node's snapshot: "health-snapshot-<node>.json", with characters outside
// [A-Za-z0-9._-] replaced by '_'.
std::string SnapshotFileName(std::string_view node);

}  // namespace seedance::audit

#include "seedance/audit/snapshot.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace seedance::audit {
namespace {

using nlohmann::json;

double Round6(double v) { return std::round(v * 1e6) / 1e6; }

json Nullable(const std::optional<double>& v) {
  if (!v.has_value() || !std::isfinite(*v)) return nullptr;
  return Round6(*v);
}

// Dotted paths of every field a snapshot must have.
std::vector<std::string> RequiredPaths() {
  std::vector<std::string> p = {"schema",
                                "timestamp",
                                "timestamp_unix",
                                "node",
                                "fingerprint",
                                "fingerprint.host",
                                "fingerprint.driver",
                                "fingerprint.gpus",
                                "window",
                                "window.start",
                                "window.end",
                                "window.evidence_hours",
                                "metrics"};
  for (std::string_view m : RawMetricNames()) p.push_back("metrics." + std::string(m));
  for (std::size_t c = 0; c < kHealthCategoryCount; ++c) {
    p.push_back("health." + std::string(HealthCategoryName(static_cast<HealthCategory>(c))));
  }
  for (const char* s : {"grade", "grade.name", "grade.weight", "admission", "admission.state",
                        "admission.since", "admission.audit_outcome", "signature",
                        "signature.algorithm", "signature.key_id", "signature.value"}) {
    p.emplace_back(s);
  }
  return p;
}

const json* Find(const json& j, const std::string& path) {
  const json* cur = &j;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

Status Failed(const std::string& m) { return FailedPreconditionError(m); }

}  // namespace

std::string SnapshotFileName(std::string_view node) {
  std::string safe;
  for (char c : node) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    safe.push_back(ok ? c : '_');
  }
  if (safe.empty() || safe[0] == '.') safe.insert(safe.begin(), '_');
  return "health-snapshot-" + safe + ".json";
}

Result<std::string> RenderSnapshot(const NodeAudit& a, const NodeAdmission& admission,
                                   std::int64_t now_s, const SnapshotKey* key) {
  json j;
  j["schema"] = kSnapshotSchema;
  j["timestamp"] = FormatUtc(now_s);
  j["timestamp_unix"] = now_s;
  j["node"] = a.host;
  json gpus = json::array();
  for (const GpuAudit& g : a.gpus) {
    gpus.push_back({{"uuid", g.uuid},
                    {"model_name", g.model_name},
                    {"model", std::string(cluster::GpuModelName(g.model))}});
  }
  j["fingerprint"] = {{"host", a.host}, {"driver", a.driver}, {"gpus", gpus}};
  j["window"] = {{"start", FormatUtc(a.window_start_s)},
                 {"end", FormatUtc(a.window_end_s)},
                 {"evidence_hours", Round6(a.evidence_hours)}};
  json metrics = json::object();
  for (const auto& [name, v] : a.metrics.List()) metrics[std::string(name)] = Nullable(v);
  j["metrics"] = metrics;
  json health = json::object();
  for (std::size_t c = 0; c < kHealthCategoryCount; ++c) {
    health[std::string(HealthCategoryName(static_cast<HealthCategory>(c)))] = {
        {"result", HealthResultName(a.health[c].result)}, {"evidence", a.health[c].evidence}};
  }
  j["health"] = health;
  // "missing" and "capped" came after the schema's first files; verify does not require them.
  j["grade"] = {{"name", a.grade},
                {"weight", Round6(a.weight)},
                {"missing", a.grade_missing},
                {"capped", a.grade_capped}};
  j["admission"] = {{"state", AdmissionStateName(admission.state)},
                    {"since", FormatUtc(admission.since_s)},
                    {"audit_outcome", AuditOutcomeName(a.outcome)}};
  j["evidence_issues"] = a.issues;
  j["failures"] = a.failures;
  j["diagnostics"] = {{"cpu_gpu_correlation", Nullable(a.diagnostics.cpu_gpu_correlation)},
                      {"gpu_duty_cv", Nullable(a.diagnostics.gpu_duty_cv)},
                      {"findings", a.diagnostics.findings}};
  if (key == nullptr) {
    j["signature"] = {{"algorithm", "none"}, {"key_id", ""}};
    j["signature"]["value"] = "";
    return j.dump(2) + "\n";
  }
  j["signature"] = {{"algorithm", SignatureAlgorithmName(key->algorithm())},
                    {"key_id", key->key_id()}};
  SEEDANCE_ASSIGN_OR_RETURN(std::string sig, key->Sign(j.dump()));
  j["signature"]["value"] = HexEncode(sig);
  return j.dump(2) + "\n";
}

Status VerifySnapshot(std::string_view text, const SnapshotKey& key) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("snapshot is not valid JSON");
  if (!j.is_object()) return InvalidArgumentError("snapshot is not a JSON object");
  for (const std::string& path : RequiredPaths()) {
    if (Find(j, path) == nullptr) return InvalidArgumentError("field '" + path + "' is missing");
  }
  if (j["schema"] != kSnapshotSchema) {
    return InvalidArgumentError("field 'schema': expected '" + std::string(kSnapshotSchema) + "'");
  }
  for (const char* f : {"algorithm", "key_id", "value"}) {
    if (!j["signature"][f].is_string()) {
      return InvalidArgumentError(std::string("field 'signature.") + f + "': not a string");
    }
  }
  if (text != j.dump(2) + "\n") {
    return Failed("snapshot is not in canonical form (edited after signing?)");
  }
  const auto alg_name = j["signature"]["algorithm"].get<std::string>();
  if (alg_name == "none") return Failed("field 'signature.algorithm': the snapshot is unsigned");
  auto alg = ParseSignatureAlgorithm(alg_name);
  if (!alg.has_value()) {
    return InvalidArgumentError("field 'signature.algorithm': " + alg.error().message());
  }
  if (*alg != key.algorithm()) {
    return Failed("field 'signature.algorithm': the snapshot is signed with " + alg_name +
                  " but the key given is " + std::string(SignatureAlgorithmName(key.algorithm())));
  }
  auto sig = HexDecode(j["signature"]["value"].get<std::string>());
  if (!sig.has_value()) return InvalidArgumentError("field 'signature.value': " + sig.error().message());
  if (j["signature"]["key_id"].get<std::string>() != key.key_id()) {
    return Failed("field 'signature.key_id': signed with key " +
                  j["signature"]["key_id"].get<std::string>() + ", the key given is " +
                  key.key_id());
  }
  j["signature"].erase("value");
  if (!key.Verify(j.dump(), *sig)) return Failed("signature does not match the content");
  return Status::Ok();
}

}  // namespace seedance::audit

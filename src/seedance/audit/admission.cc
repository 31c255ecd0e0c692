#include "seedance/audit/admission.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace seedance::audit {

std::string_view AdmissionStateName(AdmissionState s) {
  switch (s) {
    case AdmissionState::kPending:
      return "pending";
    case AdmissionState::kAdmitted:
      return "admitted";
    case AdmissionState::kObservation:
      return "observation";
    case AdmissionState::kRemoved:
      return "removed";
  }
  return "?";
}

Result<AdmissionState> ParseAdmissionState(std::string_view name) {
  for (auto s : {AdmissionState::kPending, AdmissionState::kAdmitted, AdmissionState::kObservation,
                 AdmissionState::kRemoved}) {
    if (AdmissionStateName(s) == name) return s;
  }
  return InvalidArgumentError("unknown admission state '" + std::string(name) +
                              "' (known: pending, admitted, observation, removed)");
}

cluster::NodeEligibility EligibilityOf(AdmissionState s) {
  switch (s) {
    case AdmissionState::kAdmitted:
      return cluster::NodeEligibility::kAll;
    case AdmissionState::kObservation:
      return cluster::NodeEligibility::kBestEffortOnly;
    case AdmissionState::kPending:
    case AdmissionState::kRemoved:
      return cluster::NodeEligibility::kNone;
  }
  return cluster::NodeEligibility::kNone;
}

std::string_view AuditOutcomeName(AuditOutcome o) {
  switch (o) {
    case AuditOutcome::kPass:
      return "pass";
    case AuditOutcome::kFail:
      return "fail";
    case AuditOutcome::kIncomplete:
      return "incomplete";
  }
  return "?";
}

Status AdmissionConfig::Validate() const {
  if (!(pending_evidence_hours >= 0)) {
    return InvalidArgumentError("admission.pending_evidence_hours: must be >= 0");
  }
  if (removal_failures < 1) return InvalidArgumentError("admission.removal_failures: must be >= 1");
  if (recovery_clean_audits < 1) {
    return InvalidArgumentError("admission.recovery_clean_audits: must be >= 1");
  }
  return Status::Ok();
}

std::optional<Transition> ApplyAudit(const AdmissionConfig& config, const std::string& node,
                                     const AuditVerdict& verdict, std::int64_t now_s,
                                     NodeAdmission& r) {
  const AdmissionState from = r.state;
  const bool pass = verdict.outcome == AuditOutcome::kPass;
  std::string reason;
  if (r.last_audit_s == 0 && r.since_s == 0) r.since_s = now_s;  // first audit: pending since now
  r.last_audit_s = now_s;
  if (pass) {
    r.consecutive_failures = 0;
    ++r.clean_audits;
  } else {
    r.clean_audits = 0;
    if (verdict.outcome == AuditOutcome::kFail || from != AdmissionState::kPending) {
      ++r.consecutive_failures;
    }
  }
  switch (from) {
    case AdmissionState::kPending:
      if (pass && verdict.evidence_hours >= config.pending_evidence_hours) {
        r.state = AdmissionState::kAdmitted;
        reason = fmt::format("clean audit over {:.1f} h of telemetry (>= {:.1f} h required)",
                             verdict.evidence_hours, config.pending_evidence_hours);
      }
      break;
    case AdmissionState::kAdmitted:
    case AdmissionState::kObservation:
      if (!pass) {
        if (r.consecutive_failures >= config.removal_failures) {
          r.state = AdmissionState::kRemoved;
          reason = fmt::format("{} consecutive failed audits", r.consecutive_failures);
        } else {
          r.state = AdmissionState::kObservation;
          if (from == AdmissionState::kAdmitted) reason = "failed audit";
        }
      } else if (from == AdmissionState::kObservation &&
                 r.clean_audits >= config.recovery_clean_audits) {
        r.state = AdmissionState::kAdmitted;
        reason = fmt::format("{} consecutive clean audits", r.clean_audits);
      }
      break;
    case AdmissionState::kRemoved:
      if (pass && r.clean_audits >= config.recovery_clean_audits) {
        r.state = AdmissionState::kAdmitted;
        reason = fmt::format("{} consecutive clean audits", r.clean_audits);
      }
      break;
  }
  if (r.state == from) return std::nullopt;
  r.since_s = now_s;
  if (r.state == AdmissionState::kAdmitted) r.consecutive_failures = 0;
  Transition t;
  t.node = node;
  t.at_s = now_s;
  t.from = from;
  t.to = r.state;
  t.reason = reason + " (audit " + std::string(AuditOutcomeName(verdict.outcome)) + ")";
  t.evidence = verdict.evidence;
  return t;
}

namespace {

using nlohmann::json;

Status FieldError(const std::string& name, const std::string& field, const std::string& what) {
  return InvalidArgumentError(name + ": field '" + field + "': " + what);
}

}  // namespace

std::string AdmissionLedger::ToJson() const {
  json j;
  j["version"] = 1;
  json nj = json::object();
  for (const auto& [node, r] : nodes) {
    nj[node] = {{"state", AdmissionStateName(r.state)},
                {"since", r.since_s},
                {"consecutive_failures", r.consecutive_failures},
                {"clean_audits", r.clean_audits},
                {"grade", r.grade},
                {"last_audit", r.last_audit_s}};
  }
  j["nodes"] = nj;
  json lj = json::array();
  for (const Transition& t : log) {
    lj.push_back({{"node", t.node},
                  {"at", t.at_s},
                  {"from", AdmissionStateName(t.from)},
                  {"to", AdmissionStateName(t.to)},
                  {"reason", t.reason},
                  {"evidence", t.evidence}});
  }
  j["log"] = lj;
  return j.dump(2) + "\n";
}

Result<AdmissionLedger> AdmissionLedger::FromJson(std::string_view text, const std::string& name) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError(name + ": not a JSON object");
  AdmissionLedger l;
  if (!j.contains("nodes") || !j["nodes"].is_object()) return FieldError(name, "nodes", "missing");
  for (const auto& [node, r] : j["nodes"].items()) {
    const std::string base = "nodes." + node;
    NodeAdmission a;
    if (!r.is_object()) return FieldError(name, base, "not an object");
    for (const char* k : {"state", "since", "consecutive_failures", "clean_audits", "grade",
                          "last_audit"}) {
      if (!r.contains(k)) return FieldError(name, base + "." + k, "missing");
    }
    if (!r["state"].is_string()) return FieldError(name, base + ".state", "not a string");
    auto st = ParseAdmissionState(r["state"].get<std::string>());
    if (!st.has_value()) return FieldError(name, base + ".state", st.error().message());
    a.state = *st;
    for (const char* k : {"since", "consecutive_failures", "clean_audits", "last_audit"}) {
      if (!r[k].is_number_integer()) return FieldError(name, base + "." + k, "not an integer");
    }
    if (!r["grade"].is_string()) return FieldError(name, base + ".grade", "not a string");
    a.since_s = r["since"].get<std::int64_t>();
    a.consecutive_failures = r["consecutive_failures"].get<int>();
    a.clean_audits = r["clean_audits"].get<int>();
    a.grade = r["grade"].get<std::string>();
    a.last_audit_s = r["last_audit"].get<std::int64_t>();
    l.nodes.emplace(node, a);
  }
  if (j.contains("log")) {
    if (!j["log"].is_array()) return FieldError(name, "log", "not an array");
    for (std::size_t i = 0; i < j["log"].size(); ++i) {
      const json& e = j["log"][i];
      const std::string base = "log[" + std::to_string(i) + "]";
      Transition t;
      if (!e.is_object() || !e.contains("node") || !e.contains("at") || !e.contains("from") ||
          !e.contains("to") || !e["node"].is_string() || !e["at"].is_number_integer() ||
          !e["from"].is_string() || !e["to"].is_string()) {
        return FieldError(name, base, "needs node, at, from, to");
      }
      t.node = e["node"].get<std::string>();
      t.at_s = e["at"].get<std::int64_t>();
      auto from = ParseAdmissionState(e["from"].get<std::string>());
      auto to = ParseAdmissionState(e["to"].get<std::string>());
      if (!from.has_value()) return FieldError(name, base + ".from", from.error().message());
      if (!to.has_value()) return FieldError(name, base + ".to", to.error().message());
      t.from = *from;
      t.to = *to;
      if (e.contains("reason") && e["reason"].is_string()) t.reason = e["reason"].get<std::string>();
      if (e.contains("evidence") && e["evidence"].is_array()) {
        for (const auto& s : e["evidence"]) {
          if (s.is_string()) t.evidence.push_back(s.get<std::string>());
        }
      }
      l.log.push_back(std::move(t));
    }
  }
  return l;
}

Result<AdmissionLedger> AdmissionLedger::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return AdmissionLedger{};
  std::stringstream ss;
  ss << in.rdbuf();
  return FromJson(ss.str(), path);
}

}  // namespace seedance::audit

// seedance audit run|status|verify|keygen: the health audit and node admission (SPEC S7).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "commands.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/telemetry_attribution.h"
#include "common.h"
#include "seedance/audit/admission.h"
#include "seedance/audit/audit.h"
#include "seedance/audit/snapshot.h"
#include "seedance/audit/telemetry_adapter.h"
#include "seedance/core/file_util.h"
#include "seedance/report/audit_report.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

using namespace seedance::audit;  // NOLINT(google-build-using-namespace)

struct AuditOptions {
  std::vector<std::string> telemetry;
  std::string db;
  std::string format;
  std::string out = "seedance-audit";
  std::string key;
  std::string pubkey;
  std::string state;
  std::string config;
  std::string now;
  std::string file;  // verify
  std::string hmac_out;
  std::vector<std::string> ed25519_out;
};

std::string StatePath(const AuditOptions& o) {
  return o.state.empty() ? o.out + "/audit-state.json" : o.state;
}

std::string Page(const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Seedance health audit</title>"
         "<style>body{font-family:sans-serif;margin:2em}table.audit{border-collapse:collapse}"
         "table.audit td,table.audit th{border:1px solid #ccc;padding:2px 6px;font-size:12px}"
         "</style></head><body>\n" +
         body + "</body></html>\n";
}

int RunAudit(const AuditOptions& o) {
  if (!o.db.empty() && !o.telemetry.empty()) {
    return ReportError(InvalidArgumentError("give either --db FILE or --telemetry FILE..., not both"));
  }
  if (o.db.empty() && o.telemetry.empty()) {
    return ReportError(InvalidArgumentError("give --db FILE (a ledger written by `seedance ingest`) or --telemetry FILE..."));
  }
  std::optional<telemetry::InputFormat> format;
  if (!o.format.empty()) {
    auto f = telemetry::ParseInputFormat(o.format);
    if (!f.has_value()) return ReportError(InvalidArgumentError("--format: " + f.error().message()));
    format = *f;
  }
  AuditConfig config;
  if (!o.config.empty()) {
    auto c = LoadAuditConfig(o.config);
    if (!c.has_value()) return ReportError(c.error());
    config = *c;
  }
  std::optional<SnapshotKey> key;
  if (!o.key.empty()) {
    auto k = SnapshotKey::LoadSigningKeyFile(o.key);
    if (!k.has_value()) return ReportError(k.error());
    key = std::move(k).value();
  }
  auto ledger = AdmissionLedger::LoadFile(StatePath(o));
  if (!ledger.has_value()) return ReportError(ledger.error());
  Result<std::vector<NodeTelemetry>> fleet = InvalidArgumentError("no telemetry");
  if (!o.db.empty()) {
    // The ledger keeps every ingested sample under its exposition series key: replay them as
    // timestamped Prometheus text through the same parser and adapter.
    if (!std::filesystem::exists(o.db)) return ReportError(NotFoundError(o.db + ": no such ledger"));
    auto cost_ledger = ledger::Ledger::Open(o.db);
    if (!cost_ledger.has_value()) return ReportError(cost_ledger.error());
    auto exposition = ledger::SamplesAsExposition(**cost_ledger);
    if (!exposition.has_value()) return ReportError(exposition.error());
    const std::string& text = *exposition;
    if (text.empty()) return ReportError(InvalidArgumentError(o.db + ": the ledger holds no telemetry samples"));
    fleet = LoadTelemetryText(text, o.db, telemetry::InputFormat::kPrometheus);
  } else {
    fleet = LoadTelemetryFiles(o.telemetry, format);
  }
  if (!fleet.has_value()) return ReportError(fleet.error());
  if (fleet->empty()) {
    return ReportError(InvalidArgumentError("no GPU samples in the telemetry given"));
  }
  std::int64_t now_s = 0;
  if (!o.now.empty()) {
    auto t = telemetry::ParseTimestamp(o.now);
    if (!t.has_value()) return ReportError(InvalidArgumentError("--now: " + t.error().message()));
    now_s = *t / 1000;
  } else {
    for (const auto& n : *fleet) {
      for (const auto& g : n.gpus) {
        if (!g.t_s.empty()) now_s = std::max(now_s, g.t_s.back());
      }
    }
  }
  auto audit = AuditFleet(*fleet, config, now_s);
  if (!audit.has_value()) return ReportError(audit.error());
  // Everything is validated and computed; render all outputs before writing any.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<Transition> transitions;
  for (const NodeAudit& n : audit->nodes) {
    NodeAdmission& rec = ledger->nodes[n.host];
    if (n.outcome != AuditOutcome::kIncomplete) rec.grade = n.grade;
    if (auto t = ApplyAudit(config.admission, n.host, n.Verdict(), now_s, rec)) {
      transitions.push_back(*t);
      ledger->log.push_back(std::move(*t));
    }
    auto text = RenderSnapshot(n, rec, now_s, key.has_value() ? &*key : nullptr);
    if (!text.has_value()) return ReportError(text.error());
    files.emplace_back(o.out + "/" + SnapshotFileName(n.host), *text);
  }
  files.emplace_back(o.out + "/audit.html",
                     Page(report::RenderAuditSection(*audit, *ledger, config)));
  files.emplace_back(StatePath(o), ledger->ToJson());
  if (Status s = EnsureDirectory(o.out); !s.ok()) return ReportError(s);
  for (const auto& [path, content] : files) {
    if (Status s = WriteFileAtomically(path, content); !s.ok()) return ReportError(s);
  }
  std::cout << fmt::format("audit at {} of {} node(s){}\n", FormatUtc(now_s), audit->nodes.size(),
                           key.has_value() ? "" : " (unsigned snapshots: no --key)");
  std::cout << fmt::format("{:<24} {:<20} {:<12} {:<11} {:<10} {}\n", "node", "grade", "state",
                           "audit", "kW/TOPS", "missing");
  for (const NodeAudit& n : audit->nodes) {
    const auto& e = n.metrics.energy_ratio_kw_per_tops;
    std::string missing;  // grade criteria not measured (the grade is capped without them)
    for (const auto& m : n.grade_missing) missing += (missing.empty() ? "" : ",") + m;
    if (missing.empty()) missing = "-";
    if (n.grade_capped) missing += " (grade capped)";
    std::cout << fmt::format("{:<24} {:<20} {:<12} {:<11} {:<10} {}\n", n.host, n.grade,
                             AdmissionStateName(ledger->nodes[n.host].state),
                             AuditOutcomeName(n.outcome),
                             e.has_value() ? fmt::format("{:.4g}", *e) : "n/a", missing);
    for (const auto& i : n.issues) std::cerr << "seedance: audit: " << n.host << ": " << i << "\n";
  }
  for (const Transition& t : transitions) {
    std::cout << fmt::format("transition: {} {} -> {}: {}\n", t.node, AdmissionStateName(t.from),
                             AdmissionStateName(t.to), t.reason);
  }
  std::cout << "wrote " << o.out << "/health-snapshot-*.json, audit.html and " << StatePath(o)
            << "\n";
  return kExitOk;
}

int RunStatus(const AuditOptions& o) {
  const std::string path = StatePath(o);
  if (!std::filesystem::exists(path)) return ReportError(NotFoundError(path + ": no audit state"));
  auto ledger = AdmissionLedger::LoadFile(path);
  if (!ledger.has_value()) return ReportError(ledger.error());
  std::cout << fmt::format("{:<24} {:<20} {:<12} {}\n", "node", "grade", "state", "since");
  for (const auto& [node, r] : ledger->nodes) {
    std::cout << fmt::format("{:<24} {:<20} {:<12} {}\n", node, r.grade.empty() ? "-" : r.grade,
                             AdmissionStateName(r.state), FormatUtc(r.since_s));
  }
  return kExitOk;
}

int RunVerify(const AuditOptions& o) {
  if (o.key.empty() == o.pubkey.empty()) {
    return ReportError(InvalidArgumentError("give exactly one of --key FILE or --pubkey FILE"));
  }
  auto key = o.key.empty() ? SnapshotKey::LoadPublicKeyFile(o.pubkey)
                           : SnapshotKey::LoadHmacKeyFile(o.key);
  if (!key.has_value()) return ReportError(key.error());
  std::ifstream in(o.file, std::ios::binary);
  if (!in) return ReportError(NotFoundError(o.file + ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  const Status s = VerifySnapshot(ss.str(), *key);
  if (!s.ok()) {
    std::cerr << "seedance: verify: " << o.file << ": FAILED: " << s.message() << "\n";
    return kExitFailure;
  }
  std::cout << o.file << ": OK (" << SignatureAlgorithmName(key->algorithm()) << ", key "
            << key->key_id() << ")\n";
  return kExitOk;
}

int RunKeygen(const AuditOptions& o) {
  if (o.hmac_out.empty() == o.ed25519_out.empty()) {
    return ReportError(
        InvalidArgumentError("give exactly one of --hmac FILE or --ed25519 PRIVATE PUBLIC"));
  }
  const Status s = o.hmac_out.empty() ? GenerateEd25519KeyFiles(o.ed25519_out[0], o.ed25519_out[1])
                                      : GenerateHmacKeyFile(o.hmac_out);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << (o.hmac_out.empty() ? o.ed25519_out[0] + " and " + o.ed25519_out[1]
                                                : o.hmac_out)
            << "\n";
  return kExitOk;
}

}  // namespace

Action RegisterAudit(CLI::App& app) {
  auto o = std::make_shared<AuditOptions>();
  CLI::App* audit = AddCommand(app, "audit", "Grade node health from telemetry and gate admission",
                               "Signed health snapshots per node and an admission state machine "
                               "(observe, remove, readmit) that the placement policies respect.",
                               "seedance audit run --telemetry dcgm.prom --out audit/");
  audit->require_subcommand(1);
  CLI::App* run = AddCommand(*audit, "run", "Audit nodes from telemetry and write signed snapshots",
                             "Writes health-snapshot-<node>.json per node in --out.",
                             "seedance audit run --telemetry dcgm.prom --key hmac.key --out audit/");
  run->add_option("--telemetry", o->telemetry, "telemetry files (Prometheus, OpenMetrics, "
                                               "dcgm-exporter, OTLP JSON)");
  run->add_option("--db", o->db, "cost ledger written by `seedance ingest` (its telemetry samples)");
  run->add_option("--format", o->format, "prom|openmetrics|dcgm|otlp (default: detect)");
  run->add_option("--out", o->out, "output directory")->capture_default_str();
  run->add_option("--key", o->key, "signing key: HMAC secret file or Ed25519 PEM private key");
  run->add_option("--state", o->state, "admission state file (default: OUT/audit-state.json)");
  run->add_option("--config", o->config, "audit configuration YAML (grades, admission, health)");
  run->add_option("--now", o->now, "audit time (default: the latest sample)");
  CLI::App* status = AddCommand(*audit, "status", "Show each node's grade, admission state and since when", "",
                                "seedance audit status --out audit/");
  status->add_option("--out", o->out, "output directory of `audit run`")->capture_default_str();
  status->add_option("--state", o->state, "admission state file");
  CLI::App* verify = AddCommand(*audit, "verify", "Check a health snapshot's signature",
                                "Exit 0: intact; 1: a check failed; 2: usage error.",
                                "seedance audit verify audit/health-snapshot-node-0.json --key hmac.key");
  verify->add_option("FILE", o->file, "health-snapshot-<node>.json")->required();
  verify->add_option("--key", o->key, "HMAC secret file");
  verify->add_option("--pubkey", o->pubkey, "Ed25519 PEM public key");
  CLI::App* keygen = AddCommand(*audit, "keygen", "Create a key to sign health snapshots", "",
                                "seedance audit keygen --hmac hmac.key");
  keygen->add_option("--hmac", o->hmac_out, "write a random HMAC-SHA256 secret to FILE");
  keygen->add_option("--ed25519", o->ed25519_out, "write an Ed25519 key pair: PRIVATE PUBLIC")
      ->expected(2);
  return [run, status, verify, keygen, o]() {
    if (run->parsed()) return RunAudit(*o);
    if (status->parsed()) return RunStatus(*o);
    if (verify->parsed()) return RunVerify(*o);
    if (keygen->parsed()) return RunKeygen(*o);
    return -1;
  };
}

}  // namespace seedance::cli

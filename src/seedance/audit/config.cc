// YAML loading of AuditConfig (audit.h). yaml-cpp throws; everything is caught here and turned
// into a Status naming file, line, column and key.
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "seedance/audit/audit.h"

namespace seedance::audit {
namespace {

class YamlReader {
 public:
  explicit YamlReader(std::string name) : name_(std::move(name)) {}

  Status Error(const YAML::Node& n, const std::string& key, const std::string& what) const {
    const YAML::Mark m = n.Mark();
    if (m.line < 0) return InvalidArgumentError(name_ + ": key '" + key + "': " + what);
    return InvalidArgumentError(
        fmt::format("{}:{}:{}: key '{}': {}", name_, m.line + 1, m.column + 1, key, what));
  }
  Status CheckKeys(const YAML::Node& map, const std::string& prefix,
                   const std::set<std::string>& allowed) const {
    if (!map.IsMap()) return Error(map, prefix.empty() ? "(top)" : prefix, "expected a mapping");
    for (const auto& kv : map) {
      const auto k = kv.first.as<std::string>();
      if (allowed.count(k) == 0) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        return Error(kv.first, prefix.empty() ? k : prefix + "." + k,
                     "unknown key (allowed: " + list + ")");
      }
    }
    return Status::Ok();
  }
  // Reads map[key] as T into `out` when present; `what` names the expected type.
  template <class T>
  Status Number(const YAML::Node& map, const std::string& prefix, const char* key, T& out,
                const char* what) const {
    const YAML::Node n = map[key];
    if (!n) return Status::Ok();
    try {
      out = n.as<T>();
    } catch (const YAML::Exception&) {
      return Error(n, Join(prefix, key), std::string("expected ") + what + ", got '" + Scalar(n) + "'");
    }
    return Status::Ok();
  }
  Status Double(const YAML::Node& map, const std::string& prefix, const char* key,
                double& out) const {
    return Number(map, prefix, key, out, "a number");
  }
  template <class Int>
  Status Integer(const YAML::Node& map, const std::string& prefix, const char* key,
                 Int& out) const {
    return Number(map, prefix, key, out, "an integer");
  }
  Status Bool(const YAML::Node& map, const char* key, bool& out) const {
    const YAML::Node n = map[key];
    if (!n) return Status::Ok();
    try {
      out = n.as<bool>();
    } catch (const YAML::Exception&) {
      return Error(n, key, "expected true or false, got '" + Scalar(n) + "'");
    }
    return Status::Ok();
  }
  static std::string Join(const std::string& prefix, const char* key) {
    return prefix.empty() ? std::string(key) : prefix + "." + key;
  }
  static std::string Scalar(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : "(non-scalar)"; }

 private:
  std::string name_;
};

Status ParseBound(const YamlReader& r, const YAML::Node& row, const std::string& prefix,
                  const char* metric, Bound& out) {
  const std::string below = std::string(metric) + "_below";
  const std::string at_most = std::string(metric) + "_at_most";
  if (row[below] && row[at_most]) {
    return r.Error(row[at_most], prefix + "." + at_most,
                   "give either " + below + " or " + at_most + ", not both");
  }
  double v = 0;
  if (row[below]) {
    SEEDANCE_RETURN_IF_ERROR(r.Double(row, prefix, below.c_str(), v));
    out = Bound::Below(v);
  } else if (row[at_most]) {
    SEEDANCE_RETURN_IF_ERROR(r.Double(row, prefix, at_most.c_str(), v));
    out = Bound::AtMost(v);
  }
  return Status::Ok();
}

Status ParseRoot(const YamlReader& r, const YAML::Node& root, AuditConfig& c) {
  if (root.IsNull()) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(r.CheckKeys(
      root, "",
      {"window_hours", "power_residual_hours", "min_evidence_hours", "max_clock_skew_s",
       "diagnostics_window_hours", "require_scheduling_deviation", "grades",
       "partial_evidence_cap", "admission", "health"}));
  SEEDANCE_RETURN_IF_ERROR(r.Double(root, "", "window_hours", c.window_hours));
  SEEDANCE_RETURN_IF_ERROR(r.Double(root, "", "power_residual_hours", c.power_residual_hours));
  SEEDANCE_RETURN_IF_ERROR(r.Double(root, "", "min_evidence_hours", c.min_evidence_hours));
  SEEDANCE_RETURN_IF_ERROR(r.Integer(root, "", "max_clock_skew_s", c.max_clock_skew_s));
  SEEDANCE_RETURN_IF_ERROR(
      r.Double(root, "", "diagnostics_window_hours", c.diagnostics_window_hours));
  SEEDANCE_RETURN_IF_ERROR(
      r.Bool(root, "require_scheduling_deviation", c.require_scheduling_deviation));
  if (const YAML::Node g = root["grades"]) {
    if (!g.IsSequence()) return r.Error(g, "grades", "expected a list of grades");
    c.grades.rows.clear();
    for (std::size_t i = 0; i < g.size(); ++i) {
      const YAML::Node row = g[i];
      const std::string p = "grades[" + std::to_string(i) + "]";
      SEEDANCE_RETURN_IF_ERROR(r.CheckKeys(
          row, p,
          {"name", "energy_ratio_below", "energy_ratio_at_most", "deviation_pct_below",
           "deviation_pct_at_most", "weight"}));
      GradeRow gr;
      if (!row["name"]) return r.Error(row, p + ".name", "missing");
      gr.name = row["name"].as<std::string>();
      SEEDANCE_RETURN_IF_ERROR(ParseBound(r, row, p, "energy_ratio", gr.energy_ratio));
      SEEDANCE_RETURN_IF_ERROR(ParseBound(r, row, p, "deviation_pct", gr.deviation_pct));
      if (!row["weight"]) return r.Error(row, p + ".weight", "missing");
      SEEDANCE_RETURN_IF_ERROR(r.Double(row, p, "weight", gr.weight));
      c.grades.rows.push_back(gr);
    }
    if (Status s = c.grades.Validate(); !s.ok()) return r.Error(g, "grades", s.message());
  }
  if (const YAML::Node cap = root["partial_evidence_cap"]) {
    if (!cap.IsScalar()) return r.Error(cap, "partial_evidence_cap", "expected a grade name");
    c.grades.partial_evidence_cap = cap.Scalar();
    if (Status s = c.grades.Validate(); !s.ok()) {
      return r.Error(cap, "partial_evidence_cap", s.message());
    }
  }
  if (const YAML::Node a = root["admission"]) {
    SEEDANCE_RETURN_IF_ERROR(r.CheckKeys(
        a, "admission", {"pending_evidence_hours", "removal_failures", "recovery_clean_audits"}));
    SEEDANCE_RETURN_IF_ERROR(
        r.Double(a, "admission", "pending_evidence_hours", c.admission.pending_evidence_hours));
    SEEDANCE_RETURN_IF_ERROR(
        r.Integer(a, "admission", "removal_failures", c.admission.removal_failures));
    SEEDANCE_RETURN_IF_ERROR(
        r.Integer(a, "admission", "recovery_clean_audits", c.admission.recovery_clean_audits));
    if (Status s = c.admission.Validate(); !s.ok()) return r.Error(a, "admission", s.message());
  }
  if (const YAML::Node h = root["health"]) {
    HealthThresholds& t = c.health;
    SEEDANCE_RETURN_IF_ERROR(r.CheckKeys(
        h, "health",
        {"xid_fail_codes", "thermal_warn_c", "thermal_fail_c", "power_warn_pct", "power_fail_pct",
         "power_over_tdp_pct", "pcie_warn_per_min", "pcie_fail_per_min",
         "healthy_deviation_pct"}));
    if (const YAML::Node x = h["xid_fail_codes"]) {
      if (!x.IsSequence()) return r.Error(x, "health.xid_fail_codes", "expected a list");
      t.xid_fail_codes.clear();
      for (std::size_t i = 0; i < x.size(); ++i) {
        try {
          t.xid_fail_codes.push_back(x[i].as<int>());
        } catch (const YAML::Exception&) {
          return r.Error(x[i], "health.xid_fail_codes", "expected an integer XID");
        }
      }
    }
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "thermal_warn_c", t.thermal_warn_c));
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "thermal_fail_c", t.thermal_fail_c));
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "power_warn_pct", t.power_warn_pct));
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "power_fail_pct", t.power_fail_pct));
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "power_over_tdp_pct", t.power_over_tdp_pct));
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "pcie_warn_per_min", t.pcie_warn_per_min));
    SEEDANCE_RETURN_IF_ERROR(r.Double(h, "health", "pcie_fail_per_min", t.pcie_fail_per_min));
    SEEDANCE_RETURN_IF_ERROR(
        r.Double(h, "health", "healthy_deviation_pct", t.healthy_deviation_pct));
  }
  if (Status s = c.Validate(); !s.ok()) return r.Error(root, "(config)", s.message());
  return Status::Ok();
}

}  // namespace

Result<AuditConfig> ParseAuditConfig(std::string_view yaml_text, const std::string& name) {
  YamlReader r(name);
  AuditConfig c;
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    SEEDANCE_RETURN_IF_ERROR(ParseRoot(r, root, c));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}:{}:{}: {}", name, e.mark.line + 1,
                                            e.mark.column + 1, e.msg));
  }
  return c;
}

Result<AuditConfig> LoadAuditConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseAuditConfig(ss.str(), path);
}

}  // namespace seedance::audit

#include "seedance/server/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string_view>

#include "seedance/core/duration.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/config.h"

namespace seedance::server {
namespace {

// Top-level sections: `server` and `tenancy` are read here; the others belong to other commands
// reading the same file (`scheduler`: cost-benchmark; `ledger`, `audit`; `slurm`: seedance slurm) and
// are passed over.
constexpr std::string_view kParsedSections[] = {"server", "tenancy"};
constexpr std::string_view kToleratedSections[] = {"scheduler", "ledger", "audit", "slurm"};

// Errors "FILE:LINE: key 'PATH': reason" for one file.
class Where {
 public:
  explicit Where(std::string file) : file_(std::move(file)) {}

  Status Error(const YAML::Node& at, std::string_view path, std::string_view reason) const {
    std::string m = file_;
    m += ':';
    m += std::to_string(at.Mark().line + 1);
    m += ": key '";
    m += path;
    m += "': ";
    m += reason;
    return InvalidArgumentError(std::move(m));
  }

  // Checks that `map` is a mapping whose keys are all in `allowed` and none repeats.
  Status Keys(const YAML::Node& map, std::string_view path, std::initializer_list<std::string_view> allowed) const {
    if (!map.IsMap()) return Error(map, path, "expected a mapping");
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      const std::string key_path = Join(path, key);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (std::string_view a : allowed) {
          if (!list.empty()) list += ", ";
          list += a;
        }
        return Error(kv.first, key_path, std::string("unknown key (allowed: ") + list + ")");
      }
      if (!seen.insert(key).second) return Error(kv.first, key_path, "duplicate key");
    }
    return Status::Ok();
  }

  Result<double> Number(const YAML::Node& n, std::string_view path, double lo) const {
    double v = 0;
    try {
      if (!n.IsScalar()) return Error(n, path, "expected a number");
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      return Error(n, path, std::string("expected a number, got '") + n.Scalar() + "'");
    }
    if (!std::isfinite(v) || v < lo) {
      return Error(n, path, n.Scalar() + " is out of range: must be a finite number >= " + FormatLo(lo));
    }
    return v;
  }

  Result<std::string> Text(const YAML::Node& n, std::string_view path) const {
    if (!n.IsScalar()) return Error(n, path, "expected a string");
    return n.Scalar();
  }

  Result<Money> Usd(const YAML::Node& n, std::string_view path) const {
    SEEDANCE_ASSIGN_OR_RETURN(double usd, Number(n, path, 0));
    return UsdFromDouble(usd);
  }

  // A duration (seedance::ParseDurationSeconds: "<number><unit>" with unit us, ms, s, m, h or d; a
  // bare number other than 0 is an error). Returns milliseconds, >= min_ms.
  Result<std::int64_t> Duration(const YAML::Node& n, std::string_view path, std::int64_t min_ms) const {
    if (!n.IsScalar()) return Error(n, path, "expected a duration (" + std::string(kDurationExample) + ")");
    const std::string& text = n.Scalar();
    auto seconds = ParseDurationSeconds(text);
    if (!seconds.has_value()) {
      std::string message = "'";
      message += text;
      message += "': ";
      message += seconds.error().message();
      return Error(n, path, message);
    }
    const double ms = *seconds * 1000;
    if (ms < static_cast<double>(min_ms) || ms > 1e15) {
      return Error(n, path, std::string("'") + text + "' is out of range: must be at least " + std::to_string(min_ms) + " ms");
    }
    return static_cast<std::int64_t>(std::llround(ms));
  }

  static std::string Join(std::string_view path, std::string_view key) {
    std::string p(path);
    if (!p.empty()) p += '.';
    p += key;
    return p;
  }

 private:
  static std::string FormatLo(double lo) {
    std::ostringstream os;
    os << lo;
    return os.str();
  }
  std::string file_;
};

Status ReadMoneyMap(const Where& w, const YAML::Node& map, const std::string& path,
                    std::map<std::string, Money>& out) {
  if (map.IsNull()) return Status::Ok();
  if (!map.IsMap()) return w.Error(map, path, "expected a mapping of name: USD per hour");
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (key.empty()) return w.Error(kv.first, path, "empty name");
    if (out.count(key) != 0) return w.Error(kv.first, Where::Join(path, key), "duplicate key");
    SEEDANCE_ASSIGN_OR_RETURN(out[key], w.Usd(kv.second, Where::Join(path, key)));
  }
  return Status::Ok();
}

Status ReadScrape(const Where& w, const YAML::Node& list, std::vector<ScrapeTarget>& out) {
  if (list.IsNull()) return Status::Ok();
  if (!list.IsSequence()) return w.Error(list, "server.scrape", "expected a list of targets");
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string path = std::string("server.scrape[") + std::to_string(i) + "]";
    SEEDANCE_RETURN_IF_ERROR(w.Keys(item, path, {"name", "url", "kind", "query", "interval"}));
    ScrapeTarget t;
    t.kind = "exposition";
    for (std::string_view required : {"name", "url"}) {
      if (!item[std::string(required)]) return w.Error(item, Where::Join(path, required), "required");
    }
    SEEDANCE_ASSIGN_OR_RETURN(t.name, w.Text(item["name"], path + ".name"));
    if (!names.insert(t.name).second) return w.Error(item["name"], path + ".name", std::string("duplicate target '") + t.name + "'");
    SEEDANCE_ASSIGN_OR_RETURN(t.url, w.Text(item["url"], path + ".url"));
    if (t.url.rfind("http://", 0) != 0 && t.url.rfind("https://", 0) != 0) {
      return w.Error(item["url"], path + ".url", std::string("'") + t.url + "': expected an http:// or https:// URL");
    }
    if (item["kind"]) {
      SEEDANCE_ASSIGN_OR_RETURN(t.kind, w.Text(item["kind"], path + ".kind"));
      if (t.kind != "exposition" && t.kind != "prometheus") {
        return w.Error(item["kind"], path + ".kind", std::string("'") + t.kind + "' (allowed: exposition, prometheus)");
      }
    }
    if (item["query"]) {
      SEEDANCE_ASSIGN_OR_RETURN(t.query, w.Text(item["query"], path + ".query"));
    }
    if (t.kind == "prometheus" && t.query.empty()) {
      return w.Error(item, path + ".query", "required for kind prometheus (a PromQL expression)");
    }
    if (t.kind == "exposition" && !t.query.empty()) {
      return w.Error(item["query"], path + ".query", "only for kind prometheus");
    }
    if (item["interval"]) {
      SEEDANCE_ASSIGN_OR_RETURN(t.interval_ms, w.Duration(item["interval"], path + ".interval", 100));
    }
    out.push_back(std::move(t));
  }
  return Status::Ok();
}

Status ReadLimits(const Where& w, const YAML::Node& l, ServerLimits& out) {
  if (l.IsNull()) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(w.Keys(l, "server.limits",
      {"header_bytes", "header_count", "header_timeout", "connections_per_client", "decision_log_bytes",
       "seen_pod_bytes", "max_series", "candidates_floor", "request_timeout"}));
  struct CountKey {
    const char* key;
    std::size_t* field;
    double lo;
  };
  for (const CountKey& k : {CountKey{"header_bytes", &out.header_bytes, 1024}, CountKey{"header_count", &out.header_count, 8},
                            CountKey{"connections_per_client", &out.connections_per_client, 1},
                            CountKey{"decision_log_bytes", &out.decision_log_bytes, 0},
                            CountKey{"seen_pod_bytes", &out.seen_pod_bytes, 0},
                            CountKey{"max_series", &out.max_series, 0},
                            CountKey{"candidates_floor", &out.candidates_floor, 1}}) {
    if (const YAML::Node n = l[k.key]) {
      const std::string path = Where::Join("server.limits", k.key);
      SEEDANCE_ASSIGN_OR_RETURN(double v, w.Number(n, path, k.lo));
      if (v != std::floor(v) || v > 1e15) return w.Error(n, path, "expected a whole number");
      *k.field = static_cast<std::size_t>(v);
    }
  }
  if (const YAML::Node n = l["header_timeout"]) {
    SEEDANCE_ASSIGN_OR_RETURN(out.header_timeout_ms, w.Duration(n, "server.limits.header_timeout", 100));
  }
  if (const YAML::Node n = l["request_timeout"]) {
    SEEDANCE_ASSIGN_OR_RETURN(out.request_timeout_ms, w.Duration(n, "server.limits.request_timeout", 100));
  }
  return Status::Ok();
}

Status ReadServer(const Where& w, const YAML::Node& s, ServerConfig& c) {
  if (s.IsNull()) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(w.Keys(s, "server",
      {"admission_mode", "admission_max_workloads", "placement_policy", "seed", "breaker_default_hourly", "breaker_namespaces", "breaker_jobs",
       "breaker_cooldown", "breaker_interval", "audit_interval", "unit_cost_period", "cooling_usd_per_hour",
       "opex_usd_per_hour", "scrape", "kube_api_url", "kube_token_file", "kube_ca_file", "limits",
       "kubeconfig", "extender_full_nodes", "extender_decide_at_filter"}));
  if (const YAML::Node n = s["limits"]) SEEDANCE_RETURN_IF_ERROR(ReadLimits(w, n, c.limits));
  for (auto [key, field] : {std::pair{"kube_api_url", &c.kube_api_url}, std::pair{"kube_token_file", &c.kube_token_file},
                            std::pair{"kube_ca_file", &c.kube_ca_file}, std::pair{"kubeconfig", &c.kubeconfig}}) {
    if (const YAML::Node n = s[key]) {
      std::string where = "server.";
      where += key;
      SEEDANCE_ASSIGN_OR_RETURN(*field, w.Text(n, where));
    }
  }
  if (!c.kube_api_url.empty() && c.kube_api_url.rfind("https://", 0) != 0 && c.kube_api_url.rfind("http://", 0) != 0) {
    return w.Error(s["kube_api_url"], "server.kube_api_url", "must start with https:// (or http:// for a local proxy)");
  }
  if (const YAML::Node n = s["admission_mode"]) {
    SEEDANCE_ASSIGN_OR_RETURN(c.admission_mode, w.Text(n, "server.admission_mode"));
    const auto mode = tenancy::ParseTenancyMode(c.admission_mode);
    // Kueue's Fair Sharing modes are what-if baselines (cost-benchmark, bench kueue), not a
    // driver's admission policy.
    if (!mode.has_value() || tenancy::IsFairSharing(*mode)) {
      return w.Error(n, "server.admission_mode",
                     std::string("unknown mode '") + c.admission_mode + "' (allowed: strict, borrowing, seedance, kueue)");
    }
  }
  if (const YAML::Node n = s["admission_max_workloads"]) {
    SEEDANCE_ASSIGN_OR_RETURN(double cap, w.Number(n, "server.admission_max_workloads", 1));
    if (cap != std::floor(cap) || cap > 1e9) return w.Error(n, "server.admission_max_workloads", "expected a whole number in [1, 1e9]");
    c.admission_max_workloads = static_cast<std::int64_t>(cap);
  }
  if (const YAML::Node n = s["placement_policy"]) {
    SEEDANCE_ASSIGN_OR_RETURN(c.placement_policy, w.Text(n, "server.placement_policy"));
    const auto& names = sched::PlacementPolicyNames();
    if (std::find(names.begin(), names.end(), c.placement_policy) == names.end()) {
      std::string list;
      for (const auto& name : names) {
        if (!list.empty()) list += ", ";
        list += name;
      }
      return w.Error(n, "server.placement_policy", std::string("unknown policy '") + c.placement_policy + "' (allowed: " + list + ")");
    }
  }
  if (const YAML::Node n = s["seed"]) {
    SEEDANCE_ASSIGN_OR_RETURN(double seed, w.Number(n, "server.seed", 0));
    if (seed != std::floor(seed) || seed > 9.0e15) return w.Error(n, "server.seed", "expected a whole number >= 0");
    c.seed = static_cast<std::uint64_t>(seed);
  }
  if (const YAML::Node n = s["breaker_default_hourly"]) {
    SEEDANCE_ASSIGN_OR_RETURN(c.breaker_default_hourly, w.Usd(n, "server.breaker_default_hourly"));
  }
  if (const YAML::Node n = s["breaker_namespaces"]) {
    SEEDANCE_RETURN_IF_ERROR(ReadMoneyMap(w, n, "server.breaker_namespaces", c.breaker_namespaces));
  }
  if (const YAML::Node n = s["breaker_jobs"]) SEEDANCE_RETURN_IF_ERROR(ReadMoneyMap(w, n, "server.breaker_jobs", c.breaker_jobs));
  struct DurationKey {
    const char* key;
    std::int64_t* field;
    std::int64_t min_ms;
  };
  for (const DurationKey& d : {DurationKey{"breaker_cooldown", &c.breaker_cooldown_ms, 0},
                               DurationKey{"breaker_interval", &c.breaker_interval_ms, 100},
                               DurationKey{"audit_interval", &c.audit_interval_ms, 100},
                               DurationKey{"unit_cost_period", &c.unit_cost_period_ms, 1000}}) {
    if (const YAML::Node n = s[d.key]) {
      SEEDANCE_ASSIGN_OR_RETURN(*d.field, w.Duration(n, Where::Join("server", d.key), d.min_ms));
    }
  }
  if (const YAML::Node n = s["cooling_usd_per_hour"]) {
    SEEDANCE_ASSIGN_OR_RETURN(c.cooling_usd_per_hour, w.Number(n, "server.cooling_usd_per_hour", 0));
  }
  if (const YAML::Node n = s["opex_usd_per_hour"]) {
    SEEDANCE_ASSIGN_OR_RETURN(c.opex_usd_per_hour, w.Number(n, "server.opex_usd_per_hour", 0));
  }
  if (const YAML::Node n = s["scrape"]) SEEDANCE_RETURN_IF_ERROR(ReadScrape(w, n, c.scrape));
  for (auto [key, field] : {std::pair{"extender_full_nodes", &c.extender_full_nodes},
                            std::pair{"extender_decide_at_filter", &c.extender_decide_at_filter}}) {
    if (const YAML::Node n = s[key]) {
      if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
        return w.Error(n, std::string("server.") + key, "expected true or false");
      }
      *field = n.Scalar() == "true";
    }
  }
  return Status::Ok();
}

}  // namespace

ServerConfig ServerConfig::Defaults() {
  ServerConfig c;
  c.source = "<defaults>";
  tenancy::TenantConfig t;
  t.name = "default";
  t.tier = tenancy::Tier::kGold;  // no quota entries: nothing limits it
  c.tenancy.tenants.push_back(std::move(t));
  return c;
}

Result<ServerConfig> ServerConfig::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open config");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return NotFoundError(path + ": cannot read config");
  return Parse(path, ss.str());
}

Result<ServerConfig> ServerConfig::Parse(const std::string& name, const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  ServerConfig c = Defaults();
  c.source = name;
  if (root.IsNull()) return c;
  Where w(name);
  try {
    if (!root.IsMap()) return w.Error(root, "", "expected a mapping of sections (server, tenancy, ...)");
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      const bool known =
          std::find(std::begin(kParsedSections), std::end(kParsedSections), key) != std::end(kParsedSections) ||
          std::find(std::begin(kToleratedSections), std::end(kToleratedSections), key) != std::end(kToleratedSections);
      if (!known) {
        return w.Error(kv.first, key, "unknown section (allowed: server, tenancy, scheduler, ledger, audit, slurm)");
      }
    }
    if (root["tenancy"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.tenancy, tenancy::ParseTenancyConfig(name, root["tenancy"]));
      if (c.tenancy.tenants.empty()) c.tenancy.tenants = Defaults().tenancy.tenants;
    }
    if (root["server"]) SEEDANCE_RETURN_IF_ERROR(ReadServer(w, root["server"], c));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return c;
}

}  // namespace seedance::server

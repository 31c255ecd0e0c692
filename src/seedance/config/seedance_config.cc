#include "seedance/config/seedance_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "seedance/config/yaml_fields.h"
#include "seedance/core/duration.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/config.h"

namespace seedance::config {
namespace {

using yaml_fields::Bool;
using yaml_fields::CheckKeys;
using yaml_fields::Duration;
using yaml_fields::Number;
using yaml_fields::Scalar;
using yaml_fields::StringMap;
using yaml_fields::Where;

Status ParseSlurm(const std::string& name, const YAML::Node& s, SlurmSection& out) {
  out.present = true;
  if (s.IsNull()) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, s, "slurm",
                                     {"partition", "interval", "mode", "placement", "accounts", "gpu_types",
                                      "gres_types", "breaker", "preempt", "checkpoint_interval", "heartbeat",
                                      "fail_open_after", "lock"}));
  if (s["partition"]) { SEEDANCE_ASSIGN_OR_RETURN(out.partition, Scalar(name, s["partition"], "slurm.partition")); }
  if (s["interval"]) {
    SEEDANCE_ASSIGN_OR_RETURN(std::string text, Scalar(name, s["interval"], "slurm.interval"));
    auto d = ParseDurationSeconds(text);
    if (!d.has_value() || *d <= 0) {
      return InvalidArgumentError(Where(name, s["interval"], "slurm.interval") + ": '" + text +
                                  "' is not a positive duration (e.g. 5s, 500ms)");
    }
    out.interval_s = *d;
  }
  if (s["mode"]) {
    SEEDANCE_ASSIGN_OR_RETURN(out.mode, Scalar(name, s["mode"], "slurm.mode"));
    auto m = tenancy::ParseTenancyMode(out.mode);
    if (!m.has_value() || *m == tenancy::TenancyMode::kKueue || tenancy::IsFairSharing(*m)) {
      return InvalidArgumentError(Where(name, s["mode"], "slurm.mode") + ": '" + out.mode +
                                  "' (allowed: strict, borrowing, seedance)");
    }
  }
  if (s["placement"]) {
    SEEDANCE_ASSIGN_OR_RETURN(out.placement, Scalar(name, s["placement"], "slurm.placement"));
    const auto& names = sched::PlacementPolicyNames();
    if (std::find(names.begin(), names.end(), out.placement) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return InvalidArgumentError(Where(name, s["placement"], "slurm.placement") + ": unknown policy '" +
                                  out.placement + "' (allowed: " + list + ")");
    }
  }
  if (s["accounts"]) { SEEDANCE_ASSIGN_OR_RETURN(out.accounts, StringMap(name, s["accounts"], "slurm.accounts")); }
  if (YAML::Node g = s["gpu_types"]) {
    if (!g.IsSequence()) return InvalidArgumentError(Where(name, g, "slurm.gpu_types") + ": expected a list");
    for (std::size_t i = 0; i < g.size(); ++i) {
      const std::string key = "slurm.gpu_types[" + std::to_string(i) + "]";
      SEEDANCE_ASSIGN_OR_RETURN(std::string t, Scalar(name, g[i], key));
      auto m = gpu::ParseGpuName(t, gpu::NameMatch::kProduct);
      if (!m.has_value()) return InvalidArgumentError(Where(name, g[i], key) + ": " + m.error().message());
      out.gpu_types.emplace_back(gpu::GpuAt(*m).name);
    }
  }
  if (s["gres_types"]) {
    SEEDANCE_ASSIGN_OR_RETURN(auto m, StringMap(name, s["gres_types"], "slurm.gres_types"));
    for (const auto& [k, v] : m) {
      auto idx = gpu::ParseGpuName(v, gpu::NameMatch::kProduct);
      if (!idx.has_value()) {
        return InvalidArgumentError(Where(name, s["gres_types"][k], "slurm.gres_types." + k) + ": " +
                                    idx.error().message());
      }
      std::string lower = k;
      for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out.gres_types[lower] = std::string(gpu::GpuAt(*idx).name);
    }
  }
  // A duration >= 0 ("0s" allowed where `zero_ok`).
  auto duration = [&](const YAML::Node& n, const std::string& key, bool zero_ok, double& out_s) -> Status {
    SEEDANCE_ASSIGN_OR_RETURN(std::string text, Scalar(name, n, key));
    auto d = ParseDurationSeconds(text);
    if (!d.has_value() || *d < 0 || (!zero_ok && *d == 0)) {
      return InvalidArgumentError(Where(name, n, key) + ": '" + text + "' is not a " + (zero_ok ? "" : "positive ") +
                                  "duration (e.g. 30s, 15m" + (zero_ok ? ", 0s" : "") + ")");
    }
    out_s = *d;
    return Status::Ok();
  };
  if (YAML::Node p = s["preempt"]) {
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, p, "slurm.preempt", {"signal", "grace"}));
    if (p["signal"]) {
      SEEDANCE_ASSIGN_OR_RETURN(std::string sig, Scalar(name, p["signal"], "slurm.preempt.signal"));
      if (sig.rfind("SIG", 0) == 0) sig = sig.substr(3);
      if (sig == "none") sig.clear();
      bool ok = sig.size() <= 12;
      for (char ch : sig) ok &= (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
      if (!ok) {
        return InvalidArgumentError(Where(name, p["signal"], "slurm.preempt.signal") + ": '" + sig +
                                    "' is not a signal name (USR1, USR2, TERM, ... or none)");
      }
      out.preempt_signal = sig;
    }
    if (p["grace"]) SEEDANCE_RETURN_IF_ERROR(duration(p["grace"], "slurm.preempt.grace", true, out.preempt_grace_s));
  }
  if (s["checkpoint_interval"]) {
    SEEDANCE_RETURN_IF_ERROR(duration(s["checkpoint_interval"], "slurm.checkpoint_interval", true, out.checkpoint_interval_s));
  }
  if (s["heartbeat"]) { SEEDANCE_ASSIGN_OR_RETURN(out.heartbeat_path, Scalar(name, s["heartbeat"], "slurm.heartbeat")); }
  if (s["fail_open_after"]) {
    SEEDANCE_RETURN_IF_ERROR(duration(s["fail_open_after"], "slurm.fail_open_after", false, out.fail_open_after_s));
  }
  if (s["lock"]) { SEEDANCE_ASSIGN_OR_RETURN(out.lock_path, Scalar(name, s["lock"], "slurm.lock")); }
  if (YAML::Node b = s["breaker"]) {
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, b, "slurm.breaker", {"default_hourly_usd", "accounts"}));
    const double inf = std::numeric_limits<double>::infinity();
    if (b["default_hourly_usd"]) {
      SEEDANCE_ASSIGN_OR_RETURN(out.breaker_default_hourly_usd,
                                Number(name, b["default_hourly_usd"], "slurm.breaker.default_hourly_usd", 0, inf, false));
    }
    if (YAML::Node a = b["accounts"]) {
      if (!a.IsMap()) return InvalidArgumentError(Where(name, a, "slurm.breaker.accounts") + ": expected a mapping");
      for (const auto& kv : a) {
        const std::string k = kv.first.as<std::string>();
        SEEDANCE_ASSIGN_OR_RETURN(out.breaker_accounts[k],
                                  Number(name, kv.second, "slurm.breaker.accounts." + k, 0, inf, false));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<SimConfig> LoadSimConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open config");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSimConfig(path, ss.str());
}

Result<SimConfig> ParseSimConfig(const std::string& name, const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  SimConfig c;
  if (root.IsNull()) return c;
  const yaml_fields::NullValueLines null_lines(root);  // `key:` with no value: its own line
  const double inf = std::numeric_limits<double>::infinity();
  // One seedance-config.yaml serves every driver: `server:` is seedance server's section (checked
  // by server::ServerConfig), read here only as a known key.
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, root, "", {"scheduler", "tenancy", "server", "slurm"}));
  if (root["slurm"]) SEEDANCE_RETURN_IF_ERROR(ParseSlurm(name, root["slurm"], c.slurm));
  if (root["tenancy"]) {
    SEEDANCE_ASSIGN_OR_RETURN(c.tenancy, tenancy::ParseTenancyConfig(name, root["tenancy"]));
  }
  if (!root["scheduler"]) return c;
  YAML::Node s = root["scheduler"];
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, s, "scheduler", {"cost_aware", "autoscaling", "checkpoint", "baselines"}));
  // One numeric key: where it goes and its allowed range (lo exclusive when lo_open).
  struct NumberKey {
    const char* key;
    double* field;
    double lo, hi;
    bool lo_open;
    bool duration = false;  // seconds, written with a unit
  };
  // Checks a section's keys, then reads its numeric keys that are present.
  auto read_section = [&](const YAML::Node& map, const std::string& path, std::set<std::string> allowed,
                          const std::vector<NumberKey>& numbers) -> Status {
    for (const auto& n : numbers) allowed.insert(n.key);
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, map, path, allowed));
    for (const auto& n : numbers) {
      if (!map[n.key]) continue;
      SEEDANCE_ASSIGN_OR_RETURN(*n.field, (n.duration ? Duration : Number)(name, map[n.key], path + "." + n.key, n.lo,
                                                                          n.hi, n.lo_open));
    }
    return Status::Ok();
  };
  CostAwareConfig& ca_cfg = c.cost_aware;
  if (YAML::Node ca = s["cost_aware"]) {
    const std::string p = "scheduler.cost_aware";
    SEEDANCE_RETURN_IF_ERROR(read_section(ca, p, {"enabled", "spot_fallback", "migrate_after_queue"},
        {{"max_price_ratio", &ca_cfg.max_price_ratio, 0, 1, true},
         {"warmup_window", &ca_cfg.warmup_window_s, 0, inf, false, true},
         {"min_speed_ratio", &ca_cfg.min_speed_ratio, 0, 1, true},
         {"overflow_speed_ratio", &ca_cfg.overflow_speed_ratio, 0, 1, false},
         {"max_step_price_ratio", &ca_cfg.max_step_price_ratio, 0, inf, false},
         {"spot_patience", &ca_cfg.spot_patience, 0, 1000, false},
         {"max_spot_wait", &ca_cfg.max_spot_wait_s, 0, inf, false, true},
         {"migrate_min_restarts", &ca_cfg.migrate_min_restarts, 0, inf, false},
         {"spot_return_cooldown", &ca_cfg.spot_return_cooldown_s, 0, inf, false, true},
         {"time_value_per_hour", &ca_cfg.time_value_per_hour, 0, inf, false},
         {"spot_mtbf_prior", &ca_cfg.spot_mtbf_prior_s, 0, inf, true, true}}));
    if (ca["enabled"]) { SEEDANCE_ASSIGN_OR_RETURN(ca_cfg.enabled, Bool(name, ca["enabled"], p + ".enabled")); }
    if (ca["migrate_after_queue"]) {
      SEEDANCE_ASSIGN_OR_RETURN(ca_cfg.migrate_after_queue,
                                Bool(name, ca["migrate_after_queue"], p + ".migrate_after_queue"));
    }
    if (ca["spot_fallback"]) {
      SEEDANCE_ASSIGN_OR_RETURN(ca_cfg.spot_fallback, Bool(name, ca["spot_fallback"], p + ".spot_fallback"));
    }
  }
  if (YAML::Node as = s["autoscaling"]) {
    const std::string p = "scheduler.autoscaling";
    SEEDANCE_RETURN_IF_ERROR(read_section(as, p, {"mode"},
        {{"cold_start", &c.cold_start_s, 0, inf, false, true},
         {"scale_down_delay", &c.scale_down_delay_s, 0, inf, false, true}}));
    if (as["mode"]) {
      auto m = as["mode"].as<std::string>("");
      if (m == "reactive") {
        ca_cfg.autoscale = AutoscaleMode::kReactive;
      } else if (m == "predictive") {
        ca_cfg.autoscale = AutoscaleMode::kPredictive;
      } else {
        return InvalidArgumentError(Where(name, as["mode"], p + ".mode") + ": '" + m +
                                    "' (allowed: reactive, predictive)");
      }
    }
  }
  if (YAML::Node ck = s["checkpoint"]) {
    SEEDANCE_RETURN_IF_ERROR(read_section(ck, "scheduler.checkpoint", {},
        {{"cost", &c.checkpoint_cost_s, 0, inf, false, true}, {"restart", &c.restart_s, 0, inf, false, true}}));
  }
  if (YAML::Node bl = s["baselines"]) {
    SEEDANCE_RETURN_IF_ERROR(read_section(bl, "scheduler.baselines", {},
        {{"checkpoint_interval", &c.baseline_checkpoint_interval_s, 0, inf, true, true}}));
  }
  return c;
}

}  // namespace seedance::config

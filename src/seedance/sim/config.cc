#include "seedance/sim/config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace seedance::sim {
namespace {

std::string Where(const std::string& name, const YAML::Node& node, const std::string& key) {
  return name + ":" + std::to_string(node.Mark().line + 1) + ": key '" + key + "'";
}

Status CheckKeys(const std::string& name, const YAML::Node& map, const std::string& path,
                 const std::set<std::string>& allowed) {
  if (!map.IsMap()) return InvalidArgumentError(Where(name, map, path) + ": expected a mapping");
  for (const auto& kv : map) {
    auto key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return InvalidArgumentError(Where(name, kv.first, path + "." + key) +
                                  ": unknown key (allowed: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<double> Number(const std::string& name, const YAML::Node& n, const std::string& key, double lo,
                      double hi, bool lo_open) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    return InvalidArgumentError(Where(name, n, key) + ": expected a number");
  }
  bool ok = (lo_open ? v > lo : v >= lo) && v <= hi;
  if (!ok) {
    std::ostringstream os;
    os << Where(name, n, key) << ": " << v << " is out of range " << (lo_open ? "(" : "[") << lo
       << ", " << hi << "]";
    return InvalidArgumentError(os.str());
  }
  return v;
}

Result<bool> Bool(const std::string& name, const YAML::Node& n, const std::string& key) {
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    return InvalidArgumentError(Where(name, n, key) + ": expected true or false");
  }
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
  const double inf = std::numeric_limits<double>::infinity();
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, root, "", {"scheduler"}));
  if (!root["scheduler"]) return c;
  YAML::Node s = root["scheduler"];
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, s, "scheduler", {"cost_aware", "autoscaling", "checkpoint"}));
  if (YAML::Node ca = s["cost_aware"]) {
    const std::string p = "scheduler.cost_aware";
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, ca, p,
        {"enabled", "spot_fallback", "max_price_ratio", "warmup_window", "min_speed_ratio",
         "spot_patience", "max_spot_wait", "migrate_min_restarts"}));
    if (ca["enabled"]) { SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.enabled, Bool(name, ca["enabled"], p + ".enabled")); }
    if (ca["spot_fallback"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.spot_fallback, Bool(name, ca["spot_fallback"], p + ".spot_fallback"));
    }
    if (ca["max_price_ratio"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.max_price_ratio,
                                Number(name, ca["max_price_ratio"], p + ".max_price_ratio", 0, 1, true));
    }
    if (ca["warmup_window"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.warmup_window_s,
                                Number(name, ca["warmup_window"], p + ".warmup_window", 0, inf, false));
    }
    if (ca["min_speed_ratio"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.min_speed_ratio,
                                Number(name, ca["min_speed_ratio"], p + ".min_speed_ratio", 0, 1, true));
    }
    if (ca["spot_patience"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.spot_patience,
                                Number(name, ca["spot_patience"], p + ".spot_patience", 0, 1000, false));
    }
    if (ca["max_spot_wait"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.max_spot_wait_s,
                                Number(name, ca["max_spot_wait"], p + ".max_spot_wait", 0, inf, false));
    }
    if (ca["migrate_min_restarts"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cost_aware.migrate_min_restarts,
                                Number(name, ca["migrate_min_restarts"], p + ".migrate_min_restarts", 0, inf, false));
    }
  }
  if (YAML::Node as = s["autoscaling"]) {
    const std::string p = "scheduler.autoscaling";
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, as, p, {"mode", "cold_start", "scale_down_delay"}));
    if (as["mode"]) {
      auto m = as["mode"].as<std::string>("");
      if (m == "reactive") {
        c.cost_aware.autoscale = AutoscaleMode::kReactive;
      } else if (m == "predictive") {
        c.cost_aware.autoscale = AutoscaleMode::kPredictive;
      } else {
        return InvalidArgumentError(Where(name, as["mode"], p + ".mode") + ": '" + m +
                                    "' (allowed: reactive, predictive)");
      }
    }
    if (as["cold_start"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.cold_start_s, Number(name, as["cold_start"], p + ".cold_start", 0, inf, false));
    }
    if (as["scale_down_delay"]) {
      SEEDANCE_ASSIGN_OR_RETURN(c.scale_down_delay_s,
                                Number(name, as["scale_down_delay"], p + ".scale_down_delay", 0, inf, false));
    }
  }
  if (YAML::Node ck = s["checkpoint"]) {
    const std::string p = "scheduler.checkpoint";
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, ck, p, {"cost", "restart"}));
    if (ck["cost"]) { SEEDANCE_ASSIGN_OR_RETURN(c.checkpoint_cost_s, Number(name, ck["cost"], p + ".cost", 0, inf, false)); }
    if (ck["restart"]) { SEEDANCE_ASSIGN_OR_RETURN(c.restart_s, Number(name, ck["restart"], p + ".restart", 0, inf, false)); }
  }
  return c;
}

}  // namespace seedance::sim

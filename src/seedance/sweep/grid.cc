#include "seedance/sweep/grid.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "seedance/config/seedance_config.h"
#include "seedance/core/duration.h"
#include "seedance/sim/fleet_file.h"

namespace seedance::sweep {
namespace {

constexpr std::size_t kMaxCells = 100000;

int LineOf(const YAML::Node& n) { return n.Mark().line + 1; }

Status Bad(const std::string& name, int line, const std::string& key, const std::string& why) {
  return InvalidArgumentError(name + ":" + std::to_string(line) + ": key '" + key + "': " + why);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A YAML scalar as the JSON value a cell records: an integer, a floating-point number, a
// boolean, or the text.
nlohmann::json ScalarValue(const std::string& text) {
  std::int64_t i = 0;
  const char* end = text.data() + text.size();
  if (auto [p, ec] = std::from_chars(text.data(), end, i); ec == std::errc() && p == end && !text.empty()) return i;
  double d = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, d); ec == std::errc() && p == end && !text.empty()) return d;
  if (text == "true") return true;
  if (text == "false") return false;
  return text;
}

// The text a scalar value is written back as (into a generated seedance-config document).
std::string ValueText(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::vector<std::string> SplitKey(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  std::string part;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  return parts;
}

// Sets root[a][b][c] = text for key "a.b.c", creating the maps on the way.
void SetNested(YAML::Node root, const std::string& key, const std::string& text) {
  const std::vector<std::string> parts = SplitKey(key);
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = node[parts[i]];
    if (!next.IsMap()) next = YAML::Node(YAML::NodeType::Map);
    node[parts[i]] = next;
    node.reset(next);
  }
  node[parts.back()] = text;
}

// config::ParseSimConfig's "NAME:LINE: key 'K': reason" without its location and key, which the
// caller names in grid terms.
std::string Reason(const std::string& message) {
  const std::string marker = ": key '";
  auto k = message.find(marker);
  if (k == std::string::npos) return message;
  auto close = message.find("': ", k + marker.size());
  return close == std::string::npos ? message : message.substr(close + 3);
}

Status CheckValue(const std::string& name, const YAML::Node& node, const std::string& key,
                  const nlohmann::json& value) {
  const std::string where = "values." + key;
  const int line = LineOf(node);
  if (key == "duration") {
    // YAML reads `duration: 86400` as a number: it needs a unit like any other duration.
    if (!node.IsScalar() || !(value.is_number() || value.is_string())) {
      return Bad(name, line, where, "expected a duration (" + std::string(kDurationExample) + ", 12h, 2d)");
    }
    auto d = ParseDurationSeconds(node.Scalar());
    if (!d.has_value()) return Bad(name, line, where, "'" + node.Scalar() + "': " + d.error().message());
    const double s = *d;
    if (!(s > 0)) return Bad(name, line, where, "'" + node.Scalar() + "' is not a positive duration");
    return Status::Ok();
  }
  if (key == "on_demand_quota") {
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > 1000000) {
      return Bad(name, line, where, "'" + node.Scalar() + "' is not an integer in [1, 1000000] (GPUs per pool)");
    }
    return Status::Ok();
  }
  if (key == "spot_price_ratio") {
    if (!value.is_number() || !(value.get<double>() > 0) || value.get<double>() > 1) {
      return Bad(name, line, where, "'" + node.Scalar() + "' is out of range (0, 1]");
    }
    return Status::Ok();
  }
  // A seedance-config key: the config parser is the one judge of its name and range.
  YAML::Node doc(YAML::NodeType::Map);
  SetNested(doc, key, node.Scalar());
  YAML::Emitter out;
  out << doc;
  auto parsed = config::ParseSimConfig("value", out.c_str());
  if (!parsed.has_value()) return Bad(name, line, where, Reason(parsed.error().message()));
  return Status::Ok();
}

Result<std::vector<std::string>> Words(const std::string& name, const YAML::Node& n, const std::string& key,
                                       std::vector<int>* lines) {
  if (!n.IsSequence() || n.size() == 0) return Bad(name, LineOf(n), key, "expected a non-empty list");
  std::vector<std::string> out;
  for (const auto& item : n) {
    if (!item.IsScalar() || item.Scalar().empty()) return Bad(name, LineOf(item), key, "expected a name");
    if (std::find(out.begin(), out.end(), item.Scalar()) != out.end()) {
      return Bad(name, LineOf(item), key, "'" + item.Scalar() + "' is listed twice");
    }
    out.push_back(item.Scalar());
    if (lines != nullptr) lines->push_back(LineOf(item));
  }
  return out;
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

nlohmann::json Cell::Params() const {
  nlohmann::json p{{"workload", workload}, {"policy", policy}, {"seed", seed}, {"values", values}};
  if (!fleet.empty()) p["fleet"] = fleet;
  return p;
}

std::string CellId(const nlohmann::json& params) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a offset basis
  for (char c : params.dump()) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

const std::vector<std::string>& ScenarioValueKeys() {
  static const std::vector<std::string> keys = {"duration", "on_demand_quota", "spot_price_ratio"};
  return keys;
}

Result<Grid> LoadGrid(const std::string& path) {
  auto text = ReadText(path);
  if (!text.has_value()) return NotFoundError(path + ": cannot open grid file");
  return ParseGrid(path, *text, std::filesystem::path(path).parent_path().string());
}

Result<Grid> ParseGrid(const std::string& name, const std::string& text, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) return InvalidArgumentError(name + ":1: expected a mapping with workloads, policies and seeds");
  const std::vector<std::string> allowed = {"config", "fleet", "policies", "seeds", "values", "workloads"};
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Bad(name, LineOf(kv.first), key, "unknown key (allowed: " + Join(allowed) + ")");
    }
  }
  for (const char* required : {"workloads", "policies", "seeds"}) {
    if (!root[required]) return InvalidArgumentError(name + ":1: key '" + required + "' is missing");
  }
  Grid g;
  g.path = name;
  const std::vector<std::string> bundled = sim::ScenarioWorkloadNames();
  std::vector<int> workload_lines;
  SEEDANCE_ASSIGN_OR_RETURN(g.workloads, Words(name, root["workloads"], "workloads", &workload_lines));
  for (std::size_t i = 0; i < g.workloads.size(); ++i) {
    const std::string& w = g.workloads[i];
    if (std::find(bundled.begin(), bundled.end(), w) != bundled.end()) {
      g.workload_paths.push_back(w);
      continue;
    }
    const std::string path = Resolve(base_dir, w);
    if (!std::filesystem::is_regular_file(path)) {
      return Bad(name, workload_lines[i], "workloads",
                 "unknown workload '" + w + "' (bundled: " + Join(bundled) + "; or a jobs CSV file, not found at " +
                     path + ")");
    }
    g.workload_paths.push_back(path);
  }
  std::vector<int> policy_lines;
  SEEDANCE_ASSIGN_OR_RETURN(g.policies, Words(name, root["policies"], "policies", &policy_lines));
  const YAML::Node seeds = root["seeds"];
  if (!seeds.IsSequence() || seeds.size() == 0) return Bad(name, LineOf(seeds), "seeds", "expected a non-empty list");
  for (const auto& s : seeds) {
    const std::string t = s.IsScalar() ? s.Scalar() : "";
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
      return Bad(name, LineOf(s), "seeds", "'" + t + "' is not a non-negative integer");
    }
    if (std::find(g.seeds.begin(), g.seeds.end(), v) != g.seeds.end()) {
      return Bad(name, LineOf(s), "seeds", "'" + t + "' is listed twice");
    }
    g.seeds.push_back(v);
  }
  if (const YAML::Node values = root["values"]) {
    if (!values.IsMap()) return Bad(name, LineOf(values), "values", "expected a mapping of key: [values]");
    for (const auto& kv : values) {
      GridAxis axis;
      axis.key = kv.first.as<std::string>();
      axis.line = LineOf(kv.first);
      const auto& scenario = ScenarioValueKeys();
      if (std::find(scenario.begin(), scenario.end(), axis.key) == scenario.end() &&
          axis.key.rfind("scheduler.", 0) != 0) {
        return Bad(name, axis.line, "values." + axis.key,
                   "unknown key (allowed: " + Join(scenario) + ", or a scheduler.* key of seedance-config.yaml)");
      }
      std::vector<YAML::Node> items;
      if (kv.second.IsScalar()) {
        items.push_back(kv.second);
      } else if (kv.second.IsSequence() && kv.second.size() > 0) {
        for (const auto& item : kv.second) items.push_back(item);
      } else {
        return Bad(name, LineOf(kv.second), "values." + axis.key, "expected a value or a non-empty list of values");
      }
      for (const auto& item : items) {
        if (!item.IsScalar()) return Bad(name, LineOf(item), "values." + axis.key, "expected a scalar value");
        nlohmann::json v = ScalarValue(item.Scalar());
        SEEDANCE_RETURN_IF_ERROR(CheckValue(name, item, axis.key, v));
        if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end()) {
          return Bad(name, LineOf(item), "values." + axis.key, "'" + item.Scalar() + "' is listed twice");
        }
        axis.values.push_back(std::move(v));
      }
      g.axes.push_back(std::move(axis));
    }
    std::sort(g.axes.begin(), g.axes.end(), [](const GridAxis& a, const GridAxis& b) { return a.key < b.key; });
  }
  if (const YAML::Node config = root["config"]) {
    if (!config.IsScalar()) return Bad(name, LineOf(config), "config", "expected a file name");
    g.config_path = Resolve(base_dir, config.Scalar());
    auto text_or = ReadText(g.config_path);
    if (!text_or.has_value()) {
      return Bad(name, LineOf(config), "config", "cannot open '" + g.config_path + "'");
    }
    g.config_text = *text_or;
    auto base = config::ParseSimConfig(g.config_path, g.config_text);
    if (!base.has_value()) return base.error();
  }
  if (const YAML::Node fleet = root["fleet"]) {
    if (!fleet.IsScalar()) return Bad(name, LineOf(fleet), "fleet", "expected a file name");
    g.fleet_path = Resolve(base_dir, fleet.Scalar());
    auto file = sim::LoadFleetFile(g.fleet_path);
    if (!file.has_value()) {
      return file.error().code() == StatusCode::kNotFound
                 ? Bad(name, LineOf(fleet), "fleet", "cannot open '" + g.fleet_path + "'")
                 : file.error();
    }
    g.fleet_name = file->name;
  }
  std::size_t cells = g.workloads.size() * g.policies.size() * g.seeds.size();
  for (const auto& a : g.axes) cells *= a.values.size();
  if (cells > kMaxCells) {
    return InvalidArgumentError(name + ": the grid has " + std::to_string(cells) + " cells (at most " +
                                std::to_string(kMaxCells) + ")");
  }
  // Every policy must exist in every cell's roster (the roster depends on the config values only).
  std::set<std::string> checked;
  for (const Cell& c : ExpandGrid(g)) {
    if (c.workload != g.workloads.front() || c.seed != g.seeds.front()) continue;
    SEEDANCE_ASSIGN_OR_RETURN(CellTask task, TaskOf(g, c));
    SEEDANCE_ASSIGN_OR_RETURN(sim::ScenarioSpec spec, ScenarioOf(task, ""));
    if (!checked.insert(c.values.dump() + "|" + c.policy).second) continue;
    spec.only_policies.clear();
    std::vector<std::string> roster;
    for (const auto& p : sim::ScenarioPolicies(spec)) roster.push_back(p.name);
    if (std::find(roster.begin(), roster.end(), c.policy) == roster.end()) {
      const auto at = std::find(g.policies.begin(), g.policies.end(), c.policy) - g.policies.begin();
      std::string where = c.values.empty() ? "" : " with values " + c.values.dump();
      return Bad(name, policy_lines[static_cast<std::size_t>(at)], "policies",
                 "unknown policy '" + c.policy + "'" + where + " (policies: " + Join(roster) + ")");
    }
  }
  return g;
}

std::vector<Cell> ExpandGrid(const Grid& grid) {
  std::vector<Cell> cells;
  std::size_t combos = 1;
  for (const auto& a : grid.axes) combos *= a.values.size();
  for (std::size_t w = 0; w < grid.workloads.size(); ++w) {
    for (std::size_t k = 0; k < combos; ++k) {
      nlohmann::json values = nlohmann::json::object();
      std::size_t rest = k;
      for (std::size_t a = grid.axes.size(); a-- > 0;) {  // the last key varies fastest
        const auto& axis = grid.axes[a];
        values[axis.key] = axis.values[rest % axis.values.size()];
        rest /= axis.values.size();
      }
      for (const auto& policy : grid.policies) {
        for (std::uint64_t seed : grid.seeds) {
          Cell c;
          c.index = cells.size();
          c.workload = grid.workloads[w];
          c.workload_path = grid.workload_paths[w];
          c.policy = policy;
          c.seed = seed;
          c.values = values;
          c.fleet = grid.fleet_name;
          c.id = CellId(c.Params());
          cells.push_back(std::move(c));
        }
      }
    }
  }
  return cells;
}

Result<CellTask> TaskOf(const Grid& grid, const Cell& cell) {
  CellTask t;
  t.cell = cell;
  t.fleet_path = grid.fleet_path;
  YAML::Node config(YAML::NodeType::Map);
  if (!grid.config_text.empty()) {
    try {
      config = YAML::Load(grid.config_text);
    } catch (const YAML::Exception& e) {
      return InvalidArgumentError(grid.config_path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (config.IsNull()) config = YAML::Node(YAML::NodeType::Map);
  }
  bool scheduler_values = false;
  for (const auto& [key, value] : cell.values.items()) {
    if (key == "duration") {
      // CheckValue accepted only a duration with a unit (a string, or 0).
      SEEDANCE_ASSIGN_OR_RETURN(t.duration_s, ParseDurationSeconds(value.is_string() ? value.get<std::string>()
                                                                                    : value.dump()));
    } else if (key == "on_demand_quota") {
      t.on_demand_quota = value.get<int>();
    } else if (key == "spot_price_ratio") {
      t.spot_price_ratio = value.get<double>();
    } else {
      SetNested(config, key, ValueText(value));
      scheduler_values = true;
    }
  }
  if (scheduler_values || !grid.config_text.empty()) {
    YAML::Emitter out;
    out << config;
    t.config_yaml = out.c_str();
  }
  return t;
}

Result<sim::ScenarioSpec> ScenarioOf(const CellTask& task, const std::string& data_dir) {
  sim::ScenarioSpec spec;
  spec.workload = task.cell.workload_path;
  spec.seed = task.cell.seed;
  spec.duration_s = task.duration_s;
  spec.on_demand_quota = task.on_demand_quota;
  spec.spot_price_ratio = task.spot_price_ratio;
  spec.fleet_path = task.fleet_path;
  spec.data_dir = data_dir;
  spec.only_policies = {task.cell.policy};
  if (!task.config_yaml.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(spec.config, config::ParseSimConfig("cell " + task.cell.id + " config", task.config_yaml));
  }
  return spec;
}

}  // namespace seedance::sweep

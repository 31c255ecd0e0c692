#include "seedance/ledger/config.h"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdlib>

#include "seedance/cost/money.h"
#include "seedance/telemetry/sample.h"

namespace seedance::ledger {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kDimensionNames[] = {"tenant",   "namespace",   "business_unit",
                                                "task_type", "data_source", "sla_tier",
                                                "job",       "workload",    "node"};

Status KeyError(const std::string& name, const std::string& key, const std::string& what) {
  return InvalidArgumentError(name + ": key '" + key + "': " + what);
}

Status CheckKeys(const Json& obj, const std::string& name, const std::string& where,
                 std::initializer_list<std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (std::string_view a : allowed) ok = ok || a == it.key();
    if (!ok) return KeyError(name, where + it.key(), "unknown key");
  }
  return Status::Ok();
}

Result<Money> UsdValue(const Json& v, const std::string& name, const std::string& key) {
  if (!v.is_number() || v.get<double>() < 0) {
    return KeyError(name, key, "expected a non-negative number of USD");
  }
  return UsdFromDouble(v.get<double>());
}

// A YAML document as the JSON value it spells: quoted scalars stay strings; plain ones become
// true/false, null, integers or numbers when they read as one. Errors name file:line.
Result<Json> YamlToJson(const YAML::Node& n, const std::string& name) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return Json(nullptr);
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return Json(s);  // quoted
      if (s == "true" || s == "True" || s == "TRUE") return Json(true);
      if (s == "false" || s == "False" || s == "FALSE") return Json(false);
      if (s == "~" || s == "null" || s == "Null" || s == "NULL") return Json(nullptr);
      std::int64_t i = 0;
      if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i); ec == std::errc() && p == s.data() + s.size()) {
        return Json(i);
      }
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size() && s.find_first_of("0123456789") != std::string::npos) return Json(d);
      return Json(s);
    }
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const YAML::Node& item : n) {
        SEEDANCE_ASSIGN_OR_RETURN(Json v, YamlToJson(item, name));
        out.push_back(std::move(v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : n) {
        const std::string where = name + ":" + std::to_string(kv.first.Mark().line + 1);
        if (!kv.first.IsScalar()) return InvalidArgumentError(where + ": expected a key name");
        if (out.contains(kv.first.Scalar())) {
          return InvalidArgumentError(where + ": key '" + kv.first.Scalar() + "' appears twice");
        }
        SEEDANCE_ASSIGN_OR_RETURN(Json v, YamlToJson(kv.second, name));
        out[kv.first.Scalar()] = std::move(v);
      }
      return out;
    }
  }
  return Json(nullptr);
}

Result<std::string> StringValue(const Json& v, const std::string& name, const std::string& key) {
  if (!v.is_string()) return KeyError(name, key, "expected a string");
  return v.get<std::string>();
}

}  // namespace

Result<Dimension> ParseDimension(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kDimensionNames); ++i) {
    if (kDimensionNames[i] == name) return static_cast<Dimension>(i);
  }
  if (name == "tier") return Dimension::kSlaTier;
  if (name == "bu") return Dimension::kBusinessUnit;
  return InvalidArgumentError("unknown dimension '" + std::string(name) +
                              "' (accepted: " + DimensionList() + ")");
}

std::string_view DimensionName(Dimension d) { return kDimensionNames[static_cast<std::size_t>(d)]; }

std::string DimensionList() {
  std::string out;
  for (std::string_view n : kDimensionNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out + " (tier = sla_tier)";
}

namespace {

// The checks of a document read as JSON (from a JSON or a YAML file).
Result<LedgerConfig> FromDocument(const Json& doc, const std::string& name);

// "NAME: key 'a.b.c': ..." from a YAML file as "NAME:LINE: key 'a.b.c': ...", LINE the line of the
// deepest key of the path the file has (the key's own line: a key with no value is marked by
// yaml-cpp at the next token). Other errors unchanged.
Status WithYamlLine(const Status& error, const YAML::Node& root, const std::string& name) {
  const std::string prefix = name + ": key '";
  const std::string& message = error.message();
  if (message.rfind(prefix, 0) != 0) return error;
  const std::size_t end = message.find('\'', prefix.size());
  if (end == std::string::npos) return error;
  const std::string path = message.substr(prefix.size(), end - prefix.size());
  YAML::Node node;
  node.reset(root);
  int line = 0;
  for (std::size_t at = 0; at < path.size() && node.IsMap();) {
    // The longest key of this mapping that starts the rest of the path (keys may hold dots).
    std::size_t best = 0;
    YAML::Node next;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;
      const std::string& key = kv.first.Scalar();
      const bool whole = path.size() == at + key.size() || (path.size() > at + key.size() && path[at + key.size()] == '.');
      if (key.size() > best && whole && path.compare(at, key.size(), key) == 0) {
        best = key.size();
        line = kv.first.Mark().line + 1;
        next.reset(kv.second);  // rebinds; `=` would write into the tree (yaml-cpp's reference semantics)
      }
    }
    if (best == 0) break;
    node.reset(next);
    at += best + 1;
  }
  if (line == 0) return error;
  return InvalidArgumentError(name + ":" + std::to_string(line) + message.substr(name.size()));
}

}  // namespace

Result<LedgerConfig> LedgerConfig::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

Result<LedgerConfig> LedgerConfig::Parse(std::string_view text, const std::string& name) {
  // JSON (a document starting with '{') as before; anything else is YAML.
  Json doc;
  YAML::Node root;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return InvalidArgumentError(name + ": not a JSON object");
  } else {
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      return InvalidArgumentError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);  // an empty file: the defaults
    if (!root.IsMap()) return InvalidArgumentError(name + ": expected a YAML mapping (or a JSON object)");
    SEEDANCE_ASSIGN_OR_RETURN(doc, YamlToJson(root, name));
  }
  Result<LedgerConfig> c = FromDocument(doc, name);
  if (!c.has_value() && root.IsMap()) return WithYamlLine(c.error(), root, name);
  return c;
}

namespace {

Result<LedgerConfig> FromDocument(const Json& doc, const std::string& name) {
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(doc, name, "",
                                     {"namespaces", "overhead_namespaces", "overhead_fraction",
                                      "idle_share", "tenant_weights", "prices_usd_per_gpu_hour",
                                      "step_seconds", "match_tolerance_seconds", "breaker"}));
  LedgerConfig c;
  if (auto ns = doc.find("namespaces"); ns != doc.end()) {
    if (!ns->is_object()) return KeyError(name, "namespaces", "expected an object");
    for (auto it = ns->begin(); it != ns->end(); ++it) {
      std::string where = "namespaces." + it.key() + ".";
      if (!it->is_object()) return KeyError(name, "namespaces." + it.key(), "expected an object");
      SEEDANCE_RETURN_IF_ERROR(CheckKeys(
          *it, name, where,
          {"tenant", "business_unit", "task_type", "data_source", "sla_tier"}));
      NamespaceRule r;
      std::pair<const char*, std::string*> fields[] = {{"tenant", &r.tenant},
                                                       {"business_unit", &r.business_unit},
                                                       {"task_type", &r.task_type},
                                                       {"data_source", &r.data_source},
                                                       {"sla_tier", &r.sla_tier}};
      for (auto& [k, dst] : fields) {
        if (auto f = it->find(k); f != it->end()) {
          SEEDANCE_ASSIGN_OR_RETURN(*dst, StringValue(*f, name, where + k));
        }
      }
      c.namespaces[it.key()] = r;
    }
  }
  if (auto o = doc.find("overhead_namespaces"); o != doc.end()) {
    if (!o->is_array()) return KeyError(name, "overhead_namespaces", "expected an array");
    c.overhead_namespaces.clear();
    for (const Json& v : *o) {
      SEEDANCE_ASSIGN_OR_RETURN(std::string s, StringValue(v, name, "overhead_namespaces"));
      c.overhead_namespaces.push_back(s);
    }
  }
  if (auto f = doc.find("overhead_fraction"); f != doc.end()) {
    if (!f->is_number()) return KeyError(name, "overhead_fraction", "expected a number");
    c.overhead_fraction = f->get<double>();
  }
  if (auto s = doc.find("idle_share"); s != doc.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::string v, StringValue(*s, name, "idle_share"));
    auto share = ParseIdleShare(v);
    if (!share.has_value()) return KeyError(name, "idle_share", share.error().message());
    c.idle_share = *share;
  }
  if (auto w = doc.find("tenant_weights"); w != doc.end()) {
    if (!w->is_object()) return KeyError(name, "tenant_weights", "expected an object");
    for (auto it = w->begin(); it != w->end(); ++it) {
      if (!it->is_number() || it->get<double>() <= 0) {
        return KeyError(name, "tenant_weights." + it.key(), "expected a number > 0");
      }
      c.tenant_weights[it.key()] = it->get<double>();
    }
  }
  if (auto p = doc.find("prices_usd_per_gpu_hour"); p != doc.end()) {
    if (!p->is_object()) return KeyError(name, "prices_usd_per_gpu_hour", "expected an object");
    for (auto it = p->begin(); it != p->end(); ++it) {
      SEEDANCE_ASSIGN_OR_RETURN(Money m,
                                UsdValue(*it, name, "prices_usd_per_gpu_hour." + it.key()));
      c.price_overrides[it.key()] = m;
    }
  }
  for (auto [key, dst] : {std::pair<const char*, std::int64_t*>{"step_seconds", &c.step_ms},
                          {"match_tolerance_seconds", &c.match_tolerance_ms}}) {
    if (auto v = doc.find(key); v != doc.end()) {
      if (!v->is_number_integer() || v->get<std::int64_t>() < 0) {
        return KeyError(name, key, "expected a non-negative integer");
      }
      *dst = v->get<std::int64_t>() * 1000;
      if (dst == &c.step_ms) c.step_in_file = true;
    }
  }
  if (auto b = doc.find("breaker"); b != doc.end()) {
    if (!b->is_object()) return KeyError(name, "breaker", "expected an object");
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(*b, name, "breaker.", {"default_hourly_usd", "jobs", "pause"}));
    if (auto d = b->find("default_hourly_usd"); d != b->end()) {
      SEEDANCE_ASSIGN_OR_RETURN(c.breaker_default_hourly,
                                UsdValue(*d, name, "breaker.default_hourly_usd"));
    }
    if (auto j = b->find("jobs"); j != b->end()) {
      if (!j->is_object()) return KeyError(name, "breaker.jobs", "expected an object");
      for (auto it = j->begin(); it != j->end(); ++it) {
        SEEDANCE_ASSIGN_OR_RETURN(Money m, UsdValue(*it, name, "breaker.jobs." + it.key()));
        c.breaker_jobs[it.key()] = m;
      }
    }
    if (auto p = b->find("pause"); p != b->end()) {
      if (!p->is_boolean()) return KeyError(name, "breaker.pause", "expected true or false");
      c.breaker_pause = p->get<bool>();
    }
  }
  Status s = c.Validate();
  if (!s.ok()) return InvalidArgumentError(name + ": " + s.message());
  return c;
}

}  // namespace

Status LedgerConfig::Validate() const {
  if (!(overhead_fraction >= 0.0 && overhead_fraction < 1.0)) {
    return InvalidArgumentError("overhead_fraction must be in [0, 1)");
  }
  if (step_ms <= 0) return InvalidArgumentError("step_seconds must be > 0");
  return Status::Ok();
}

WorkloadDims LedgerConfig::Classify(std::string_view pod, std::string_view namespace_name,
                                    std::string_view job) const {
  WorkloadDims d;
  d.name = std::string(pod);
  d.namespace_name = std::string(namespace_name);
  d.job = job.empty() ? std::string(pod) : std::string(job);
  const NamespaceRule* r = nullptr;
  if (auto it = namespaces.find(d.namespace_name); it != namespaces.end()) r = &it->second;
  auto pick = [](const NamespaceRule* rule, std::string NamespaceRule::*f, std::string fallback) {
    return rule != nullptr && !(rule->*f).empty() ? rule->*f : fallback;
  };
  d.tenant = pick(r, &NamespaceRule::tenant,
                  namespace_name.empty() ? std::string("unassigned") : d.namespace_name);
  d.business_unit = pick(r, &NamespaceRule::business_unit, "unassigned");
  d.task_type = pick(r, &NamespaceRule::task_type, "unassigned");
  d.data_source = pick(r, &NamespaceRule::data_source, "unassigned");
  d.sla_tier = pick(r, &NamespaceRule::sla_tier, "unassigned");
  return d;
}

bool LedgerConfig::IsOverheadNamespace(std::string_view ns) const {
  for (const auto& o : overhead_namespaces) {
    if (o == ns) return true;
  }
  return false;
}

std::int64_t LedgerConfig::TenantWeightMilli(std::string_view tenant) const {
  auto it = tenant_weights.find(std::string(tenant));
  if (it == tenant_weights.end()) return 1000;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(it->second * 1000.0 + 0.5));
}

std::int64_t GpuPricer::MicroUsdPerHour(std::string_view dcgm_model) const {
  std::string_view catalog_name = telemetry::CatalogModelName(dcgm_model);
  if (auto it = config_.price_overrides.find(std::string(dcgm_model));
      it != config_.price_overrides.end()) {
    return it->second.raw();
  }
  if (!catalog_name.empty()) {
    if (auto it = config_.price_overrides.find(std::string(catalog_name));
        it != config_.price_overrides.end()) {
      return it->second.raw();
    }
    if (catalog_ != nullptr) {
      auto idx = cluster::ParseGpuModel(catalog_name);
      if (idx.has_value()) {
        if (const cost::GpuPrice* p = catalog_->Find(*idx)) return p->usd_per_gpu_hour.raw();
      }
    }
  }
  return -1;
}

}  // namespace seedance::ledger

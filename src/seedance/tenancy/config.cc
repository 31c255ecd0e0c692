#include "seedance/tenancy/config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/core/duration.h"
#include "seedance/gpu/catalog.h"

namespace seedance::tenancy {
namespace {

// The allowed range of a number: from lo (excluded when lo_open) to hi (included).
struct Range {
  double lo;
  bool lo_open;
  double hi;
  std::string_view text;
  bool Contains(double v) const { return (lo_open ? v > lo : v >= lo) && v <= hi; }
};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Range kPositive{0, true, kInf, "must be > 0"};
constexpr Range kNonNegative{0, false, kInf, "must be >= 0"};
constexpr Range kUnit{0, false, 1, "must be in [0, 1]"};

int LineOf(const YAML::Node& n) { return n.Mark().line + 1; }

// One key of a mapping, in file order: its name, the key node and the value node.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// Reads YAML nodes of one file into values, or into errors "FILE:LINE: key 'PATH': reason".
// Thread-safety: const methods only; the file name is copied.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  // Returns kInvalidArgument naming the file, the line of `at` and `path`.
  Status Error(const YAML::Node& at, const std::string& path, std::string_view reason) const {
    return Error(LineOf(at), path, reason);
  }
  Status Error(int line, const std::string& path, std::string_view reason) const {
    return InvalidArgumentError(file_ + ":" + std::to_string(line) + ": key '" + path + "': " +
                                std::string(reason));
  }

  // Returns the keys of mapping `map` in file order (none for a null node). REQUIRES: every key a scalar; each key at
  // most once; with a non-empty `allowed`, every key one of them (the error lists them). With an
  // empty `allowed` any key passes and the caller checks keys and repeats itself.
  Result<std::vector<Field>> Fields(const YAML::Node& map, const std::string& path,
                                    std::initializer_list<std::string_view> allowed) const {
    std::vector<Field> out;
    if (map.IsNull()) return out;  // `key:` alone: an empty section
    if (!map.IsMap()) return Error(map, path, "expected a mapping");
    std::map<std::string, int> seen_at;  // key -> line
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) return Error(kv.first, path, "expected a key name");
      Field f{kv.first.Scalar(), kv.first, kv.second};
      std::string key_path = path + "." + f.key;
      if (allowed.size() > 0) {
        bool known = false;
        std::string list;
        for (std::string_view a : allowed) {
          known = known || a == f.key;
          list += (list.empty() ? "" : ", ") + std::string(a);
        }
        if (!known) return Error(f.key_node, key_path, "unknown key (allowed: " + list + ")");
        auto [it, fresh] = seen_at.emplace(f.key, LineOf(f.key_node));
        if (!fresh) {
          return Error(f.key_node, key_path, "duplicate key (first at line " + std::to_string(it->second) + ")");
        }
      }
      out.push_back(std::move(f));
    }
    return out;
  }

  // Returns the finite number `n` holds, in range `r`.
  Result<double> Number(const YAML::Node& n, const std::string& path, const Range& r) const {
    if (!n.IsScalar()) return Error(n, path, "expected a number");
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      return Error(n, path, "expected a number, got '" + n.Scalar() + "'");
    }
    if (!std::isfinite(v)) return Error(n, path, "expected a finite number, got '" + n.Scalar() + "'");
    if (!r.Contains(v)) return Error(n, path, n.Scalar() + " is out of range: " + std::string(r.text));
    return v;
  }

  // Returns the duration `n` holds in seconds (ParseDurationSeconds: a unit is required), in range `r`.
  Result<double> Duration(const YAML::Node& n, const std::string& path, const Range& r) const {
    if (!n.IsScalar()) return Error(n, path, "expected a duration (" + std::string(kDurationExample) + ")");
    auto d = ParseDurationSeconds(n.Scalar());
    if (!d.has_value()) return Error(n, path, "'" + n.Scalar() + "': " + d.error().message());
    if (!r.Contains(*d)) return Error(n, path, n.Scalar() + " is out of range: " + std::string(r.text));
    return *d;
  }

  Result<bool> Bool(const YAML::Node& n, const std::string& path) const {
    try {
      if (n.IsScalar()) return n.as<bool>();
    } catch (const YAML::Exception&) {
    }
    return Error(n, path, "expected true or false");
  }

  Result<std::string> Text(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) return Error(n, path, "expected a string");
    return n.Scalar();
  }

 private:
  std::string file_;
};

// A numeric key of a section: where its value goes and its range; a duration (in seconds) needs a unit.
struct NumberKey {
  std::string_view key;
  double* field;
  Range range;
  bool duration = false;
};

// Reads the fields of `fields` named in `numbers`; returns the others, in order.
Result<std::vector<Field>> ReadNumbers(const Reader& r, std::vector<Field> fields, const std::string& path,
                                       std::initializer_list<NumberKey> numbers) {
  std::vector<Field> rest;
  for (Field& f : fields) {
    const NumberKey* n = nullptr;
    for (const NumberKey& k : numbers) n = k.key == f.key ? &k : n;
    if (n == nullptr) {
      rest.push_back(std::move(f));
      continue;
    }
    SEEDANCE_ASSIGN_OR_RETURN(*n->field, n->duration ? r.Duration(f.value, path + "." + f.key, n->range)
                                                     : r.Number(f.value, path + "." + f.key, n->range));
  }
  return rest;
}

Status ReadTier(const Reader& r, const YAML::Node& map, const std::string& path, TierParams& t) {
  SEEDANCE_ASSIGN_OR_RETURN(auto fields, r.Fields(map, path, {"guaranteed_share", "max_idle", "reclaim_util_below",
                                                              "reclaim_after", "elastic_base"}));
  auto rest = ReadNumbers(r, std::move(fields), path,
                     {{"guaranteed_share", &t.guaranteed_share, kUnit},
                      {"max_idle", &t.max_idle_s, kNonNegative, true},
                      {"reclaim_util_below", &t.reclaim_util_below, kUnit},
                      {"reclaim_after", &t.reclaim_after_s, kNonNegative, true},
                      {"elastic_base", &t.elastic_base, kPositive}});
  return rest.has_value() ? Status::Ok() : rest.error();
}

std::string AllowedTiers() {
  std::string list;
  for (int i = 0; i < kNumTiers; ++i) list += (i ? ", " : "") + std::string(TierName(static_cast<Tier>(i)));
  return list;
}

Status ReadTiers(const Reader& r, const YAML::Node& map, const std::string& path, TenancyConfig& c) {
  SEEDANCE_ASSIGN_OR_RETURN(auto fields, r.Fields(map, path, {"gold", "silver", "bronze"}));
  for (const Field& f : fields) {
    std::optional<Tier> tier = ParseTier(f.key);
    SEEDANCE_CHECK(tier.has_value()) << f.key;  // Fields admitted only tier names
    SEEDANCE_RETURN_IF_ERROR(ReadTier(r, f.value, path + "." + f.key, c.tiers[static_cast<std::size_t>(*tier)]));
  }
  return Status::Ok();
}

// Returns the canonical resource name of quota key `f.key` ("cpu", "memory", "gpu", "gpu/<model>").
Result<std::string> ResourceName(const Reader& r, const Field& f, const std::string& path) {
  if (f.key == "cpu" || f.key == "memory" || f.key == "gpu") return f.key;
  if (f.key.rfind("gpu/", 0) == 0) {
    auto gpu = gpu::ParseGpuName(std::string_view(f.key).substr(4), gpu::NameMatch::kProduct);
    if (!gpu.has_value()) return r.Error(f.key_node, path, gpu.error().message());
    return GpuResourceName(gpu::GpuAt(*gpu).name);
  }
  return r.Error(f.key_node, path, "unknown resource (allowed: cpu, memory, gpu, gpu/<GPU model>)");
}

// Reads a tenant's quota. `has_cohort`: whether the tenant may borrow and lend at all.
Status ReadQuota(const Reader& r, const YAML::Node& map, const std::string& path, bool has_cohort,
                 TenantConfig& t) {
  SEEDANCE_ASSIGN_OR_RETURN(auto resources, r.Fields(map, path, {}));
  std::map<std::string, int> seen_at;  // canonical resource -> line
  for (const Field& res : resources) {
    const std::string rp = path + "." + res.key;
    ResourceQuota q;
    SEEDANCE_ASSIGN_OR_RETURN(q.resource, ResourceName(r, res, rp));
    auto [it, fresh] = seen_at.emplace(q.resource, LineOf(res.key_node));
    if (!fresh) {
      return r.Error(res.key_node, rp, "duplicate resource '" + q.resource + "' (first at line " +
                                           std::to_string(it->second) + ")");
    }
    const bool whole = q.resource.rfind("gpu", 0) == 0;
    SEEDANCE_ASSIGN_OR_RETURN(auto fields, r.Fields(res.value, rp, {"nominal", "borrowing_limit", "lending_limit"}));
    YAML::Node lending;
    for (const Field& f : fields) {
      const std::string p = rp + "." + f.key;
      SEEDANCE_ASSIGN_OR_RETURN(double v, r.Number(f.value, p, kNonNegative));
      if (whole && v != std::floor(v)) return r.Error(f.value, p, f.value.Scalar() + ": GPUs are counted whole");
      if (f.key != "nominal" && !has_cohort) {
        return r.Error(f.value, p, "needs a cohort: a tenant without one has no one to " +
                                       std::string(f.key == "lending_limit" ? "lend to" : "borrow from"));
      }
      if (f.key == "nominal") q.nominal = v;
      if (f.key == "borrowing_limit") q.borrowing_limit = v;
      if (f.key == "lending_limit") {
        q.lending_limit = v;
        lending = f.value;
      }
    }
    if (q.lending_limit && *q.lending_limit > q.nominal) {
      std::ostringstream os;
      os << lending.Scalar() << " exceeds nominal " << q.nominal << " (only nominal quota can be lent)";
      return r.Error(lending, rp + ".lending_limit", os.str());
    }
    t.quota.push_back(std::move(q));
  }
  return Status::Ok();
}

Result<TenantConfig> ReadTenant(const Reader& r, const YAML::Node& map, const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(auto fields, r.Fields(map, path, {"name", "cohort", "tier", "fair_sharing", "quota"}));
  TenantConfig t;
  t.line = LineOf(map);
  bool named = false;
  YAML::Node quota;
  for (const Field& f : fields) {
    const std::string p = path + "." + f.key;
    if (f.key == "name") {
      SEEDANCE_ASSIGN_OR_RETURN(t.name, r.Text(f.value, p));
      if (t.name.empty()) return r.Error(f.value, p, "a tenant's name must not be empty");
      named = true;
    } else if (f.key == "cohort") {
      SEEDANCE_ASSIGN_OR_RETURN(t.cohort, r.Text(f.value, p));
    } else if (f.key == "tier") {
      SEEDANCE_ASSIGN_OR_RETURN(std::string name, r.Text(f.value, p));
      std::optional<Tier> tier = ParseTier(name);
      if (!tier) return r.Error(f.value, p, "unknown tier '" + name + "' (allowed: " + AllowedTiers() + ")");
      t.tier = *tier;
    } else if (f.key == "fair_sharing") {
      // Kueue's spec.fairSharing: {weight: >= 0} (used by the Fair Sharing modes).
      SEEDANCE_ASSIGN_OR_RETURN(auto fs, r.Fields(f.value, p, {"weight"}));
      for (const Field& w : fs) {
        SEEDANCE_ASSIGN_OR_RETURN(t.fair_weight, r.Number(w.value, p + ".weight", kNonNegative));
      }
    } else {
      quota = f.value;
    }
  }
  if (!named) return r.Error(map, path + ".name", "missing: every tenant needs a name");
  if (quota) {
    SEEDANCE_RETURN_IF_ERROR(ReadQuota(r, quota, path + ".quota", !t.cohort.empty(), t));
  }
  return t;
}

Status ReadTenants(const Reader& r, const YAML::Node& seq, const std::string& path, TenancyConfig& c) {
  if (!seq.IsSequence()) return r.Error(seq, path, "expected a list of tenants");
  std::map<std::string, int> seen_at;  // name -> line
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(TenantConfig t, ReadTenant(r, seq[i], p));
    auto [it, fresh] = seen_at.emplace(t.name, t.line);
    if (!fresh) {
      return r.Error(seq[i]["name"], p + ".name",
                     "duplicate tenant name '" + t.name + "' (first at line " + std::to_string(it->second) + ")");
    }
    c.tenants.push_back(std::move(t));
  }
  return Status::Ok();
}

Status ReadFairness(const Reader& r, const YAML::Node& map, const std::string& path, TenancyConfig& c) {
  SEEDANCE_ASSIGN_OR_RETURN(auto fields, r.Fields(map, path, {"compensation", "window"}));
  SEEDANCE_ASSIGN_OR_RETURN(auto rest,
                            ReadNumbers(r, std::move(fields), path, {{"window", &c.fairness_window_s, kPositive, true}}));
  for (const Field& f : rest) {  // compensation
    SEEDANCE_ASSIGN_OR_RETURN(c.fairness_compensation, r.Bool(f.value, path + "." + f.key));
  }
  return Status::Ok();
}

Result<TenancyConfig> Read(const Reader& r, const YAML::Node& node) {
  TenancyConfig c;
  if (!node || node.IsNull()) return c;
  const std::string path = "tenancy";
  SEEDANCE_ASSIGN_OR_RETURN(auto fields, r.Fields(node, path, {"cycle", "reclaim_sweep", "grace_period", "fairness",
                                                               "tiers", "tenants"}));
  SEEDANCE_ASSIGN_OR_RETURN(auto rest, ReadNumbers(r, std::move(fields), path,
                                                   {{"cycle", &c.cycle_s, kPositive, true},
                                                    {"reclaim_sweep", &c.reclaim_sweep_s, kPositive, true},
                                                    {"grace_period", &c.grace_s, kNonNegative, true}}));
  for (const Field& f : rest) {
    const std::string p = path + "." + f.key;
    if (f.key == "fairness") {
      SEEDANCE_RETURN_IF_ERROR(ReadFairness(r, f.value, p, c));
    } else if (f.key == "tiers") {
      SEEDANCE_RETURN_IF_ERROR(ReadTiers(r, f.value, p, c));
    } else if (!f.value.IsNull()) {  // tenants; `tenants:` alone is an empty list
      SEEDANCE_RETURN_IF_ERROR(ReadTenants(r, f.value, p, c));
    }
  }
  return c;
}

}  // namespace

Result<TenancyConfig> ParseTenancyConfig(const std::string& file_name, const YAML::Node& tenancy_node) {
  Reader reader(file_name);
  try {
    return Read(reader, tenancy_node);
  } catch (const YAML::Exception& e) {  // yaml-cpp throws on node kinds the reader did not expect
    return reader.Error(e.mark.line + 1, "tenancy", e.msg);
  }
}

}  // namespace seedance::tenancy

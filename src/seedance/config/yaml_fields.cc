#include "seedance/config/yaml_fields.h"

#include <sstream>

#include "seedance/core/duration.h"

namespace seedance::config::yaml_fields {

namespace {
thread_local NullValueLines* active_null_lines = nullptr;
}  // namespace

NullValueLines::NullValueLines(const YAML::Node& root) : previous_(active_null_lines) {
  Walk(root, 0);
  active_null_lines = this;
}

NullValueLines::~NullValueLines() { active_null_lines = previous_; }

void NullValueLines::Walk(const YAML::Node& n, int depth) {
  if (depth > 64) return;  // deeper documents are refused by their readers' shape checks anyway
  if (n.IsMap()) {
    for (const auto& kv : n) {
      if (kv.second.IsNull()) nulls_.emplace_back(kv.second, kv.first.Mark().line + 1);
      Walk(kv.second, depth + 1);
    }
  } else if (n.IsSequence()) {
    for (const auto& item : n) Walk(item, depth + 1);
  }
}

int NullValueLines::LineOf(const YAML::Node& value) const {
  for (const auto& [node, line] : nulls_) {
    if (node.is(value)) return line;
  }
  return previous_ != nullptr ? previous_->LineOf(value) : 0;
}

std::string Where(const std::string& name, const YAML::Node& node, const std::string& key) {
  int line = node.Mark().line + 1;
  if (active_null_lines != nullptr && node.IsNull()) {
    if (const int at = active_null_lines->LineOf(node); at > 0) line = at;
  }
  return name + ":" + std::to_string(line) + ": key '" + key + "'";
}

Status CheckKeys(const std::string& name, const YAML::Node& map, const std::string& path,
                 const std::set<std::string>& allowed) {
  if (!map.IsMap()) return InvalidArgumentError(Where(name, map, path) + ": expected a mapping");
  for (const auto& kv : map) {
    // A key that is a list or a mapping (`[a]: 1`, `? {b: 2}`): as<std::string>() would throw
    // (found by fleet_file_fuzz; every YAML reader of config and sim checks its keys here).
    if (!kv.first.IsScalar()) return InvalidArgumentError(Where(name, kv.first, path) + ": a key that is not a name");
    auto key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return InvalidArgumentError(Where(name, kv.first, path.empty() ? key : path + "." + key) +
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

Result<double> Duration(const std::string& name, const YAML::Node& n, const std::string& key, double lo,
                        double hi, bool lo_open) {
  if (!n.IsScalar()) return InvalidArgumentError(Where(name, n, key) + ": expected a duration (" + std::string(kDurationExample) + ")");
  auto d = ParseDurationSeconds(n.Scalar());
  if (!d.has_value()) return InvalidArgumentError(Where(name, n, key) + ": '" + n.Scalar() + "': " + d.error().message());
  const double v = *d;
  if (!((lo_open ? v > lo : v >= lo) && v <= hi)) {
    std::ostringstream os;
    os << Where(name, n, key) << ": " << n.Scalar() << " is out of range " << (lo_open ? "(" : "[") << lo
       << " s, " << hi << " s]";
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

Result<std::string> Scalar(const std::string& name, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) return InvalidArgumentError(Where(name, n, key) + ": expected a string");
  return n.as<std::string>();
}

Result<std::map<std::string, std::string>> StringMap(const std::string& name, const YAML::Node& n,
                                                     const std::string& key) {
  if (!n.IsMap()) return InvalidArgumentError(Where(name, n, key) + ": expected a mapping");
  std::map<std::string, std::string> out;
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    SEEDANCE_ASSIGN_OR_RETURN(std::string v, Scalar(name, kv.second, key + "." + k));
    if (v.empty()) return InvalidArgumentError(Where(name, kv.second, key + "." + k) + ": empty value");
    out[k] = v;
  }
  return out;
}

}  // namespace seedance::config::yaml_fields

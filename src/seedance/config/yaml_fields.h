#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>

#include "seedance/core/status.h"

// Typed reads of YAML config fields whose errors name file:line and the key's dotted path
// ("seedance-config.yaml:12: key 'scheduler.cold_start': ..."): seedance-config.yaml and the
// fleet file read their fields through these.
namespace seedance::config::yaml_fields {

// "<name>:<line>: key '<key>'" for `node`'s line.
std::string Where(const std::string& name, const YAML::Node& node, const std::string& key);
// `map` must be a mapping whose keys are all in `allowed` (the error names the unknown key and
// lists the allowed ones); path "" is the document root.
Status CheckKeys(const std::string& name, const YAML::Node& map, const std::string& path,
                 const std::set<std::string>& allowed);
// A number in [lo, hi] ((lo, hi] when lo_open).
Result<double> Number(const std::string& name, const YAML::Node& n, const std::string& key, double lo, double hi,
                      bool lo_open);
// A duration in seconds (ParseDurationSeconds: "300s", "4h"; a bare number is an error), in the
// range of Number.
Result<double> Duration(const std::string& name, const YAML::Node& n, const std::string& key, double lo,
                        double hi, bool lo_open);
Result<bool> Bool(const std::string& name, const YAML::Node& n, const std::string& key);
Result<std::string> Scalar(const std::string& name, const YAML::Node& n, const std::string& key);
// A map of string -> string, every value non-empty.
Result<std::map<std::string, std::string>> StringMap(const std::string& name, const YAML::Node& n,
                                                     const std::string& key);

}  // namespace seedance::config::yaml_fields

#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"

// Typed reads of YAML config fields whose errors name file:line and the key's dotted path
// ("seedance-config.yaml:12: key 'scheduler.cold_start': ..."): seedance-config.yaml and the
// fleet file read their fields through these.
namespace seedance::config::yaml_fields {

// "<name>:<line>: key '<key>'" for `node`'s line. For a value-less key (`owned:` with nothing after
// it, or a mis-indented block under it) yaml-cpp marks the null value at the next token, often lines
// below; while a NullValueLines of the document lives (on this thread), its key's line is reported.
std::string Where(const std::string& name, const YAML::Node& node, const std::string& key);

// Remembers the key line of every null map value of `root`'s document, for Where(). Create one
// right after YAML::Load, in the scope that reports errors about the document; they nest.
class NullValueLines {
 public:
  explicit NullValueLines(const YAML::Node& root);
  ~NullValueLines();
  NullValueLines(const NullValueLines&) = delete;
  NullValueLines& operator=(const NullValueLines&) = delete;
  // The 1-based line of `value`'s key, or 0 when `value` is not a remembered null value.
  int LineOf(const YAML::Node& value) const;

 private:
  void Walk(const YAML::Node& n, int depth);
  std::vector<std::pair<YAML::Node, int>> nulls_;
  NullValueLines* previous_;
};
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

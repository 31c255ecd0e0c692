#include "seedance/slurm/slurm_json.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

#include <nlohmann/json.hpp>

namespace seedance::slurm {
namespace {

using Json = nlohmann::json;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, std::int64_t& out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// `alt_key`: another shape's list (sinfo: "nodes" in 22.05, "sinfo" from 23.11); one must be there.
Result<Json> ParseDocument(std::string_view text, const std::string& what, const char* list_key,
                           const char* alt_key = nullptr) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError(what + ": not valid JSON");
  if (!j.is_object()) return InvalidArgumentError(what + ": expected a JSON object");
  if (j.contains("errors") && j["errors"].is_array() && !j["errors"].empty()) {
    return UnavailableError(what + ": Slurm reported errors: " + j["errors"].dump());
  }
  if (alt_key != nullptr && !j.contains(list_key) && j.contains(alt_key) && j[alt_key].is_array()) return j;
  if (!j.contains(list_key) || !j[list_key].is_array()) {
    return InvalidArgumentError(what + ": " + list_key + (alt_key != nullptr ? std::string(" (or ") + alt_key + ")" : "") +
                                ": missing or not an array");
  }
  return j;
}

// Typed field readers; `path` is "jobs[3]" and the error names path.key.
class Fields {
 public:
  Fields(const Json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}
  Status CheckObject() const {
    return obj_.is_object() ? Status::Ok() : InvalidArgumentError(path_ + ": expected an object");
  }
  std::string Name(const char* key) const { return path_ + "." + key; }
  // Integers: Slurm 22.05 writes null for "not set" in some fields; 23.02 and later (data_parser
  // v0.0.39+) write {"set": bool, "infinite": bool, "number": N}: not set or infinite reads as
  // absent.
  Result<std::int64_t> Int(const char* key, bool required, std::int64_t dflt = 0) const {
    auto it = obj_.find(key);
    if (it != obj_.end() && it->is_object() && it->contains("number")) {
      const auto set = it->find("set");
      const auto inf = it->find("infinite");
      const bool absent = (set != it->end() && set->is_boolean() && !set->get<bool>()) ||
                          (inf != it->end() && inf->is_boolean() && inf->get<bool>());
      if (absent) {
        if (required) return InvalidArgumentError(Name(key) + ": not set");
        return dflt;
      }
      const Json& n = (*it)["number"];
      if (n.is_number_integer() || n.is_number_unsigned()) return n.get<std::int64_t>();
      if (n.is_number_float()) return static_cast<std::int64_t>(n.get<double>());
      return InvalidArgumentError(Name(key) + ".number: expected an integer, got " + n.dump());
    }
    if (it == obj_.end() || it->is_null()) {
      if (required) return InvalidArgumentError(Name(key) + ": missing");
      return dflt;
    }
    if (it->is_number_integer() || it->is_number_unsigned()) return it->get<std::int64_t>();
    if (it->is_number_float()) return static_cast<std::int64_t>(it->get<double>());
    return InvalidArgumentError(Name(key) + ": expected an integer, got " + it->dump());
  }
  Result<std::string> Str(const char* key, bool required) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) return InvalidArgumentError(Name(key) + ": missing");
      return std::string();
    }
    if (!it->is_string()) return InvalidArgumentError(Name(key) + ": expected a string, got " + it->dump());
    return it->get<std::string>();
  }
  // A state: a string (22.05), or from 23.11 (v0.0.40) a list of the base state and its flags
  // (["PENDING", "REQUEUED"]): the base state, the first.
  Result<std::string> State(const char* key, bool required) const {
    auto it = obj_.find(key);
    if (it != obj_.end() && it->is_array()) {
      if (it->empty() || !(*it)[0].is_string()) return InvalidArgumentError(Name(key) + "[0]: expected a state string");
      return (*it)[0].get<std::string>();
    }
    return Str(key, required);
  }
  Result<std::vector<std::string>> StrList(const char* key) const {
    std::vector<std::string> out;
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return out;
    if (!it->is_array()) return InvalidArgumentError(Name(key) + ": expected an array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) return InvalidArgumentError(Name(key) + "[" + std::to_string(i) + "]: expected a string");
      out.push_back((*it)[i].get<std::string>());
    }
    return out;
  }
  const Json* Get(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  // A nested object (23.11 groups fields: "cpus": {"maximum": 96}); its fields name path.key.
  // Absent (or null) and not required: an empty object.
  Result<Fields> Object(const char* key, bool required) const;

 private:
  const Json& obj_;
  std::string path_;
};

Result<Fields> Fields::Object(const char* key, bool required) const {
  static const Json kEmpty = Json::object();
  const Json* o = Get(key);
  if (o == nullptr || o->is_null()) {
    if (required) return InvalidArgumentError(Name(key) + ": missing");
    return Fields(kEmpty, Name(key));
  }
  if (!o->is_object()) return InvalidArgumentError(Name(key) + ": expected an object, got " + o->dump());
  return Fields(*o, Name(key));
}

}  // namespace

Result<GpuGres> ParseGpuGres(std::string_view text, const std::string& field) {
  GpuGres g;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.rfind("gres:", 0) == 0) item.remove_prefix(5);
    if (item.rfind("gres/", 0) == 0) item.remove_prefix(5);
    if (item.rfind("gpu", 0) != 0 || (item.size() > 3 && item[3] != ':' && item[3] != '=')) continue;
    if (const std::size_t paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
    // gpu:N | gpu:type:N | gpu=N (TRES form)
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t k = 0; k <= item.size(); ++k) {
      if (k == item.size() || item[k] == ':' || item[k] == '=') {
        parts.push_back(item.substr(start, k - start));
        start = k + 1;
      }
    }
    std::int64_t n = 0;
    if (parts.size() == 2 && ParseInt(parts[1], n)) {
      g.count = static_cast<int>(n);
    } else if (parts.size() == 2) {
      g.type = std::string(parts[1]);  // "gpu:h100" means one of them
      g.count = 1;
    } else if (parts.size() == 3 && ParseInt(parts[2], n)) {
      g.type = std::string(parts[1]);
      g.count = static_cast<int>(n);
    } else {
      return InvalidArgumentError(field + ": cannot read the GPU count of '" + std::string(item) + "'");
    }
    if (g.count < 0) return InvalidArgumentError(field + ": negative GPU count in '" + std::string(item) + "'");
    return g;
  }
  return g;
}

Result<std::vector<int>> ParseGresIndices(std::string_view text, const std::string& field) {
  std::vector<int> out;
  const std::size_t at = text.find("IDX:");
  if (at == std::string_view::npos) return out;
  std::string_view list = text.substr(at + 4);
  const std::size_t close = list.find(')');
  if (close != std::string_view::npos) list = list.substr(0, close);
  if (list == "N/A" || list.empty()) return out;
  std::size_t start = 0;
  for (std::size_t k = 0; k <= list.size(); ++k) {
    if (k < list.size() && list[k] != ',') continue;
    std::string_view item = list.substr(start, k - start);
    start = k + 1;
    const std::size_t dash = item.find('-');
    std::int64_t a = 0, b = 0;
    const bool ok = dash == std::string_view::npos ? ParseInt(item, a) && ParseInt(item, b)
                                                   : ParseInt(item.substr(0, dash), a) && ParseInt(item.substr(dash + 1), b);
    if (!ok || a < 0 || b < a || b > 63) {
      return InvalidArgumentError(field + ": bad device index list '" + std::string(list) + "'");
    }
    for (std::int64_t i = a; i <= b; ++i) out.push_back(static_cast<int>(i));
  }
  return out;
}

namespace {

constexpr std::size_t kMaxHostlist = 100'000;
// A host name is at most 255 characters (DNS; Linux allows 64), and Slurm's host lists have a
// bracket group per dimension of a node name (3 for a 3-D torus): without these limits a 100,000
// name range with a long tail took gigabytes, and thousands of groups overflowed the stack
// (ExpandHost recurses once per group); found running hand-written inputs through scontrol_fuzz.
constexpr std::size_t kMaxHostName = 255;
constexpr std::size_t kMaxBracketGroups = 8;

Status ExpandHost(std::string_view item, const std::string& field, std::vector<std::string>& out) {
  const std::size_t open = item.find('[');
  if (open == std::string_view::npos) {
    if (item.find(']') != std::string_view::npos) return InvalidArgumentError(field + ": unbalanced ']' in '" + std::string(item) + "'");
    if (item.size() > kMaxHostName) {
      return InvalidArgumentError(field + ": a host name longer than " + std::to_string(kMaxHostName) + " characters");
    }
    if (!item.empty()) out.emplace_back(item);
    return Status::Ok();
  }
  const std::size_t close = item.find(']', open);
  if (close == std::string_view::npos) return InvalidArgumentError(field + ": unbalanced '[' in '" + std::string(item) + "'");
  const std::string_view prefix = item.substr(0, open), ranges = item.substr(open + 1, close - open - 1);
  const std::string_view rest = item.substr(close + 1);
  std::size_t start = 0;
  for (std::size_t k = 0; k <= ranges.size(); ++k) {
    if (k < ranges.size() && ranges[k] != ',') continue;
    const std::string_view r = ranges.substr(start, k - start);
    start = k + 1;
    const std::size_t dash = r.find('-');
    const std::string_view lo = r.substr(0, dash), hi = dash == std::string_view::npos ? lo : r.substr(dash + 1);
    std::int64_t a = 0, b = 0;
    if (lo.empty() || !ParseInt(lo, a) || !ParseInt(hi, b) || a < 0 || b < a) {
      return InvalidArgumentError(field + ": bad range '" + std::string(r) + "' in '" + std::string(item) + "'");
    }
    if (b - a >= static_cast<std::int64_t>(kMaxHostlist)) return InvalidArgumentError(field + ": more than 100000 names");
    for (std::int64_t i = a; i <= b; ++i) {
      std::string num = std::to_string(i);
      if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');  // n[01-10]
      SEEDANCE_RETURN_IF_ERROR(ExpandHost(std::string(prefix) + num + std::string(rest), field, out));
      if (out.size() > kMaxHostlist) return InvalidArgumentError(field + ": more than 100000 names");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view text, const std::string& field) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t k = 0; k <= text.size(); ++k) {
    if (k < text.size()) {
      if (text[k] == '[') ++depth;
      if (text[k] == ']') --depth;
      if (depth < 0) return InvalidArgumentError(field + ": unbalanced ']' in '" + std::string(text) + "'");
      if (text[k] != ',' || depth > 0) continue;
    }
    const std::string_view item = text.substr(start, k - start);
    if (static_cast<std::size_t>(std::count(item.begin(), item.end(), '[')) > kMaxBracketGroups) {
      return InvalidArgumentError(field + ": more than " + std::to_string(kMaxBracketGroups) + " bracket groups in one host name");
    }
    SEEDANCE_RETURN_IF_ERROR(ExpandHost(item, field, out));
    start = k + 1;
  }
  return out;
}

bool SlurmNode::drained() const { return std::find(flags.begin(), flags.end(), "DRAIN") != flags.end(); }

bool SlurmNode::down() const {
  return state == "down" || state == "DOWN" || state == "future" ||
         std::find(flags.begin(), flags.end(), "NOT_RESPONDING") != flags.end();
}

bool SlurmNode::in_partition(const std::string& p) const {
  return p.empty() || std::find(partitions.begin(), partitions.end(), p) != partitions.end();
}

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  const std::string what = "squeue --json";
  SEEDANCE_ASSIGN_OR_RETURN(Json doc, ParseDocument(text, what, "jobs"));
  std::vector<SlurmJob> out;
  const Json& jobs = doc["jobs"];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Fields f(jobs[i], what + ": jobs[" + std::to_string(i) + "]");
    SEEDANCE_RETURN_IF_ERROR(f.CheckObject());
    SlurmJob j;
    SEEDANCE_ASSIGN_OR_RETURN(j.id, f.Int("job_id", true));
    if (j.id <= 0) return InvalidArgumentError(f.Name("job_id") + ": must be > 0");
    SEEDANCE_ASSIGN_OR_RETURN(j.name, f.Str("name", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.account, f.Str("account", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.partition, f.Str("partition", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.state, f.State("job_state", true));
    SEEDANCE_ASSIGN_OR_RETURN(j.reason, f.Str("state_reason", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.comment, f.Str("comment", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.nodes, f.Str("nodes", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.required_nodes, f.Str("required_nodes", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.features, f.Str("features", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string per_node, f.Str("tres_per_node", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string per_job, f.Str("tres_per_job", false));
    SEEDANCE_ASSIGN_OR_RETURN(j.gpus, ParseGpuGres(per_node, f.Name("tres_per_node")));
    if (j.gpus.count == 0) {
      SEEDANCE_ASSIGN_OR_RETURN(j.gpus, ParseGpuGres(per_job, f.Name("tres_per_job")));
      j.gpus_per_job = j.gpus.count > 0;
    }
    SEEDANCE_ASSIGN_OR_RETURN(auto detail, f.StrList("gres_detail"));
    for (std::size_t k = 0; k < detail.size(); ++k) {
      SEEDANCE_ASSIGN_OR_RETURN(auto idx, ParseGresIndices(detail[k], f.Name("gres_detail") + "[" + std::to_string(k) + "]"));
      j.gpu_indices.insert(j.gpu_indices.end(), idx.begin(), idx.end());
      j.node_gpu_indices.push_back(std::move(idx));
    }
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t nc, f.Int("node_count", false, 1));
    j.node_count = static_cast<int>(nc);
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t cpus, f.Int("cpus", false, 1));
    j.cpus = static_cast<int>(std::max<std::int64_t>(1, cpus));
    SEEDANCE_ASSIGN_OR_RETURN(j.memory_mib, f.Int("memory_per_node", false, 0));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t rc, f.Int("restart_cnt", false, 0));
    j.restarts = static_cast<int>(rc);
    SEEDANCE_ASSIGN_OR_RETURN(j.submit_s, f.Int("submit_time", false, 0));
    SEEDANCE_ASSIGN_OR_RETURN(j.start_s, f.Int("start_time", false, 0));
    SEEDANCE_ASSIGN_OR_RETURN(j.priority, f.Int("priority", false, 0));
    out.push_back(std::move(j));
  }
  std::sort(out.begin(), out.end(), [](const SlurmJob& a, const SlurmJob& b) { return a.id < b.id; });
  return out;
}

namespace {

// Slurm 23.11 (data_parser v0.0.40): a list "sinfo" of sinfo_data_t entries (SINFO_DATA in
// src/plugins/data_parser/v0.0.40/parsers.c): node.state a flag list (the base state first, upper
// case: ["MIXED", "DRAIN"]), nodes.nodes the node names, cpus.maximum, memory.maximum (MiB),
// gres.total, reason.description, partition.name. sinfo groups nodes that agree in the fields of
// its output format, and the GRES is not one of them by default: the controller reads `sinfo --json
// -N`, one entry per node and partition, and an entry naming several nodes is an error (their GPUs
// would be guessed). A node of several partitions has one entry per partition: merged here.
Result<std::vector<SlurmNode>> ParseSinfoEntries(const Json& entries, const std::string& what) {
  std::map<std::string, SlurmNode> by_name;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Fields f(entries[i], what + ": sinfo[" + std::to_string(i) + "]");
    SEEDANCE_RETURN_IF_ERROR(f.CheckObject());
    SEEDANCE_ASSIGN_OR_RETURN(Fields nodes, f.Object("nodes", true));
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<std::string> names, nodes.StrList("nodes"));
    if (names.empty()) continue;  // a partition without nodes
    if (names.size() > 1) {
      return InvalidArgumentError(nodes.Name("nodes") + ": " + std::to_string(names.size()) +
                                  " nodes in one entry (sinfo groups nodes whatever their GRES): read `sinfo --json -N`, "
                                  "one entry per node");
    }
    SlurmNode n;
    n.name = names.front();
    if (n.name.empty()) return InvalidArgumentError(nodes.Name("nodes") + "[0]: empty");
    SEEDANCE_ASSIGN_OR_RETURN(Fields node, f.Object("node", true));
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<std::string> state, node.StrList("state"));
    if (state.empty()) return InvalidArgumentError(node.Name("state") + ": missing or empty");
    // 22.05 spells the base state in lower case ("idle", "down"): the same here.
    n.state = state.front();
    std::transform(n.state.begin(), n.state.end(), n.state.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    n.flags.assign(state.begin() + 1, state.end());
    SEEDANCE_ASSIGN_OR_RETURN(Fields reason, f.Object("reason", false));
    SEEDANCE_ASSIGN_OR_RETURN(n.reason, reason.Str("description", false));
    SEEDANCE_ASSIGN_OR_RETURN(Fields gres, f.Object("gres", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string total, gres.Str("total", false));
    SEEDANCE_ASSIGN_OR_RETURN(n.gpus, ParseGpuGres(total, gres.Name("total")));
    SEEDANCE_ASSIGN_OR_RETURN(Fields cpus, f.Object("cpus", true));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t ncpu, cpus.Int("maximum", true));
    n.cpus = static_cast<int>(ncpu);
    SEEDANCE_ASSIGN_OR_RETURN(Fields memory, f.Object("memory", false));
    SEEDANCE_ASSIGN_OR_RETURN(n.memory_mib, memory.Int("maximum", false, 0));
    SEEDANCE_ASSIGN_OR_RETURN(Fields partition, f.Object("partition", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string part, partition.Str("name", false));
    auto it = by_name.try_emplace(n.name, std::move(n)).first;
    if (!part.empty() && std::find(it->second.partitions.begin(), it->second.partitions.end(), part) == it->second.partitions.end()) {
      it->second.partitions.push_back(part);
    }
  }
  std::vector<SlurmNode> out;
  for (auto& [name, n] : by_name) out.push_back(std::move(n));
  return out;
}

}  // namespace

Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  const std::string what = "sinfo --json";
  SEEDANCE_ASSIGN_OR_RETURN(Json doc, ParseDocument(text, what, "nodes", "sinfo"));
  if (!doc.contains("nodes")) return ParseSinfoEntries(doc["sinfo"], what);
  std::vector<SlurmNode> out;
  const Json& nodes = doc["nodes"];
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Fields f(nodes[i], what + ": nodes[" + std::to_string(i) + "]");
    SEEDANCE_RETURN_IF_ERROR(f.CheckObject());
    SlurmNode n;
    SEEDANCE_ASSIGN_OR_RETURN(n.name, f.Str("name", true));
    if (n.name.empty()) return InvalidArgumentError(f.Name("name") + ": empty");
    SEEDANCE_ASSIGN_OR_RETURN(n.state, f.Str("state", true));
    SEEDANCE_ASSIGN_OR_RETURN(n.flags, f.StrList("state_flags"));
    SEEDANCE_ASSIGN_OR_RETURN(n.reason, f.Str("reason", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string gres, f.Str("gres", false));
    SEEDANCE_ASSIGN_OR_RETURN(n.gpus, ParseGpuGres(gres, f.Name("gres")));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t cpus, f.Int("cpus", true));
    n.cpus = static_cast<int>(cpus);
    SEEDANCE_ASSIGN_OR_RETURN(n.memory_mib, f.Int("real_memory", false, 0));
    SEEDANCE_ASSIGN_OR_RETURN(n.partitions, f.StrList("partitions"));
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const SlurmNode& a, const SlurmNode& b) { return a.name < b.name; });
  return out;
}

Result<std::vector<JobGpuDetail>> ParseScontrolJobDetail(std::string_view text) {
  const std::string what = "scontrol show job -d";
  std::vector<JobGpuDetail> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    const std::string where = what + ": line " + std::to_string(line_no) + ": ";
    // Space-separated Key=Value tokens (values hold no spaces in the fields read here).
    std::vector<std::pair<std::string_view, std::string_view>> kv;
    for (std::string_view rest = line; !rest.empty();) {
      const std::size_t sp = rest.find(' ');
      const std::string_view tok = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view() : Trim(rest.substr(sp + 1));
      const std::size_t eq = tok.find('=');
      if (eq != std::string_view::npos) kv.emplace_back(tok.substr(0, eq), tok.substr(eq + 1));
    }
    if (kv.empty()) continue;
    if (kv.front().first == "JobId") {
      JobGpuDetail d;
      if (!ParseInt(kv.front().second, d.id) || d.id <= 0) {
        return InvalidArgumentError(where + "JobId: expected a positive integer, got '" + std::string(kv.front().second) + "'");
      }
      out.push_back(std::move(d));
      continue;
    }
    if (out.empty()) continue;  // text before the first job (none in practice)
    JobGpuDetail& d = out.back();
    if (kv.front().first == "JobState") {
      d.state = std::string(kv.front().second);
      continue;
    }
    if (kv.front().first != "Nodes") continue;
    SEEDANCE_ASSIGN_OR_RETURN(auto nodes, ExpandHostlist(kv.front().second, where + "Nodes"));
    std::vector<int> indices;
    for (const auto& [k, v] : kv) {
      if (k != "GRES" && k != "GRES_IDX") continue;
      // Entries are comma-separated, and so are the indices inside an entry's parentheses.
      int depth = 0;
      std::size_t start = 0;
      for (std::size_t i = 0; i <= v.size(); ++i) {
        if (i < v.size() && v[i] == '(') ++depth;
        if (i < v.size() && v[i] == ')') --depth;
        if (i < v.size() && (v[i] != ',' || depth > 0)) continue;
        const std::string_view entry = v.substr(start, i - start);
        start = i + 1;
        if (entry.rfind("gpu", 0) != 0 || (entry.size() > 3 && entry[3] != ':' && entry[3] != '(')) continue;
        SEEDANCE_ASSIGN_OR_RETURN(auto idx, ParseGresIndices(entry, where + std::string(k)));
        indices.insert(indices.end(), idx.begin(), idx.end());
      }
    }
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    for (const auto& n : nodes) {
      if (d.node_gpus.count(n)) return InvalidArgumentError(where + "Nodes: node " + n + " listed twice for job " + std::to_string(d.id));
      if (!indices.empty()) d.node_gpus[n] = indices;
    }
  }
  return out;
}

Result<std::vector<AcctRecord>> ParseSacctJson(std::string_view text) {
  const std::string what = "sacct --json";
  SEEDANCE_ASSIGN_OR_RETURN(Json doc, ParseDocument(text, what, "jobs"));
  std::vector<AcctRecord> out;
  const Json& jobs = doc["jobs"];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string path = what + ": jobs[" + std::to_string(i) + "]";
    const Fields f(jobs[i], path);
    SEEDANCE_RETURN_IF_ERROR(f.CheckObject());
    AcctRecord r;
    SEEDANCE_ASSIGN_OR_RETURN(r.job_id, f.Int("job_id", true));
    SEEDANCE_ASSIGN_OR_RETURN(r.cluster, f.Str("cluster", false));
    SEEDANCE_ASSIGN_OR_RETURN(r.account, f.Str("account", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string nodes, f.Str("nodes", false));
    if (nodes != "None assigned" && !nodes.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(r.nodes, ExpandHostlist(nodes, f.Name("nodes")));
      if (!r.nodes.empty()) r.node = r.nodes.front();
    }
    const Json* state = f.Get("state");
    if (state == nullptr || !state->is_object()) return InvalidArgumentError(f.Name("state") + ": missing or not an object");
    SEEDANCE_ASSIGN_OR_RETURN(r.state, Fields(*state, f.Name("state")).State("current", true));
    const Json* time = f.Get("time");
    if (time == nullptr || !time->is_object()) return InvalidArgumentError(f.Name("time") + ": missing or not an object");
    const Fields t(*time, f.Name("time"));
    SEEDANCE_ASSIGN_OR_RETURN(r.submit_s, t.Int("submission", false, 0));
    SEEDANCE_ASSIGN_OR_RETURN(r.start_s, t.Int("start", false, 0));  // null: never started
    SEEDANCE_ASSIGN_OR_RETURN(r.end_s, t.Int("end", false, 0));
    const Json* tres = f.Get("tres");
    if (tres != nullptr && tres->is_object() && tres->contains("allocated")) {
      const Json& alloc = (*tres)["allocated"];
      if (!alloc.is_array()) return InvalidArgumentError(f.Name("tres") + ".allocated: expected an array");
      for (std::size_t k = 0; k < alloc.size(); ++k) {
        const Fields a(alloc[k], f.Name("tres") + ".allocated[" + std::to_string(k) + "]");
        SEEDANCE_RETURN_IF_ERROR(a.CheckObject());
        SEEDANCE_ASSIGN_OR_RETURN(std::string type, a.Str("type", false));
        SEEDANCE_ASSIGN_OR_RETURN(std::string name, a.Str("name", false));
        if (type != "gres" || name.rfind("gpu", 0) != 0) continue;
        SEEDANCE_ASSIGN_OR_RETURN(std::int64_t count, a.Int("count", false, 0));
        if (name.size() > 4 && name[3] == ':') {
          r.gpu_type = name.substr(4);
          r.gpus = static_cast<int>(count);
        } else if (r.gpus == 0) {
          r.gpus = static_cast<int>(count);
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// "2026-12-02T13:47:08" (jobcomp writes the controller's local time; read as UTC) -> Unix s.
bool ParseSlurmTime(std::string_view s, std::int64_t& out) {
  std::tm tm{};
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return false;
  std::int64_t y, mo, d, h, mi, se;
  if (!ParseInt(s.substr(0, 4), y) || !ParseInt(s.substr(5, 2), mo) || !ParseInt(s.substr(8, 2), d) ||
      !ParseInt(s.substr(11, 2), h) || !ParseInt(s.substr(14, 2), mi) || !ParseInt(s.substr(17, 2), se)) {
    return false;
  }
  tm.tm_year = static_cast<int>(y - 1900);
  tm.tm_mon = static_cast<int>(mo - 1);
  tm.tm_mday = static_cast<int>(d);
  tm.tm_hour = static_cast<int>(h);
  tm.tm_min = static_cast<int>(mi);
  tm.tm_sec = static_cast<int>(se);
  out = static_cast<std::int64_t>(timegm(&tm));
  return true;
}

}  // namespace

Result<std::vector<AcctRecord>> ParseJobcomp(std::string_view text, const std::string& name) {
  std::vector<AcctRecord> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(line_no);
    AcctRecord r;
    bool have_id = false, have_start = false;
    std::string_view rest = line;
    while (!rest.empty()) {
      const std::size_t sp = rest.find(' ');
      std::string_view kv = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
      const std::size_t eq = kv.find('=');
      if (eq == std::string_view::npos) continue;  // a value with spaces (Name=a b): skip the tail
      const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
      if (key == "JobId") {
        if (!ParseInt(value, r.job_id)) return InvalidArgumentError(where + ": field JobId: '" + std::string(value) + "' is not a number");
        have_id = true;
      } else if (key == "JobState") {
        r.state = std::string(value);
      } else if (key == "Account") {
        r.account = std::string(value);
      } else if (key == "NodeList") {
        r.node = value == "(null)" ? std::string() : std::string(value.substr(0, value.find_first_of(",[")));
      } else if (key == "StartTime" || key == "EndTime") {
        std::int64_t t = 0;
        if (value == "Unknown" || value == "None") continue;
        if (!ParseSlurmTime(value, t)) {
          return InvalidArgumentError(where + ": field " + std::string(key) + ": '" + std::string(value) + "' is not YYYY-MM-DDTHH:MM:SS");
        }
        (key == "StartTime" ? r.start_s : r.end_s) = t;
        if (key == "StartTime") have_start = true;
      } else if (key == "Tres") {
        // cpu=1,mem=16000M,node=1,billing=1,gres/gpu=2,gres/gpu:h100=2
        std::string_view tres = value;
        while (!tres.empty()) {
          const std::size_t c = tres.find(',');
          std::string_view item = tres.substr(0, c);
          tres = c == std::string_view::npos ? std::string_view() : tres.substr(c + 1);
          if (item.rfind("gres/gpu", 0) != 0) continue;
          const std::size_t e2 = item.find('=');
          std::int64_t n = 0;
          if (e2 == std::string_view::npos || !ParseInt(item.substr(e2 + 1), n)) {
            return InvalidArgumentError(where + ": field Tres: bad GPU entry '" + std::string(item) + "'");
          }
          const std::string_view k = item.substr(0, e2);
          if (k.size() > 9 && k[8] == ':') {
            r.gpu_type = std::string(k.substr(9));
            r.gpus = static_cast<int>(n);
          } else if (r.gpus == 0) {
            r.gpus = static_cast<int>(n);
          }
        }
      }
    }
    if (!have_id) return InvalidArgumentError(where + ": field JobId: missing");
    if (!have_start) return InvalidArgumentError(where + ": field StartTime: missing");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace seedance::slurm

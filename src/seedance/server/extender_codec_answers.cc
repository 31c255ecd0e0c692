// The extender's answers (FilterResult, HostPriorityList, preemption and binding results), in the
// JSON text kube-scheduler decodes.

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "seedance/server/extender_codec.h"

namespace seedance::server {

using nlohmann::json;

namespace {

// A JSON string literal for `s`: printable ASCII is copied as it is (node names, reasons); anything
// else goes through nlohmann's escaping, invalid UTF-8 replaced as ReplyJson does.
// Whether `s` is written as is between quotes (printable ASCII, no quote, no backslash).
bool PlainJsonString(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
}

// Appends the pieces to `out` through one pointer into space reserved once: the writers below
// append a few short pieces per node name, and std::string's per-append bookkeeping (a size
// check, a length, a terminator) was most of their cost (extender_benchmark BM_CodecOnly).
class PieceWriter {
 public:
  PieceWriter(std::string& out, std::size_t extra) : out_(out), at_(out.size()) { out_.resize(at_ + extra); }
  ~PieceWriter() { out_.resize(at_); }
  PieceWriter(const PieceWriter&) = delete;
  PieceWriter& operator=(const PieceWriter&) = delete;
  void Put(std::string_view s) {
    std::memcpy(out_.data() + at_, s.data(), s.size());
    at_ += s.size();
  }
  void Put(char c) { out_[at_++] = c; }

 private:
  std::string& out_;
  std::size_t at_;
};

void AppendJsonString(std::string& out, std::string_view s) {
  if (PlainJsonString(s)) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out += json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

void AppendJsonStringMap(std::string& out, const std::map<std::string, std::string>& m) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonString(out, v);
  }
  out += '}';
}

}  // namespace

// Written directly, not through a DOM: a filter over thousands of nodes answers thousands of names,
// and the DOM's allocations were most of the answer's cost (extender_benchmark). Keys in the order
// nlohmann's object writes them (sorted), so both encoders give the same bytes.
std::string DumpFilterResult(const FilterResult& r) {
  std::string out;
  out.reserve(64 + r.node_names.size() * 24 + (r.failed.size() + r.failed_unresolvable.size()) * 64);
  out += "{\"Error\":";
  AppendJsonString(out, r.error);
  out += ",\"FailedAndUnresolvableNodes\":";
  AppendJsonStringMap(out, r.failed_unresolvable);
  out += ",\"FailedNodes\":";
  AppendJsonStringMap(out, r.failed);
  if (r.nodes.has_value()) {
    out += ",\"NodeNames\":null,\"Nodes\":{\"items\":[";
    for (std::size_t i = 0; i < r.nodes->size(); ++i) {
      if (i > 0) out += ',';
      out += (*r.nodes)[i].dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out += "],\"metadata\":{}}}";
  } else {
    out += ",\"NodeNames\":[";
    const auto plain = std::find_if_not(r.node_names.begin(), r.node_names.end(), PlainJsonString);
    std::size_t bytes = 0;
    for (auto it = r.node_names.begin(); it != plain; ++it) bytes += it->size() + 3;  // "name",
    {
      PieceWriter w(out, bytes);
      for (auto it = r.node_names.begin(); it != plain; ++it) {
        if (it != r.node_names.begin()) w.Put(',');
        w.Put('"');
        w.Put(*it);
        w.Put('"');
      }
    }
    for (auto it = plain; it != r.node_names.end(); ++it) {
      if (it != r.node_names.begin()) out += ',';
      AppendJsonString(out, *it);
    }
    out += "],\"Nodes\":null}";
  }
  return out;
}

std::string DumpHostPriorityList(const std::vector<HostPriority>& list) {
  std::string out;
  out.reserve(2 + list.size() * 40);
  out += '[';
  const auto plain = std::find_if_not(list.begin(), list.end(), [](const HostPriority& h) { return PlainJsonString(h.host); });
  constexpr std::string_view kHost = "{\"Host\":\"", kScore = "\",\"Score\":";
  std::size_t bytes = 0;
  for (auto it = list.begin(); it != plain; ++it) bytes += kHost.size() + it->host.size() + kScore.size() + 24;
  {
    PieceWriter w(out, bytes);
    for (auto it = list.begin(); it != plain; ++it) {
      if (it != list.begin()) w.Put(',');
      w.Put(kHost);
      w.Put(it->host);
      w.Put(kScore);
      const fmt::format_int score(it->score);
      w.Put(std::string_view(score.data(), score.size()));
      w.Put('}');
    }
  }
  for (auto it = plain; it != list.end(); ++it) {
    if (it != list.begin()) out += ',';
    out += "{\"Host\":";
    AppendJsonString(out, it->host);
    out += ",\"Score\":";
    out += fmt::format_int(it->score).str();
    out += '}';
  }
  out += ']';
  return out;
}

json EncodeFilterResult(const FilterResult& r) { return json::parse(DumpFilterResult(r)); }

json EncodeHostPriorityList(const std::vector<HostPriority>& list) { return json::parse(DumpHostPriorityList(list)); }

json EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims) {
  json m = json::object();
  for (const auto& [node, v] : victims) {
    json pods = json::array();
    for (const auto& uid : v.uids) pods.push_back(json{{"UID", uid}});
    m[node] = json{{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
  }
  return json{{"NodeNameToMetaVictims", std::move(m)}};
}

json EncodeBindingResult(std::string_view error) { return json{{"Error", std::string(error)}}; }

std::string FieldOf(const Status& status) {
  const std::string& m = status.message();
  const auto pos = m.find(": ");
  if (pos == std::string::npos) return "";
  std::string field = m.substr(0, pos);
  return field == "body" ? std::string() : field;
}

std::string ReasonOf(const Status& status) {
  const std::string& m = status.message();
  const auto pos = m.find(": ");
  return pos == std::string::npos ? m : m.substr(pos + 2);
}

}  // namespace seedance::server

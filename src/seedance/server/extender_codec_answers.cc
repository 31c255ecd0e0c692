// The extender's answers (FilterResult, HostPriorityList, preemption and binding results), in the
// JSON text kube-scheduler decodes.

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "seedance/server/extender_codec.h"
#include "seedance/server/extender_codec_internal.h"

namespace seedance::server {

using nlohmann::json;

namespace {

// Whether `s` is written as is between quotes (printable ASCII, no quote, no backslash), eight
// bytes at a time: it runs on every name of every answer.
bool PlainJsonString(std::string_view s) { return codec_internal::FirstSpecialByte(s, 0, /*name_bytes=*/false) == s.size(); }

// An answer's text, written through one pointer into space sized up front (grown only for an
// escaped string): the writers append a few short pieces per node name, and std::string's
// per-append bookkeeping (a size check, a length, a terminator) was most of their cost
// (extender_benchmark BM_CodecOnly).
class AnswerText {
 public:
  explicit AnswerText(std::size_t bytes) { out_.resize(bytes); }
  void Put(std::string_view s) {
    Room(s.size());
    std::memcpy(out_.data() + at_, s.data(), s.size());
    at_ += s.size();
  }
  void Put(char c) {
    Room(1);
    out_[at_++] = c;
  }
  // A JSON string literal for `s`: printable ASCII is copied as it is (node names, reasons);
  // anything else goes through nlohmann's escaping, invalid UTF-8 replaced as ReplyJson does.
  void PutString(std::string_view s) {
    if (!PlainJsonString(s)) return Put(json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace));
    Room(s.size() + 2);
    char* to = out_.data() + at_;
    to[0] = '"';
    const std::size_t n = s.size();
    if (n >= 8 && n <= 16) {  // a node name: two overlapping words inline, not a memcpy call
      std::memcpy(to + 1, s.data(), 8);
      std::memcpy(to + 1 + n - 8, s.data() + n - 8, 8);
    } else {
      std::memcpy(to + 1, s.data(), n);
    }
    to[n + 1] = '"';
    at_ += n + 2;
  }
  void PutStringMap(const std::map<std::string, std::string>& m) {
    Put('{');
    bool first = true;
    for (const auto& [k, v] : m) {
      if (!first) Put(',');
      first = false;
      PutString(k);
      Put(':');
      PutString(v);
    }
    Put('}');
  }
  std::string Take() && {
    out_.resize(at_);
    return std::move(out_);
  }

 private:
  void Room(std::size_t bytes) {
    if (at_ + bytes > out_.size()) out_.resize(std::max(out_.size() * 2, at_ + bytes));
  }
  std::string out_;
  std::size_t at_ = 0;
};

// Bytes of a string map written plain: "k":"v", per entry.
std::size_t PlainBytes(const std::map<std::string, std::string>& m) {
  std::size_t bytes = 2;
  for (const auto& [k, v] : m) bytes += k.size() + v.size() + 6;
  return bytes;
}

}  // namespace

// Written directly, not through a DOM: a filter over thousands of nodes answers thousands of names,
// and the DOM's allocations were most of the answer's cost (extender_benchmark). Keys in the order
// nlohmann's object writes them (sorted), so both encoders give the same bytes
// (extender_codec_oracle_test compares them).
std::string DumpFilterResult(const FilterResult& r) {
  std::size_t bytes = 128 + r.error.size() + PlainBytes(r.failed) + PlainBytes(r.failed_unresolvable);
  for (const std::string& name : r.node_names) bytes += name.size() + 3;  // "name",
  AnswerText out(bytes);
  out.Put("{\"Error\":");
  out.PutString(r.error);
  out.Put(",\"FailedAndUnresolvableNodes\":");
  out.PutStringMap(r.failed_unresolvable);
  out.Put(",\"FailedNodes\":");
  out.PutStringMap(r.failed);
  if (r.nodes.has_value()) {
    out.Put(",\"NodeNames\":null,\"Nodes\":{\"items\":[");
    for (std::size_t i = 0; i < r.nodes->size(); ++i) {
      if (i > 0) out.Put(',');
      out.Put((*r.nodes)[i].dump(-1, ' ', false, json::error_handler_t::replace));
    }
    out.Put("],\"metadata\":{}}}");
  } else {
    out.Put(",\"NodeNames\":[");
    for (std::size_t i = 0; i < r.node_names.size(); ++i) {
      if (i > 0) out.Put(',');
      out.PutString(r.node_names[i]);
    }
    out.Put("],\"Nodes\":null}");
  }
  return std::move(out).Take();
}

std::string DumpHostPriorityList(const std::vector<HostPriority>& list) {
  constexpr std::string_view kHost = "{\"Host\":", kScore = ",\"Score\":";
  std::size_t bytes = 2;
  for (const HostPriority& h : list) bytes += kHost.size() + h.host.size() + kScore.size() + 24;
  AnswerText out(bytes);
  out.Put('[');
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out.Put(',');
    out.Put(kHost);
    out.PutString(list[i].host);
    out.Put(kScore);
    const fmt::format_int score(list[i].score);
    out.Put(std::string_view(score.data(), score.size()));
    out.Put('}');
  }
  out.Put(']');
  return std::move(out).Take();
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

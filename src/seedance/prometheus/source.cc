#include "seedance/prometheus/source.h"

#include <httplib.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/core/json_depth.h"

namespace seedance::prometheus {
namespace {

using Json = nlohmann::json;

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  const std::size_t last = s.find_last_not_of(ws);
  s.erase(last == std::string::npos ? 0 : last + 1);
  return s;
}

// scheme://host[:port][/prefix] split; the prefix has no trailing slash.
struct Endpoint {
  bool tls = false;
  std::string host;
  int port = 0;
  std::string prefix;
};

Result<Endpoint> ParseUrl(const std::string& url) {
  Endpoint e;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    e.tls = true;
    e.port = 443;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    e.port = 80;
    rest = url.substr(7);
  } else {
    return InvalidArgumentError("--prometheus: '" + url + "' must start with http:// or https://");
  }
  if (const std::size_t slash = rest.find('/'); slash != std::string::npos) {
    e.prefix = rest.substr(slash);
    rest.resize(slash);
  }
  while (!e.prefix.empty() && e.prefix.back() == '/') e.prefix.pop_back();
  std::size_t colon = std::string::npos;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
    const std::size_t close = rest.find(']');
    if (close == std::string::npos) return InvalidArgumentError("--prometheus: '" + url + "': unclosed '['");
    e.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') colon = close + 1;
  } else {
    colon = rest.rfind(':');
    e.host = rest.substr(0, colon);
  }
  if (colon != std::string::npos) {
    char* end = nullptr;
    const long port = std::strtol(rest.c_str() + colon + 1, &end, 10);
    if (end == rest.c_str() + colon + 1 || *end != '\0' || port <= 0 || port > 65535) {
      return InvalidArgumentError("--prometheus: '" + url + "': bad port");
    }
    e.port = static_cast<int>(port);
  }
  if (e.host.empty()) return InvalidArgumentError("--prometheus: '" + url + "': no host");
  return e;
}

// Prometheus's API takes times as Unix seconds with a fraction.
std::string ApiTime(std::int64_t ms) { return fmt::format("{}.{:03d}", ms / 1000, static_cast<int>(ms % 1000)); }

std::string RangeText(const Chunk& c) { return fmt::format("[{}, {}]", ApiTime(c.start_ms), ApiTime(c.end_ms)); }

}  // namespace

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("--bearer-token-file " + path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = Trim(ss.str());
  if (token.empty()) return InvalidArgumentError("--bearer-token-file " + path + ": empty");
  if (token.find_first_of("\r\n") != std::string::npos) {
    return InvalidArgumentError("--bearer-token-file " + path + ": the token must be one line");
  }
  return token;
}

Status ReadBasicAuthFile(const std::string& path, SourceOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("--basic-auth-file " + path + ": cannot open");
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgumentError("--basic-auth-file " + path + ":1: expected user:password");
  }
  options.basic_user = line.substr(0, colon);
  options.basic_password = line.substr(colon + 1);
  return Status::Ok();
}

Result<std::vector<Chunk>> PlanChunks(std::int64_t from_ms, std::int64_t to_ms, std::int64_t step_ms,
                                      std::int64_t max_points) {
  if (step_ms <= 0) return InvalidArgumentError("--step: must be positive");
  if (from_ms >= to_ms) {
    return InvalidArgumentError(fmt::format("--from/--to: empty range (from {} >= to {})", ApiTime(from_ms), ApiTime(to_ms)));
  }
  if (max_points < 1 || max_points > kMaxPointsPerSeries) {
    return InvalidArgumentError(
        fmt::format("--chunk-points: {} is outside 1..{} (Prometheus's limit per series)", max_points, kMaxPointsPerSeries));
  }
  // Evaluation times from, from + step, ..., the last < to.
  const std::int64_t total = (to_ms - 1 - from_ms) / step_ms + 1;
  std::vector<Chunk> chunks;
  for (std::int64_t first = 0; first < total; first += max_points) {
    const std::int64_t n = std::min(max_points, total - first);
    chunks.push_back({from_ms + first * step_ms, from_ms + (first + n - 1) * step_ms});
  }
  return chunks;
}

const std::vector<Query>& DefaultQueries() {
  static const std::vector<Query> queries = [] {
    std::vector<Query> q;
    // dcgm-exporter: what the ledger's attribution reads (usage, memory, power, bandwidth), the
    // breaker's evidence and the audit's health fields.
    for (const char* m : {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED",
                          "DCGM_FI_DEV_FB_FREE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                          "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_PCIE_TX_BYTES",
                          "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_GPU_TEMP",
                          "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_EXP_GPU_HEALTH_STATUS"}) {
      q.push_back({m, "dcgm-exporter"});
    }
    // kube-state-metrics: GPU requests (extended resources are spelled nvidia_com_gpu), the pod's
    // labels and annotations (allow-listed in kube-state-metrics), node, phase, start and end.
    q.push_back({R"(kube_pod_container_resource_requests{resource=~"nvidia_com_.*"})", "kube-state-metrics"});
    // The history's shape (issue 38): submit times, owners (gangs, services, notebooks), node
    // labels (pools, spot), deployments' replicas and Jobs' creation.
    for (const char* m : {"kube_pod_labels", "kube_pod_annotations", "kube_pod_info", "kube_pod_status_phase",
                          "kube_pod_start_time", "kube_pod_completion_time", "kube_pod_created", "kube_pod_owner",
                          "kube_node_labels", "kube_replicaset_owner", "kube_deployment_spec_replicas",
                          "kube_job_created"}) {
      q.push_back({m, "kube-state-metrics"});
    }
    // cAdvisor pressure stall information (the advisor's input-stall evidence).
    for (const char* m : {"container_pressure_io_waiting_seconds_total", "container_pressure_io_stalled_seconds_total",
                          "container_pressure_cpu_waiting_seconds_total",
                          "container_pressure_memory_waiting_seconds_total"}) {
      q.push_back({m, "cAdvisor"});
    }
    return q;
  }();
  return queries;
}

namespace {
// A string field of an answer, or `dflt` when it is absent or not a string (json::value throws
// type_error on another type: `{"status": 1}` ended the process; found while writing
// prometheus_matrix_fuzz, whose corpus now has it).
std::string StringOr(const Json& o, const char* key, const char* dflt) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string(dflt);
}
}  // namespace

Status ParseMatrix(std::string_view body, std::string_view source, telemetry::SampleSink& sink, MatrixStats& stats) {
  if (Status depth = CheckJsonDepth(body); !depth.ok()) {
    return InvalidArgumentError(fmt::format("query {}: the answer: {}", source, depth.message()));
  }
  const Json doc = Json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgumentError(fmt::format("query {}: the answer is not JSON", source));
  }
  if (StringOr(doc, "status", "") != "success") {
    return InvalidArgumentError(fmt::format("query {}: status {}: {}: {}", source, StringOr(doc, "status", "?"),
                                            StringOr(doc, "errorType", "?"), StringOr(doc, "error", "")));
  }
  const auto data = doc.find("data");
  if (data == doc.end() || !data->is_object() || StringOr(*data, "resultType", "") != "matrix" ||
      !data->contains("result") || !(*data)["result"].is_array()) {
    return InvalidArgumentError(fmt::format("query {}: data.resultType must be matrix", source));
  }
  std::vector<std::pair<std::string, std::string>> owned;
  std::vector<telemetry::LabelView> labels;
  std::uint64_t line = 0;
  for (const Json& series : (*data)["result"]) {
    owned.clear();
    std::string name;
    if (const auto m = series.find("metric"); m != series.end() && m->is_object()) {
      for (const auto& [k, v] : m->items()) {
        if (!v.is_string()) continue;
        if (k == "__name__") {
          name = v.get<std::string>();
        } else {
          owned.emplace_back(k, v.get<std::string>());
        }
      }
    }
    const auto values = series.find("values");
    if (values == series.end() || !values->is_array()) continue;
    if (name.empty()) {  // an expression that dropped the name: nothing to file it under
      stats.dropped += values->size();
      continue;
    }
    ++stats.series;
    labels.clear();
    for (const auto& [k, v] : owned) labels.push_back({k, v});
    for (const Json& point : *values) {
      ++line;
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) {
        ++stats.dropped;
        continue;
      }
      telemetry::SampleView v;
      v.metric = name;
      v.type = telemetry::MetricType::kGauge;
      v.labels = labels;
      v.value = std::strtod(point[1].get_ref<const std::string&>().c_str(), nullptr);
      v.timestamp_ms = static_cast<std::int64_t>(std::llround(point[0].get<double>() * 1000.0));
      v.source = source;
      v.line = line;
      sink.OnSample(v);
      ++stats.samples;
    }
  }
  return Status::Ok();
}

Client::Client(SourceOptions options) : options_(std::move(options)) {}

Status Client::QueryRange(const std::string& query, const Chunk& chunk, std::int64_t step_ms,
                          telemetry::SampleSink& sink, MatrixStats& stats) const {
  SEEDANCE_ASSIGN_OR_RETURN(Endpoint e, ParseUrl(options_.url));
  std::unique_ptr<httplib::ClientImpl> cli;
  if (e.tls) {
    auto ssl = std::make_unique<httplib::SSLClient>(e.host, e.port);
    if (!options_.ca_file.empty()) ssl->set_ca_cert_path(options_.ca_file.c_str());
    ssl->enable_server_certificate_verification(!options_.insecure_skip_verify);
    cli = std::move(ssl);
  } else {
    cli = std::make_unique<httplib::ClientImpl>(e.host, e.port);
  }
  cli->set_connection_timeout(options_.connect_timeout_s, 0);
  cli->set_read_timeout(options_.read_timeout_s, 0);
  if (!options_.bearer_token.empty()) cli->set_bearer_token_auth(options_.bearer_token.c_str());
  if (!options_.basic_user.empty()) cli->set_basic_auth(options_.basic_user.c_str(), options_.basic_password.c_str());
  const std::string what = fmt::format("{} over {} step {}s", query, RangeText(chunk), ApiTime(step_ms));
  const httplib::Params params{{"query", query},
                               {"start", ApiTime(chunk.start_ms)},
                               {"end", ApiTime(chunk.end_ms)},
                               {"step", ApiTime(step_ms)}};
  auto r = cli->Get(e.prefix + "/api/v1/query_range", params, httplib::Headers{{"Accept", "application/json"}});
  if (!r) {
    std::string detail = httplib::to_string(r.error());
    if (e.tls && r.error() == httplib::Error::SSLServerVerification) {
      detail += " (pass --ca-file with the CA that signed it)";
    }
    return UnavailableError(fmt::format("query {}: GET {}/api/v1/query_range: {}", what, options_.url, detail));
  }
  if (r->status != 200) {
    // Prometheus answers errors as {"status":"error","errorType":...,"error":...}.
    const Json doc = CheckJsonDepth(r->body).ok() ? Json::parse(r->body, nullptr, false) : Json();
    std::string detail;
    if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
      detail = fmt::format(": {}: {}", doc.value("errorType", "?"), doc["error"].get<std::string>());
    } else if (!r->body.empty()) {
      detail = ": " + Trim(r->body.substr(0, 200));
    }
    std::string msg = fmt::format("query {}: HTTP {}{}", what, r->status, detail);
    if (r->status == 401 || r->status == 403) msg += " (check --bearer-token-file / --basic-auth-file)";
    if (r->status >= 400 && r->status < 500) return InvalidArgumentError(msg);
    return UnavailableError(msg);
  }
  return ParseMatrix(r->body, query, sink, stats);
}

Result<PullResult> Pull(const Client& client, const std::vector<Query>& queries, std::int64_t from_ms,
                        std::int64_t to_ms, std::int64_t step_ms, std::int64_t max_points,
                        telemetry::SampleSink& sink, const std::function<void(const PullProgress&)>& on_chunk) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<Chunk> chunks, PlanChunks(from_ms, to_ms, step_ms, max_points));
  PullResult result;
  result.per_query.resize(queries.size());
  for (std::size_t q = 0; q < queries.size(); ++q) {
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      MatrixStats stats;
      SEEDANCE_RETURN_IF_ERROR(client.QueryRange(queries[q].expr, chunks[c], step_ms, sink, stats));
      result.per_query[q].samples += stats.samples;
      result.per_query[q].dropped += stats.dropped;
      result.per_query[q].series = std::max(result.per_query[q].series, stats.series);
      if (on_chunk) on_chunk({q, queries.size(), c, chunks.size(), queries[q].expr, chunks[c], stats});
    }
    result.total.series += result.per_query[q].series;
    result.total.samples += result.per_query[q].samples;
    result.total.dropped += result.per_query[q].dropped;
  }
  return result;
}

}  // namespace seedance::prometheus

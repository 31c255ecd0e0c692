// The telemetry part of `seedance server`: see telemetry_service.h.
#include "seedance/server/telemetry_service.h"

#include <httplib.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "seedance/audit/admission.h"
#include "seedance/audit/audit.h"
#include "seedance/audit/telemetry_adapter.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/ledger.h"
#include "seedance/server/ingest.h"
#include "seedance/server/online.h"
#include "seedance/telemetry/parse.h"

namespace seedance::server {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kRetryAfterSeconds = "5";
constexpr std::size_t kRejectionsShown = 10;

std::string ScopeName(BreakerTrip::Scope s) {
  return s == BreakerTrip::Scope::kNamespace ? "namespace" : "job";
}

// "namespace:x" / "job:y": how breaker events are keyed in the ledger's breaker_actions.
std::string EventKey(BreakerTrip::Scope s, const std::string& key) {
  std::string k = ScopeName(s);
  k += ':';
  k += key;
  return k;
}

void ReplyStatus(httplib::Response& res, const Status& s, std::string_view field) {
  ReplyError(res, HttpStatusOf(s), field, s.message());
  if (s.code() == StatusCode::kUnavailable) res.set_header("Retry-After", std::string(kRetryAfterSeconds));
}

// The OTLP path a rejection names ("resourceMetrics[0].scopeMetrics[1]...: reason"), or "body".
std::string RejectionField(const telemetry::Rejection& r) {
  if (r.reason.rfind("resourceMetrics", 0) == 0) {
    auto colon = r.reason.find(": ");
    return r.reason.substr(0, colon);
  }
  return "body";
}

Json TripJson(const BreakerTrip& t) {
  return {{"scope", ScopeName(t.scope)},
          {"key", t.key},
          {"reason", t.reason},
          {"tripped", telemetry::FormatTimestamp(t.tripped_ms)},
          {"until", t.until_ms == 0 ? Json(nullptr) : Json(telemetry::FormatTimestamp(t.until_ms))}};
}

// Splits "http://host:port/path?x" into ("http://host:port", "/path?x").
std::pair<std::string, std::string> SplitUrl(const std::string& url) {
  auto scheme = url.find("://");
  auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (slash == std::string::npos) return {url, "/"};
  return {url.substr(0, slash), url.substr(slash)};
}

// A parsed JSON object body, or a 400 already answered.
std::optional<Json> JsonBody(const httplib::Request& req, httplib::Response& res) {
  Json body = Json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    ReplyError(res, 400, "body", "the body must be a JSON object");
    return std::nullopt;
  }
  return body;
}

class TelemetryService final : public Service {
 public:
  TelemetryService(App& app, TelemetryServiceOptions options)
      : app_(app), options_(std::move(options)) {
    Metrics& m = app_.metrics;
    m.DeclareCounter("seedance_ingest_samples_total", "Telemetry samples committed to the ledger, by input format.");
    m.DeclareCounter("seedance_ingest_rejected_total", "Telemetry samples or lines rejected, by input format.");
    m.DeclareGauge("seedance_ledger_lag_seconds", "Now minus the newest committed sample time.");
    m.DeclareCounter("seedance_breaker_trips_total", "Cost-breaker trips, by scope (namespace or job).");
    m.DeclareCounter("seedance_breaker_resets_total", "Cost-breaker resets, by scope.");
    m.DeclareGauge("seedance_cost_usd", "Cost per tenant over the last unit-cost period, USD.");
    m.DeclareGauge("seedance_unit_cost_usd_per_tflops_hour", "S1.4 unit cost: (C_total + C_opex) / effective TFLOPS x w_cooling x w_sla.");
    m.DeclareGauge("seedance_unit_cost_total_usd_per_hour", "Unit-cost input: ledger bill of the period per hour.");
    m.DeclareGauge("seedance_unit_cost_effective_tflops", "Unit-cost input: catalog peak x measured utilization.");
    m.DeclareGauge("seedance_unit_cost_breach_rate", "Unit-cost input: SLA-breach rate (ingested seedance_sla_breach_ratio).");
    m.DeclareGauge("seedance_unit_cost_w_cooling", "Unit-cost weight: 1 + 0.32 min(cooling$/100, 1).");
    m.DeclareGauge("seedance_unit_cost_w_sla", "Unit-cost weight: 1 + 2.1 breach_rate.");
    m.DeclareCounter("seedance_scrapes_total", "Scrapes of configured targets, by target and result.");
    m.DeclareCounter("seedance_audit_runs_total", "Audit runs over the ingested telemetry, by result.");
  }

  ~TelemetryService() override { Stop(); }

  void Register(httplib::Server& http) override {
    http.Post("/v1/metrics", [this](const httplib::Request& q, httplib::Response& r) { PostOtlp(q, r); });
    http.Post("/v1/ingest/prom", [this](const httplib::Request& q, httplib::Response& r) { PostProm(q, r); });
    http.Get("/v1/breaker", [this](const httplib::Request&, httplib::Response& r) { GetBreaker(r); });
    http.Post("/v1/breaker/reset", [this](const httplib::Request& q, httplib::Response& r) { PostReset(q, r); });
    http.Post("/v1/breaker/evaluate", [this](const httplib::Request&, httplib::Response& r) {
      auto trips = EvaluateBreakerNow();
      if (!trips.has_value()) return ReplyStatus(r, trips.error(), "");
      ReplyJson(r, 200, {{"tripped", *trips}, {"active", ActiveTrips()}});
    });
    http.Get("/v1/audit", [this](const httplib::Request&, httplib::Response& r) { ReplyJson(r, 200, HealthJson()); });
    http.Post("/v1/audit/run", [this](const httplib::Request&, httplib::Response& r) {
      Status s = RunAuditNow();
      if (!s.ok()) return ReplyStatus(r, s, "");
      ReplyJson(r, 200, HealthJson());
    });
    http.Get("/v1/unit-cost", [this](const httplib::Request&, httplib::Response& r) {
      auto u = RecalibrateNow();
      if (!u.has_value()) return ReplyStatus(r, u.error(), "");
      ReplyJson(r, 200, u->ToJson());
    });
    http.Get("/v1/cost", [this](const httplib::Request& q, httplib::Response& r) { GetCost(q, r); });
    http.Post("/v1/scrape/run", [this](const httplib::Request& q, httplib::Response& r) { PostScrape(q, r); });
  }

  Status CheckConfig(const ServerConfig& config) override {
    std::set<std::string> names;
    for (std::size_t i = 0; i < config.scrape.size(); ++i) {
      const ScrapeTarget& t = config.scrape[i];
      std::string at = fmt::format("server.scrape[{}].", i);
      if (t.name.empty() || !names.insert(t.name).second) {
        return InvalidArgumentError(at + "name: empty or repeated '" + t.name + "'");
      }
      if (t.kind != "exposition" && t.kind != "prometheus") {
        return InvalidArgumentError(at + "kind: must be exposition or prometheus, got '" + t.kind + "'");
      }
      if (t.url.rfind("http://", 0) != 0 && t.url.rfind("https://", 0) != 0) {
        return InvalidArgumentError(at + "url: must start with http:// or https://");
      }
      if (t.kind == "prometheus" && t.query.empty()) return InvalidArgumentError(at + "query: required for kind prometheus");
      if (t.interval_ms <= 0) return InvalidArgumentError(at + "interval_ms: must be > 0");
    }
    return Status::Ok();
  }

  void ApplyConfig(const std::shared_ptr<const ServerConfig>& /*config*/) override {
    // The loops read app_.config on every tick; scrapers are restarted on their new targets.
    if (!started_) return;
    StopScrapers();
    StartScrapers();
  }

  Status Start() override {
    if (app_.options.db.rfind("postgresql://", 0) == 0) {
      return FailedPreconditionError(fmt::format(
          "--db {}: telemetry ingest needs an SQLite ledger (PostgreSQL holds charges only)", app_.options.db));
    }
    SEEDANCE_ASSIGN_OR_RETURN(catalog_, cost::PriceTable::LoadFile(cost::BundledPriceTablePath()));
    if (!options_.audit_config_path.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(audit_config_, audit::LoadAuditConfig(options_.audit_config_path));
    }
    SEEDANCE_ASSIGN_OR_RETURN(writer_, IngestWriter::Open({.db = app_.options.db,
                                                             .busy_timeout_ms = options_.busy_timeout_ms,
                                                             .max_page_count = options_.max_db_pages,
                                                             .max_series = app_.config.Get()->limits.max_series}));
    SEEDANCE_ASSIGN_OR_RETURN(analysis_, ledger::Ledger::Open(app_.options.db));
    stopping_ = false;
    started_ = true;
    if (options_.background) {
      loop_ = std::thread([this] { Loop(); });
      StartScrapers();
    }
    return Status::Ok();
  }

  void Stop() override {
    {
      std::lock_guard lock(loop_mu_);
      stopping_ = true;
    }
    loop_cv_.notify_all();
    if (loop_.joinable()) loop_.join();
    StopScrapers();
    writer_.reset();  // commits what is queued
    std::lock_guard lock(analysis_mu_);
    analysis_.reset();
    started_ = false;
  }

 private:
  // ---- ingest ---------------------------------------------------------------------------------

  // Commits `batch` and answers; returns false when an error was answered.
  bool Commit(const std::string& source, const std::string& format,
              const std::shared_ptr<SampleBatch>& batch, std::uint64_t rejected,
              httplib::Response& res) {
    app_.metrics.Inc("seedance_ingest_rejected_total", {{"format", format}}, static_cast<double>(rejected));
    if (writer_ == nullptr) {
      ReplyStatus(res, UnavailableError("the ledger is not open"), "");
      return false;
    }
    Status s = writer_->Write(source, batch);
    if (!s.ok()) {
      app_.Log("error", "ingest_failed", {{"format", format}, {"error", s.message()}});
      ReplyStatus(res, s, "");
      return false;
    }
    app_.metrics.Inc("seedance_ingest_samples_total", {{"format", format}}, static_cast<double>(batch->size()));
    UpdateLag();
    if (!std::isnan(batch->sla_breach_ratio())) breach_rate_.store(batch->sla_breach_ratio());
    return true;
  }

  telemetry::ParseOptions ParseOptionsFor(std::string source) const {
    telemetry::ParseOptions o;
    o.source = std::move(source);
    o.default_timestamp_ms = app_.now_ms();
    return o;
  }

  void PostOtlp(const httplib::Request& req, httplib::Response& res) {
    std::string ct = req.get_header_value("Content-Type");
    if (ct.find("protobuf") != std::string::npos || (!ct.empty() && ct.find("json") == std::string::npos)) {
      ReplyError(res, 415, "Content-Type",
                 fmt::format("only OTLP/HTTP JSON is supported (Content-Type: application/json), got "
                             "'{}'; configure the exporter with encoding json", ct));
      return;
    }
    auto batch = std::make_shared<SampleBatch>();
    telemetry::ParseStats stats;
    telemetry::ParseOtlpJson(req.body, ParseOptionsFor("otlp"), *batch, stats);
    if (!batch->limit_error().empty()) {
      return ReplyError(res, 400, batch->limit_field() == "labels" ? "attributes" : batch->limit_field(),
                        batch->limit_error());
    }
    if (batch->size() == 0 && stats.rejected > 0) {
      app_.metrics.Inc("seedance_ingest_rejected_total", {{"format", "otlp"}}, static_cast<double>(stats.rejected));
      return ReplyError(res, 400, RejectionField(stats.rejections.front()), stats.rejections.front().ToString());
    }
    if (!Commit("otlp", "otlp", batch, stats.rejected, res)) return;
    if (stats.rejected == 0) return ReplyJson(res, 200, Json::object());
    std::string first;
    for (std::size_t i = 0; i < stats.rejections.size() && i < 3; ++i) {
      if (!first.empty()) first += "; ";
      first += stats.rejections[i].ToString();
    }
    ReplyJson(res, 200, {{"partialSuccess",
                          {{"rejectedDataPoints", std::to_string(stats.rejected)}, {"errorMessage", first}}}});
  }

  // Text format by Content-Type (OpenMetrics) or content (dcgm-exporter's DCGM_ names).
  static telemetry::InputFormat TextFormat(std::string_view content_type, std::string_view body) {
    if (content_type.find("application/openmetrics-text") != std::string_view::npos) {
      return telemetry::InputFormat::kOpenMetrics;
    }
    auto f = audit::DetectFormat(body.substr(0, 64 * 1024));
    return f == telemetry::InputFormat::kDcgm ? f : telemetry::InputFormat::kPrometheus;
  }

  // Parses exposition text into a batch; fills stats.
  std::shared_ptr<SampleBatch> ParseText(telemetry::InputFormat format, const std::string& source,
                                         std::string_view body, telemetry::ParseStats& stats) const {
    auto batch = std::make_shared<SampleBatch>();
    telemetry::ExpositionParser parser(format, ParseOptionsFor(source), *batch, stats);
    parser.Feed(body);
    parser.Finish();
    return batch;
  }

  void PostProm(const httplib::Request& req, httplib::Response& res) {
    auto format = TextFormat(req.get_header_value("Content-Type"), req.body);
    if (req.has_param("format")) {
      auto f = telemetry::ParseInputFormat(req.get_param_value("format"));
      if (!f.has_value() || *f == telemetry::InputFormat::kOtlpJson) {
        return ReplyError(res, 400, "format", "format must be prom, openmetrics or dcgm (OTLP: POST /v1/metrics)");
      }
      format = *f;
    }
    telemetry::ParseStats stats;
    std::string fmt_name(telemetry::InputFormatName(format));
    auto batch = ParseText(format, "prom", req.body, stats);
    if (!batch->limit_error().empty()) return ReplyError(res, 400, batch->limit_field(), batch->limit_error());
    if (batch->size() == 0 && stats.rejected > 0) {
      app_.metrics.Inc("seedance_ingest_rejected_total", {{"format", fmt_name}}, static_cast<double>(stats.rejected));
      const auto& r = stats.rejections.front();
      return ReplyError(res, 400, fmt::format("line {}", r.line), r.ToString());
    }
    if (!Commit("prom", fmt_name, batch, stats.rejected, res)) return;
    Json rej = Json::array();
    for (std::size_t i = 0; i < stats.rejections.size() && i < kRejectionsShown; ++i) {
      rej.push_back(stats.rejections[i].ToString());
    }
    ReplyJson(res, 200, {{"format", fmt_name}, {"accepted", batch->size()}, {"rejected", stats.rejected},
                         {"missing", stats.missing}, {"rejections", rej}});
  }

  void UpdateLag() {
    if (writer_ == nullptr) return;
    std::int64_t newest = writer_->newest_committed_ms();
    if (newest == telemetry::kNoTimestamp) return;
    app_.metrics.Set("seedance_ledger_lag_seconds", {},
                     static_cast<double>(app_.now_ms() - newest) / 1000.0);
  }

  // ---- scrapes --------------------------------------------------------------------------------

  // One scrape of `t`: its samples committed under the target's name. Returns (accepted, rejected).
  Result<std::pair<std::size_t, std::uint64_t>> ScrapeOnce(const ScrapeTarget& t) {
    auto [base, path] = SplitUrl(t.url);
    httplib::Client cli(base);
    cli.set_connection_timeout(5);
    cli.set_read_timeout(30);
    std::shared_ptr<SampleBatch> batch;
    telemetry::ParseStats stats;
    const std::int64_t now = app_.now_ms();
    if (t.kind == "exposition") {
      auto r = cli.Get(path);
      if (!r) return UnavailableError(t.name + ": GET " + t.url + ": " + httplib::to_string(r.error()));
      if (r->status != 200) return UnavailableError(t.name + ": GET " + t.url + ": HTTP " + std::to_string(r->status));
      batch = ParseText(TextFormat(r->get_header_value("Content-Type"), r->body), t.name, r->body, stats);
    } else {
      std::int64_t step_s = std::max<std::int64_t>(1, t.interval_ms / 1000);
      httplib::Params params{{"query", t.query},
                             {"start", std::to_string(now / 1000 - step_s)},
                             {"end", std::to_string(now / 1000)},
                             {"step", std::to_string(step_s)}};
      std::string api = path == "/" ? std::string() : path;
      if (!api.empty() && api.back() == '/') api.pop_back();
      auto r = cli.Get(api + "/api/v1/query_range", params, httplib::Headers{});
      if (!r) return UnavailableError(t.name + ": query_range: " + httplib::to_string(r.error()));
      if (r->status != 200) return UnavailableError(t.name + ": query_range: HTTP " + std::to_string(r->status));
      SEEDANCE_ASSIGN_OR_RETURN(batch, MatrixToBatch(t.name, r->body));
    }
    if (!batch->limit_error().empty()) return InvalidArgumentError(t.name + ": " + batch->limit_error());
    if (writer_ == nullptr) return UnavailableError("the ledger is not open");
    SEEDANCE_RETURN_IF_ERROR(writer_->Write(t.name, batch));
    std::string fmt_name = t.kind == "exposition" ? "scrape" : "query_range";
    app_.metrics.Inc("seedance_ingest_samples_total", {{"format", fmt_name}}, static_cast<double>(batch->size()));
    app_.metrics.Inc("seedance_ingest_rejected_total", {{"format", fmt_name}}, static_cast<double>(stats.rejected));
    UpdateLag();
    return std::pair<std::size_t, std::uint64_t>{batch->size(), stats.rejected};
  }

  // Prometheus's query_range answer (resultType matrix; values [unix s, "string"], "NaN" and
  // "+Inf" included) as samples: metric name __name__, else the target's name.
  static Result<std::shared_ptr<SampleBatch>> MatrixToBatch(const std::string& target, const std::string& body) {
    Json doc = Json::parse(body, nullptr, false);
    if (doc.is_discarded()) return InvalidArgumentError(target + ": query_range: invalid JSON");
    if (doc.value("status", "") != "success") {
      return InvalidArgumentError(target + ": query_range: status " + doc.value("status", "?") + ": " + doc.value("error", ""));
    }
    const Json& data = doc["data"];
    if (!data.is_object() || data.value("resultType", "") != "matrix" || !data["result"].is_array()) {
      return InvalidArgumentError(target + ": query_range: data.resultType must be matrix");
    }
    auto batch = std::make_shared<SampleBatch>();
    std::vector<std::pair<std::string, std::string>> owned;
    std::vector<telemetry::LabelView> labels;
    std::uint64_t line = 0;
    for (const Json& series : data["result"]) {
      owned.clear();
      std::string name = target;
      if (series.contains("metric") && series["metric"].is_object()) {
        for (const auto& [k, v] : series["metric"].items()) {
          if (!v.is_string()) continue;
          if (k == "__name__") {
            name = v.get<std::string>();
          } else {
            owned.emplace_back(k, v.get<std::string>());
          }
        }
      }
      labels.clear();
      for (const auto& [k, v] : owned) labels.push_back({k, v});
      if (!series.contains("values") || !series["values"].is_array()) continue;
      for (const Json& point : series["values"]) {
        ++line;
        if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) continue;
        telemetry::SampleView v;
        v.metric = name;
        v.type = telemetry::MetricType::kGauge;
        v.labels = labels;
        v.value = std::strtod(point[1].get<std::string>().c_str(), nullptr);
        v.timestamp_ms = static_cast<std::int64_t>(std::llround(point[0].get<double>() * 1000.0));
        v.source = target;
        v.line = line;
        batch->OnSample(v);
      }
    }
    return batch;
  }

  void ScrapeAndCount(const ScrapeTarget& t) {
    auto r = ScrapeOnce(t);
    app_.metrics.Inc("seedance_scrapes_total", {{"target", t.name}, {"result", r.has_value() ? "ok" : "error"}});
    if (!r.has_value()) app_.Log("warn", "scrape_failed", {{"target", t.name}, {"error", r.error().message()}});
  }

  void PostScrape(const httplib::Request& req, httplib::Response& res) {
    auto body = JsonBody(req, res);
    if (!body.has_value()) return;
    if (!body->contains("target") || !(*body)["target"].is_string()) {
      return ReplyError(res, 400, "target", "target must be the name of a configured scrape target");
    }
    std::string name = (*body)["target"];
    auto cfg = app_.config.Get();
    for (const ScrapeTarget& t : cfg->scrape) {
      if (t.name != name) continue;
      auto r = ScrapeOnce(t);
      app_.metrics.Inc("seedance_scrapes_total", {{"target", t.name}, {"result", r.has_value() ? "ok" : "error"}});
      if (!r.has_value()) return ReplyStatus(res, r.error(), "");
      return ReplyJson(res, 200, {{"target", name}, {"accepted", r->first}, {"rejected", r->second}});
    }
    ReplyError(res, 404, "target", fmt::format("no scrape target named '{}'", name));
  }

  void StartScrapers() {
    auto cfg = app_.config.Get();
    std::lock_guard lock(scrape_mu_);
    scrapers_stop_ = false;
    for (const ScrapeTarget& t : cfg->scrape) {
      scrapers_.emplace_back([this, t] {
        std::unique_lock lk(scrape_mu_);
        while (!scrapers_stop_) {
          lk.unlock();
          ScrapeAndCount(t);
          lk.lock();
          scrape_cv_.wait_for(lk, std::chrono::milliseconds(t.interval_ms), [this] { return scrapers_stop_; });
        }
      });
    }
  }

  void StopScrapers() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(scrape_mu_);
      scrapers_stop_ = true;
      threads.swap(scrapers_);
    }
    scrape_cv_.notify_all();
    for (auto& t : threads) t.join();
  }

  // ---- breaker --------------------------------------------------------------------------------

  Json ActiveTrips() const {
    Json arr = Json::array();
    const std::int64_t now = app_.now_ms();
    for (const auto& t : app_.breaker.Snapshot()) {
      if (t.until_ms != 0 && now >= t.until_ms) continue;
      arr.push_back(TripJson(t));
    }
    return arr;
  }

  void GetBreaker(httplib::Response& res) { ReplyJson(res, 200, {{"trips", ActiveTrips()}}); }

  // One evaluation: new crossings trip the board and are recorded in the ledger. A key trips at
  // most once per hour of cost: a reset or an expired cool-down holds until a later hour crosses.
  Result<Json> EvaluateBreakerNow() {
    std::lock_guard lock(analysis_mu_);
    if (analysis_ == nullptr) return UnavailableError("the ledger is not open");
    auto cfg = app_.config.Get();
    const std::int64_t now = app_.now_ms();
    SEEDANCE_ASSIGN_OR_RETURN(auto crossings, EvaluateBreakerOnline(*analysis_, *cfg, catalog_, now));
    Json tripped = Json::array();
    for (std::size_t i = 0; i < crossings.size(); ++i) {
      const BreakerCrossing& c = crossings[i];
      bool newest_of_key = i + 1 == crossings.size() || crossings[i + 1].trip.scope != c.trip.scope ||
                           crossings[i + 1].trip.key != c.trip.key;
      if (!newest_of_key) continue;
      std::string key = EventKey(c.trip.scope, c.trip.key);
      auto it = tripped_hour_.find(key);
      if (it != tripped_hour_.end() && it->second >= c.hour_ms) continue;
      tripped_hour_[key] = c.hour_ms;
      app_.breaker.Trip(c.trip);
      SEEDANCE_RETURN_IF_ERROR(analysis_->RecordBreakerAction(key, c.hour_ms, c.cost, c.threshold, true, c.trip.reason));
      app_.metrics.Inc("seedance_breaker_trips_total", {{"scope", ScopeName(c.trip.scope)}});
      app_.Log("warn", "breaker_tripped", {{"scope", ScopeName(c.trip.scope)}, {"key", c.trip.key}, {"reason", c.trip.reason}});
      tripped.push_back(TripJson(c.trip));
    }
    SEEDANCE_RETURN_IF_ERROR(analysis_->Flush());
    return tripped;
  }

  void PostReset(const httplib::Request& req, httplib::Response& res) {
    auto body = JsonBody(req, res);
    if (!body.has_value()) return;
    if (body->size() != 1 || !(body->contains("namespace") || body->contains("job"))) {
      return ReplyError(res, 400, "body", R"(give exactly one of {"namespace":"x"} or {"job":"y"})");
    }
    auto scope = body->contains("namespace") ? BreakerTrip::Scope::kNamespace : BreakerTrip::Scope::kJob;
    std::string field = ScopeName(scope);
    const Json& v = (*body)[field];
    if (!v.is_string() || v.get<std::string>().empty()) {
      return ReplyError(res, 400, field, field + " must be a non-empty string");
    }
    std::string key = v.get<std::string>();
    bool cleared = app_.breaker.Reset(scope, key);
    {
      std::lock_guard lock(analysis_mu_);
      if (analysis_ == nullptr) return ReplyStatus(res, UnavailableError("the ledger is not open"), "");
      const std::int64_t now = app_.now_ms();
      // breaker_actions is keyed by (job, hour_ms): a reset row carries its exact time (not an
      // hour start) so that it never replaces the trip it clears; paused = 0 marks it.
      Status s = analysis_->RecordBreakerAction(EventKey(scope, key), now, Money(), Money(), false,
                                                "reset by POST /v1/breaker/reset");
      if (s.ok()) s = analysis_->Flush();
      if (!s.ok()) return ReplyStatus(res, s, "");
    }
    app_.metrics.Inc("seedance_breaker_resets_total", {{"scope", field}});
    app_.Log("info", "breaker_reset", {{"scope", field}, {"key", key}, {"was_active", cleared}});
    ReplyJson(res, 200, {{"scope", field}, {"key", key}, {"cleared", cleared}});
  }

  // ---- audit ----------------------------------------------------------------------------------

  Status RunAuditNow() {
    std::lock_guard lock(analysis_mu_);
    if (analysis_ == nullptr) return UnavailableError("the ledger is not open");
    SEEDANCE_RETURN_IF_ERROR(analysis_->Flush());
    auto verdicts = RunAuditOnline(*analysis_, audit_config_, admission_, app_.now_ms());
    app_.metrics.Inc("seedance_audit_runs_total", {{"result", verdicts.has_value() ? "ok" : "error"}});
    if (!verdicts.has_value()) return verdicts.error();
    for (auto& [node, h] : *verdicts) app_.health.Set(node, std::move(h));
    return Status::Ok();
  }

  Json HealthJson() const {
    Json nodes = Json::object();
    for (const auto& [node, h] : app_.health.Snapshot()) {
      nodes[node] = {{"state", std::string(audit::AdmissionStateName(h.state))},
                     {"reason", h.reason},
                     {"grade_weight", h.grade_weight},
                     {"updated", telemetry::FormatTimestamp(h.updated_ms)}};
    }
    return {{"nodes", nodes}};
  }

  // ---- unit cost and cost ---------------------------------------------------------------------

  Result<UnitCost> RecalibrateNow() {
    std::lock_guard lock(analysis_mu_);
    if (analysis_ == nullptr) return UnavailableError("the ledger is not open");
    auto cfg = app_.config.Get();
    const std::int64_t now = app_.now_ms();
    SEEDANCE_ASSIGN_OR_RETURN(UnitCost u, ComputeUnitCost(*analysis_, *cfg, catalog_, breach_rate_.load(), now));
    Metrics& m = app_.metrics;
    m.Set("seedance_unit_cost_usd_per_tflops_hour", {}, u.usd_per_tflops_hour);
    m.Set("seedance_unit_cost_total_usd_per_hour", {}, u.total_usd_per_hour);
    m.Set("seedance_unit_cost_effective_tflops", {}, u.effective_tflops);
    m.Set("seedance_unit_cost_breach_rate", {}, u.breach_rate);
    m.Set("seedance_unit_cost_w_cooling", {}, u.w_cooling);
    m.Set("seedance_unit_cost_w_sla", {}, u.w_sla);
    SEEDANCE_ASSIGN_OR_RETURN(auto tenants, analysis_->CostByTenant(u.from_ms, u.to_ms));
    for (const auto& row : tenants) m.Set("seedance_cost_usd", {{"tenant", row.key}}, ToUsd(row.cost));
    return u;
  }

  void GetCost(const httplib::Request& req, httplib::Response& res) {
    std::string by = req.has_param("by") ? req.get_param_value("by") : "tenant";
    if (by != "tenant" && by != "namespace" && by != "node") {
      return ReplyError(res, 400, "by", fmt::format("by must be tenant, namespace or node, got '{}'", by));
    }
    auto dim = ledger::ParseDimension(by);
    const std::int64_t now = app_.now_ms();
    std::int64_t range[2] = {0, now + 1};
    const char* names[2] = {"from", "to"};
    for (int i = 0; i < 2; ++i) {
      if (!req.has_param(names[i])) continue;
      auto t = telemetry::ParseTimestamp(req.get_param_value(names[i]));
      if (!t.has_value()) return ReplyError(res, 400, names[i], t.error().message());
      range[i] = *t;
    }
    if (range[0] >= range[1]) return ReplyError(res, 400, "from", "from must be before to");
    std::lock_guard lock(analysis_mu_);
    if (analysis_ == nullptr) return ReplyStatus(res, UnavailableError("the ledger is not open"), "");
    auto report = CostReport(*analysis_, *app_.config.Get(), catalog_, *dim, range[0], range[1]);
    if (!report.has_value()) return ReplyStatus(res, report.error(), "");
    ReplyJson(res, 200, *report);
  }

  // ---- background loop ------------------------------------------------------------------------

  void Loop() {
    std::int64_t next_breaker = 0, next_audit = 0, next_unit = 0;
    std::unique_lock lock(loop_mu_);
    while (!stopping_) {
      lock.unlock();
      auto cfg = app_.config.Get();
      const std::int64_t now = app_.now_ms();
      UpdateLag();
      auto due = [now](std::int64_t& next, std::int64_t interval) {
        if (now < next) return false;
        next = now + std::max<std::int64_t>(interval, 1'000);
        return true;
      };
      if (due(next_breaker, cfg->breaker_interval_ms)) {
        auto r = EvaluateBreakerNow();
        if (!r.has_value()) app_.Log("warn", "breaker_failed", {{"error", r.error().message()}});
      }
      if (due(next_audit, cfg->audit_interval_ms)) {
        Status s = RunAuditNow();
        if (!s.ok()) app_.Log("warn", "audit_failed", {{"error", s.message()}});
      }
      if (due(next_unit, cfg->unit_cost_period_ms)) {
        auto u = RecalibrateNow();
        if (!u.has_value()) app_.Log("warn", "unit_cost_failed", {{"error", u.error().message()}});
      }
      lock.lock();
      loop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
    }
  }

  App& app_;
  TelemetryServiceOptions options_;
  cost::PriceTable catalog_;
  audit::AuditConfig audit_config_;
  std::unique_ptr<IngestWriter> writer_;
  bool started_ = false;
  std::atomic<double> breach_rate_{0.0};

  std::mutex analysis_mu_;  // guards analysis_, admission_, tripped_hour_
  std::unique_ptr<ledger::Ledger> analysis_;
  audit::AdmissionLedger admission_;
  std::map<std::string, std::int64_t> tripped_hour_;

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stopping_ = false;
  std::thread loop_;

  std::mutex scrape_mu_;
  std::condition_variable scrape_cv_;
  bool scrapers_stop_ = false;
  std::vector<std::thread> scrapers_;
};

}  // namespace

std::unique_ptr<Service> MakeTelemetryService(App& app, TelemetryServiceOptions options) {
  return std::make_unique<TelemetryService>(app, std::move(options));
}

std::unique_ptr<Service> MakeTelemetryService(App& app) {
  return MakeTelemetryService(app, TelemetryServiceOptions{});
}

}  // namespace seedance::server

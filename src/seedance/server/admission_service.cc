// /v1/workloads: the tenancy Admitter (the admission step `cost-benchmark --tenancy` and
// `bench kueue` drive in simulation) driven online over HTTP, with the server's wall clock.
//
//   POST /v1/workloads           {"workloads":[{"name","tenant","priority","tier","request":{res: qty},
//                                  "creation_time"}]}      submit, then one admission cycle
//   POST /v1/workloads/finished  {"workloads":["name",...]}  an admitted workload ended
//   POST /v1/workloads/evicted   {"workloads":["name",...]}  an evicted workload left its node
//   GET  /v1/workloads/stats
// Every write answers with the decisions it caused, in decision order:
//   {"decisions":[{"kind":"admit","name":..,"borrowing":false},{"kind":"evict","name":..,"for":..}],
//    "pending":N,"admitted":M}
// so a client (Kueue's test runner in `bench kueue --online`, or a Slurm/Kueue adapter) acts on
// them without polling. Quota admission only: node placement is the extender's (kube-scheduler
// calls /extender/* for the pods of an admitted workload), so the environment here answers that
// every workload can be placed, as in Kueue's own scenario.

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <httplib.h>

#include "seedance/server/app.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/quota.h"

namespace seedance::server {
namespace {

using nlohmann::json;
using tenancy::AdmissionDecision;

constexpr std::size_t kMaxBatch = 10'000;        // workloads per request
constexpr std::size_t kMaxNameBytes = 253;       // a Kubernetes object name

// The driver side the Admitter asks: no nodes here (see the file comment); running state from
// the admission records (no checkpoint telemetry: a preemption is assumed to lose all the work
// since admission).
class OnlineEnv final : public tenancy::AdmissionEnv {
 public:
  explicit OnlineEnv(const std::unordered_map<std::int64_t, double>& admitted_at, double now)
      : admitted_at_(admitted_at), now_(now) {}
  tenancy::RunningState Running(std::int64_t id) const override {
    tenancy::RunningState s;
    auto it = admitted_at_.find(id);
    if (it != admitted_at_.end()) {
      s.admitted_at_s = it->second;
      s.executed_s = std::max(0.0, now_ - it->second);
      s.lost_if_preempted = s.executed_s;
    }
    return s;
  }
  bool CanPlace(const tenancy::WorkloadRequest& /*w*/) override { return true; }
  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest& /*w*/,
                                                         std::span<const tenancy::VictimCandidate> /*c*/) override {
    return std::nullopt;  // quota preemption only; nodes are the extender's
  }

 private:
  const std::unordered_map<std::int64_t, double>& admitted_at_;
  double now_;
};

struct BadField {
  std::string field, message;
};

class AdmissionService final : public Service {
 public:
  explicit AdmissionService(App& app) : app_(app) {
    app_.metrics.DeclareCounter("seedance_admission_decisions_total",
                                "Admission decisions of /v1/workloads by kind (admit, evict).");
    app_.metrics.DeclareGauge("seedance_admission_pending", "Workloads waiting for admission.");
    app_.metrics.DeclareGauge("seedance_admission_admitted", "Workloads admitted and not finished.");
    app_.metrics.DeclareHistogram("seedance_admission_cycle_seconds",
                                  "Wall time of one /v1/workloads request's admission cycle.",
                                  {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3});
    Status st = Rebuild(*app_.config.Get());
    if (!st.ok()) app_.Log("error", "admission_config", {{"error", st.message()}});
  }

  void Register(httplib::Server& http) override {
    http.Post("/v1/workloads", [this](const httplib::Request& req, httplib::Response& res) { Submit(req, res); });
    http.Post("/v1/workloads/finished",
              [this](const httplib::Request& req, httplib::Response& res) { Release(req, res, /*evicted=*/false); });
    http.Post("/v1/workloads/evicted",
              [this](const httplib::Request& req, httplib::Response& res) { Release(req, res, /*evicted=*/true); });
    http.Get("/v1/workloads/stats", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      json body = {{"mode", mode_name_},
                   {"pending", admitter_ ? admitter_->pending() : 0},
                   {"admitted", admitted_at_.size()},
                   {"known", by_name_.size()}};
      if (admitter_) {
        const auto& s = admitter_->stats();
        body["cycles"] = s.cycles;
        body["admissions"] = s.admitted;
        body["evictions"] = s.evictions;
      }
      ReplyJson(res, 200, body);
    });
  }

  Status CheckConfig(const ServerConfig& config) override {
    if (!tenancy::ParseTenancyMode(config.admission_mode))
      return InvalidArgumentError("server.admission_mode: unknown mode '" + config.admission_mode +
                                  "' (strict, borrowing, seedance, kueue)");
    auto book = tenancy::QuotaBook::Build(config.tenancy.tenants, /*allow_borrowing=*/true);
    if (!book.has_value()) return book.error();
    return Status::Ok();
  }

  // A new quota takes effect at once when no workload is known; otherwise the running book
  // stays until the queue drains (the Admitter's usage cannot be carried over to new quotas
  // without re-deciding what is admitted), and the reload says so in the log.
  void ApplyConfig(const std::shared_ptr<const ServerConfig>& config) override {
    std::lock_guard lock(mu_);
    if (!by_name_.empty()) {
      deferred_ = config;
      app_.Log("warn", "admission_config_deferred",
               {{"reason", "workloads are queued or admitted; the new quotas apply when they are done"},
                {"known", by_name_.size()}});
      return;
    }
    Status st = RebuildLocked(*config);
    if (!st.ok()) app_.Log("error", "admission_config", {{"error", st.message()}});
  }

 private:
  Status Rebuild(const ServerConfig& config) {
    std::lock_guard lock(mu_);
    return RebuildLocked(config);
  }

  Status RebuildLocked(const ServerConfig& config) {
    auto mode = tenancy::ParseTenancyMode(config.admission_mode);
    if (!mode) return InvalidArgumentError("server.admission_mode: unknown mode '" + config.admission_mode + "'");
    auto book = tenancy::QuotaBook::Build(config.tenancy.tenants, /*allow_borrowing=*/*mode != tenancy::TenancyMode::kStrict);
    if (!book.has_value()) return book.error();
    admitter_ = std::make_unique<tenancy::Admitter>(std::move(*book), *mode, config.tenancy);
    mode_name_ = config.admission_mode;
    deferred_.reset();
    return Status::Ok();
  }

  double NowS() const { return static_cast<double>(app_.now_ms()) / 1000.0; }

  // Parses one workload of a POST /v1/workloads body; `path` names it in errors.
  std::optional<BadField> ParseWorkload(const json& j, const std::string& path, tenancy::WorkloadRequest* w,
                                        std::string* name, double now) const {
    if (!j.is_object()) return BadField{path, "must be an object"};
    for (const auto& [key, value] : j.items()) {
      if (key != "name" && key != "tenant" && key != "priority" && key != "tier" && key != "request" &&
          key != "creation_time")
        return BadField{path + "." + key, "unknown field"};
      (void)value;
    }
    const auto& book = admitter_->book();
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string() || name_it->get_ref<const std::string&>().empty() ||
        name_it->get_ref<const std::string&>().size() > kMaxNameBytes)
      return BadField{path + ".name", "required: a non-empty string of at most 253 bytes"};
    *name = name_it->get<std::string>();
    auto tenant_it = j.find("tenant");
    if (tenant_it == j.end() || !tenant_it->is_string()) return BadField{path + ".tenant", "required: a string"};
    w->tenant = book.TenantIndex(tenant_it->get<std::string>());
    if (w->tenant < 0) return BadField{path + ".tenant", "unknown tenant '" + tenant_it->get<std::string>() + "'"};
    if (auto it = j.find("priority"); it != j.end()) {
      if (!it->is_number_integer()) return BadField{path + ".priority", "must be an integer"};
      const auto p = it->get<std::int64_t>();
      if (p < std::numeric_limits<int>::min() || p > std::numeric_limits<int>::max())
        return BadField{path + ".priority", "out of range"};
      w->priority = static_cast<int>(p);
    }
    w->tier = TenantTier(w->tenant);
    if (auto it = j.find("tier"); it != j.end()) {
      if (!it->is_string()) return BadField{path + ".tier", "must be a string"};
      auto tier = tenancy::ParseTier(it->get<std::string>());
      if (!tier) return BadField{path + ".tier", "unknown tier '" + it->get<std::string>() + "' (gold, silver, bronze)"};
      w->tier = *tier;
    }
    w->creation_s = now;
    if (auto it = j.find("creation_time"); it != j.end()) {
      if (!it->is_number() || !std::isfinite(it->get<double>()))
        return BadField{path + ".creation_time", "must be Unix seconds (a number)"};
      w->creation_s = it->get<double>();
    }
    auto req_it = j.find("request");
    if (req_it == j.end() || !req_it->is_object() || req_it->empty())
      return BadField{path + ".request", "required: an object of resource -> quantity"};
    w->request.assign(static_cast<std::size_t>(book.num_resources()), 0);
    for (const auto& [res, qty] : req_it->items()) {
      const int r = book.ResourceIndex(res);
      if (r < 0) return BadField{path + ".request." + res, "no tenant has a quota for this resource"};
      if (!qty.is_number() || !(qty.get<double>() >= 0) || !std::isfinite(qty.get<double>()))
        return BadField{path + ".request." + res, "must be a non-negative number"};
      w->request[static_cast<std::size_t>(r)] = tenancy::ToQuantity(qty.get<double>());
    }
    return std::nullopt;
  }

  tenancy::Tier TenantTier(int tenant) const {
    const auto& tenants = app_.config.Get()->tenancy.tenants;
    const std::string& name = admitter_->book().tenant_name(tenant);
    for (const auto& t : tenants)
      if (t.name == name) return t.tier;
    return tenancy::Tier::kSilver;
  }

  static std::optional<json> ParseBody(const httplib::Request& req, httplib::Response& res) {
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) {
      ReplyError(res, 400, "", "request body is not valid JSON");
      return std::nullopt;
    }
    if (!body.is_object()) {
      ReplyError(res, 400, "", "request body must be a JSON object");
      return std::nullopt;
    }
    for (const auto& [key, value] : body.items()) {
      (void)value;
      if (key != "workloads") {
        ReplyError(res, 400, key, "unknown field");
        return std::nullopt;
      }
    }
    auto it = body.find("workloads");
    if (it == body.end() || !it->is_array()) {
      ReplyError(res, 400, "workloads", "required: an array");
      return std::nullopt;
    }
    if (it->size() > kMaxBatch) {
      ReplyError(res, 400, "workloads", "at most 10000 workloads per request");
      return std::nullopt;
    }
    return body;
  }

  void Submit(const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(req, res);
    if (!body) return;
    std::lock_guard lock(mu_);
    if (!admitter_) return ReplyError(res, 503, "", "admission is not configured (see the server log)");
    const double now = NowS();
    // Validate every workload before any is submitted: a request is taken whole or not at all.
    std::vector<std::pair<tenancy::WorkloadRequest, std::string>> batch;
    batch.reserve((*body)["workloads"].size());
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < (*body)["workloads"].size(); ++i) {
      const std::string path = "workloads[" + std::to_string(i) + "]";
      tenancy::WorkloadRequest w;
      std::string name;
      if (auto bad = ParseWorkload((*body)["workloads"][i], path, &w, &name, now))
        return ReplyError(res, 400, bad->field, bad->message);
      if (by_name_.count(name) != 0 || !seen.emplace(name, 0).second)
        return ReplyError(res, 409, path + ".name", "workload '" + name + "' is already known");
      batch.emplace_back(std::move(w), std::move(name));
    }
    for (auto& [w, name] : batch) {
      w.id = next_id_++;
      by_name_[name] = w.id;
      names_[w.id] = name;
      admitter_->Submit(std::move(w));
    }
    RunCycle(now, res);
  }

  void Release(const httplib::Request& req, httplib::Response& res, bool evicted) {
    auto body = ParseBody(req, res);
    if (!body) return;
    std::lock_guard lock(mu_);
    if (!admitter_) return ReplyError(res, 503, "", "admission is not configured (see the server log)");
    const json& list = (*body)["workloads"];
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = "workloads[" + std::to_string(i) + "]";
      if (!list[i].is_string()) return ReplyError(res, 400, path, "must be a workload name");
      auto it = by_name_.find(list[i].get<std::string>());
      if (it == by_name_.end())
        return ReplyError(res, 404, path, "unknown workload '" + list[i].get<std::string>() + "'");
      const bool is_admitted = admitted_at_.count(it->second) != 0;
      const bool is_evicting = evicting_.count(it->second) != 0;
      if (!evicted && !is_admitted)
        return ReplyError(res, 409, path, "workload '" + it->first + "' is not admitted");
      if (evicted && !is_evicting)
        return ReplyError(res, 409, path, "workload '" + it->first + "' was not asked to leave");
      ids.push_back(it->second);
    }
    for (std::int64_t id : ids) {
      if (evicted) {
        admitter_->Evicted(id, /*requeue=*/true);
        evicting_.erase(id);
      } else {
        admitter_->Finished(id);
        admitted_at_.erase(id);
        by_name_.erase(names_[id]);
        names_.erase(id);
      }
    }
    RunCycle(NowS(), res);
    if (deferred_ && by_name_.empty()) {
      Status st = RebuildLocked(*deferred_);
      if (!st.ok()) app_.Log("error", "admission_config", {{"error", st.message()}});
    }
  }

  // REQUIRES: mu_ held.
  void RunCycle(double now, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    OnlineEnv env(admitted_at_, now);
    decisions_.clear();
    admitter_->Cycle(now, env, &decisions_);
    json out = json::array();
    std::int64_t admits = 0, evicts = 0;
    for (const auto& d : decisions_) {
      const std::string& name = names_[d.id];
      if (d.kind == AdmissionDecision::Kind::kAdmit) {
        ++admits;
        admitted_at_[d.id] = now;
        out.push_back({{"kind", "admit"}, {"name", name}, {"borrowing", d.borrowing}});
      } else {
        ++evicts;
        admitted_at_.erase(d.id);
        evicting_.insert(d.id);
        json e = {{"kind", "evict"}, {"name", name}, {"reclaim", d.reclaim}};
        if (d.for_id >= 0) e["for"] = names_[d.for_id];
        out.push_back(std::move(e));
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    app_.metrics.Observe("seedance_admission_cycle_seconds", {}, secs);
    if (admits > 0) app_.metrics.Inc("seedance_admission_decisions_total", {{"kind", "admit"}}, static_cast<double>(admits));
    if (evicts > 0) app_.metrics.Inc("seedance_admission_decisions_total", {{"kind", "evict"}}, static_cast<double>(evicts));
    app_.metrics.Set("seedance_admission_pending", {}, static_cast<double>(admitter_->pending()));
    app_.metrics.Set("seedance_admission_admitted", {}, static_cast<double>(admitted_at_.size()));
    ReplyJson(res, 200,
              {{"decisions", std::move(out)}, {"pending", admitter_->pending()}, {"admitted", admitted_at_.size()}});
  }

  App& app_;
  std::mutex mu_;
  std::unique_ptr<tenancy::Admitter> admitter_;
  std::string mode_name_;
  std::shared_ptr<const ServerConfig> deferred_;
  std::int64_t next_id_ = 0;
  std::unordered_map<std::string, std::int64_t> by_name_;
  std::unordered_map<std::int64_t, std::string> names_;
  std::unordered_map<std::int64_t, double> admitted_at_;
  std::unordered_set<std::int64_t> evicting_;
  std::vector<AdmissionDecision> decisions_;
};

}  // namespace

std::unique_ptr<Service> MakeAdmissionService(App& app) { return std::make_unique<AdmissionService>(app); }

}  // namespace seedance::server

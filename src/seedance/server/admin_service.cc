// The admin part: GET /healthz (live), GET /readyz (503 naming what it waits for, e.g. the
// cluster watch's first list), GET /metrics (Prometheus text 0.0.4), GET /v1/config.
#include <httplib.h>

#include <atomic>

#include "seedance/server/app.h"
#include "seedance/telemetry/parse.h"

namespace seedance::server {
namespace {

class AdminService final : public Service {
 public:
  explicit AdminService(App& app) : app_(app), loaded_ms_(app.now_ms()) {}

  void Register(httplib::Server& http) override {
    http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain; charset=utf-8");
    });
    http.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      const auto waiting = app_.readiness.Waiting();
      if (waiting.empty()) return ReplyJson(res, 200, {{"ready", true}});
      ReplyJson(res, 503, {{"ready", false}, {"waiting", waiting}});
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(app_.metrics.Render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    http.Get("/v1/config", [this](const httplib::Request&, httplib::Response& res) {
      std::shared_ptr<const ServerConfig> c = app_.config.Get();
      nlohmann::json tenants = nlohmann::json::array();
      for (const auto& t : c->tenancy.tenants) {
        nlohmann::json quota = nlohmann::json::object();
        for (const auto& q : t.quota) {
          nlohmann::json one = {{"nominal", q.nominal}};
          if (q.borrowing_limit) one["borrowing_limit"] = *q.borrowing_limit;
          if (q.lending_limit) one["lending_limit"] = *q.lending_limit;
          quota[q.resource] = std::move(one);
        }
        tenants.push_back({{"name", t.name}, {"cohort", t.cohort}, {"tier", tenancy::TierName(t.tier)},
                           {"quota", std::move(quota)}});
      }
      ReplyJson(res, 200,
                {{"source", c->source},
                 {"loaded", telemetry::FormatTimestamp(loaded_ms_.load())},
                 {"tenants", std::move(tenants)},
                 {"admission_mode", c->admission_mode},
                 {"placement", {{"policy", c->placement_policy}, {"seed", c->seed}}}});
    });
  }

  void ApplyConfig(const std::shared_ptr<const ServerConfig>& /*config*/) override { loaded_ms_ = app_.now_ms(); }

 private:
  App& app_;
  std::atomic<std::int64_t> loaded_ms_;
};

}  // namespace

std::unique_ptr<Service> MakeAdminService(App& app) { return std::make_unique<AdminService>(app); }

}  // namespace seedance::server

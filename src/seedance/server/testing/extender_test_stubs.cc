// TEST-ONLY stand-ins for helper A's app.cc / metrics.cc / config.cc (placeholders on this
// branch), so the extender tests link. The integrator drops this file from the extender tests'
// SRCS once A's implementations are merged.

#include <httplib.h>

#include <iostream>
#include <map>

#include "seedance/server/app.h"
#include "seedance/server/config.h"
#include "seedance/server/metrics.h"

namespace seedance::server {

class Metrics::Impl {
 public:
  std::mutex mu;
  std::map<std::string, double> values;
  static std::string Key(std::string_view name, const Labels& labels) {
    std::string k(name);
    for (const auto& [a, b] : labels) k += "|" + a + "=" + b;
    return k;
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;
void Metrics::DeclareCounter(std::string, std::string) {}
void Metrics::DeclareGauge(std::string, std::string) {}
void Metrics::DeclareHistogram(std::string, std::string, std::vector<double>) {}
void Metrics::Inc(std::string_view name, const Labels& labels, double by) {
  std::lock_guard lock(impl_->mu);
  impl_->values[Impl::Key(name, labels)] += by;
}
void Metrics::Set(std::string_view name, const Labels& labels, double value) {
  std::lock_guard lock(impl_->mu);
  impl_->values[Impl::Key(name, labels)] = value;
}
void Metrics::Observe(std::string_view name, const Labels& labels, double) {
  std::lock_guard lock(impl_->mu);
  impl_->values[Impl::Key(name, labels) + "|count"] += 1;
}
double Metrics::Value(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->values.find(Impl::Key(name, labels));
  return it == impl_->values.end() ? 0 : it->second;
}
std::string Metrics::Render() const { return ""; }

void App::Log(std::string_view, std::string_view, nlohmann::json) const {}

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}
void ReplyError(httplib::Response& res, int status, std::string_view field, std::string_view message) {
  ReplyJson(res, status, {{"error", std::string(message)}, {"field", std::string(field)}});
}
int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

ServerConfig ServerConfig::Defaults() {
  ServerConfig c;
  c.source = "<defaults>";
  tenancy::TenantConfig t;
  t.name = "default";
  t.tier = tenancy::Tier::kGold;
  c.tenancy.tenants.push_back(t);
  return c;
}

}  // namespace seedance::server

// TEST-ONLY stand-ins for what helper A implements in app.cc, metrics.cc and config.cc (App::Log,
// Metrics, the reply helpers, ServerConfig::Defaults), so that the telemetry part is tested
// in-process before A's shell is merged. The integrator drops this file from the telemetry
// targets once app.cc / metrics.cc / config.cc are real.
#include <httplib.h>

#include <iostream>
#include <map>
#include <mutex>

#include "seedance/server/app.h"

namespace seedance::server {

void App::Log(std::string_view level, std::string_view event, nlohmann::json fields) const {
  if (std::getenv("SEEDANCE_TEST_LOG") == nullptr) return;
  fields["level"] = level;
  fields["event"] = event;
  std::cerr << fields.dump() << "\n";
}

class Metrics::Impl {
 public:
  std::mutex mu;
  std::map<std::string, std::map<Labels, double>> values;
};
Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;
void Metrics::DeclareCounter(std::string, std::string) {}
void Metrics::DeclareGauge(std::string, std::string) {}
void Metrics::DeclareHistogram(std::string, std::string, std::vector<double>) {}
void Metrics::Inc(std::string_view name, const Labels& labels, double by) {
  std::lock_guard lock(impl_->mu);
  impl_->values[std::string(name)][labels] += by;
}
void Metrics::Set(std::string_view name, const Labels& labels, double value) {
  std::lock_guard lock(impl_->mu);
  impl_->values[std::string(name)][labels] = value;
}
void Metrics::Observe(std::string_view, const Labels&, double) {}
double Metrics::Value(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->values.find(std::string(name));
  if (it == impl_->values.end()) return 0;
  auto jt = it->second.find(labels);
  return jt == it->second.end() ? 0 : jt->second;
}
std::string Metrics::Render() const { return ""; }

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}
void ReplyError(httplib::Response& res, int status, std::string_view field, std::string_view message) {
  ReplyJson(res, status, {{"error", message}, {"field", field}});
}
int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kResourceExhausted: return 413;
    case StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

ServerConfig ServerConfig::Defaults() {
  ServerConfig c;
  c.source = "<defaults>";
  return c;
}

}  // namespace seedance::server

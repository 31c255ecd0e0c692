#include "seedance/server/app.h"

#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "seedance/telemetry/parse.h"

namespace seedance::server {

std::string ReplicaIdentity(const ServerOptions& o) {
  if (!o.leader_identity.empty()) return o.leader_identity;
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') return pod;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return std::string(host) + "-" + std::to_string(getpid());
}

void App::Log(std::string_view level, std::string_view event, nlohmann::json fields) const {
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = telemetry::FormatTimestamp(now_ms ? now_ms() : 0);
  line["level"] = level;
  line["event"] = event;
  if (fields.is_object()) {
    for (auto& [k, v] : fields.items()) line[k] = std::move(v);
  } else if (!fields.is_null()) {
    line["detail"] = std::move(fields);
  }
  // One write per line so lines from several threads do not interleave.
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void ReplyJsonText(httplib::Response& res, int status, std::string body) {
  // What set_content does, without its copy of the body (cpp-httplib 0.11 takes a const
  // reference): the extender's answers run to hundreds of KB.
  res.status = status;
  res.body = std::move(body);
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", "application/json");
}

void ReplyError(httplib::Response& res, int status, std::string_view field, std::string_view message) {
  ReplyJson(res, status, {{"error", message}, {"field", field}});
}

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kResourceExhausted: return 413;
    case StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

}  // namespace seedance::server

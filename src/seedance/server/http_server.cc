#include "seedance/server/http_server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "seedance/server/guarded_server.h"

namespace seedance::server {
namespace {

// A token bucket per client address. Clock: App::now_ms (tests step it).
class RateLimiter {
 public:
  RateLimiter(double rps, double burst) : rps_(rps), burst_(std::max(burst, std::max(rps, 1.0))) {}

  // Takes one token for `client` at `now_ms`; returns 0 when allowed, else the whole seconds
  // until a token is back (for Retry-After, at least 1).
  std::int64_t Take(const std::string& client, std::int64_t now_ms) {
    std::lock_guard lock(mu_);
    if (buckets_.size() > kMaxClients) Prune(now_ms);
    auto [it, fresh] = buckets_.try_emplace(client, Bucket{burst_, now_ms});
    Bucket& b = it->second;
    if (!fresh) Refill(b, now_ms);
    if (b.tokens >= 1.0) {
      b.tokens -= 1.0;
      return 0;
    }
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((1.0 - b.tokens) / rps_)));
  }

 private:
  static constexpr std::size_t kMaxClients = 10'000;
  struct Bucket {
    double tokens;
    std::int64_t at_ms;
  };
  void Refill(Bucket& b, std::int64_t now_ms) const {
    if (now_ms > b.at_ms) {
      b.tokens = std::min(burst_, b.tokens + rps_ * static_cast<double>(now_ms - b.at_ms) / 1000.0);
      b.at_ms = now_ms;
    }
  }
  // Drops the buckets that are full again (the same as absent).
  void Prune(std::int64_t now_ms) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      Refill(it->second, now_ms);
      it = it->second.tokens >= burst_ ? buckets_.erase(it) : std::next(it);
    }
  }

  double rps_;
  double burst_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

// The route label of a request path: the paths the parts answered (at most kMaxPaths of them,
// so a scan of random URLs cannot grow the metric without bound), else "other".
class PathLabels {
 public:
  std::string Label(const std::string& path, bool answered_by_route) {
    std::lock_guard lock(mu_);
    if (known_.count(path) != 0) return path;
    if (answered_by_route && known_.size() < kMaxPaths) {
      known_.insert(path);
      return path;
    }
    return "other";
  }

 private:
  static constexpr std::size_t kMaxPaths = 64;
  std::mutex mu_;
  std::set<std::string> known_;
};

// Whether the pre-routing checks answered the request this thread is serving (cpp-httplib runs
// the pre- and post-routing handlers of one request on one thread).
thread_local bool t_rejected_before_routing = false;

bool IsWrite(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

// kube-scheduler calls these without credentials; they change no state.
bool IsPureExtenderVerb(const std::string& path) {
  return path == "/extender/filter" || path == "/extender/prioritize" || path == "/extender/preempt";
}

std::string_view RejectReason(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 411: return "length_required";
    case 413: return "body_too_large";
    case 429: return "rate_limited";
    default: return "";
  }
}

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open token file");
  std::string token;
  std::getline(in, token);
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  token.erase(token.begin(), std::find_if(token.begin(), token.end(), not_space));
  token.erase(std::find_if(token.rbegin(), token.rend(), not_space).base(), token.end());
  if (token.empty()) return InvalidArgumentError(path + ": the token file's first line is empty");
  return token;
}

bool CheckFileReadable(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace

class HttpServer::Impl {
 public:
  std::unique_ptr<httplib::Server> http;
  std::vector<std::unique_ptr<Service>> parts;
  std::string token;
  bool mtls = false;
  std::unique_ptr<RateLimiter> limiter;
  PathLabels paths;
  std::mutex reload_mu;
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> run_started{false};
  std::atomic<bool> run_finished{false};
};

HttpServer::HttpServer(std::unique_ptr<App> app) : app_(std::move(app)), impl_(std::make_unique<Impl>()) {}

HttpServer::~HttpServer() {
  Stop();
}

std::vector<HttpServer::PartFactory> HttpServer::DefaultParts() {
  return {MakeAdminService, MakeExtenderService, MakeTelemetryService, MakeAdmissionService};
}

Result<std::unique_ptr<HttpServer>> HttpServer::Create(ServerOptions options, std::function<std::int64_t()> now_ms,
                                                       const std::vector<PartFactory>& parts) {
  auto app = std::make_unique<App>();
  app->options = options;
  app->now_ms = std::move(now_ms);
  if (!app->now_ms) {
    app->now_ms = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  ServerConfig config = ServerConfig::Defaults();
  if (!options.config_path.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(config, ServerConfig::LoadFile(options.config_path));
  }
  app->config.Set(std::make_shared<const ServerConfig>(std::move(config)));

  std::unique_ptr<HttpServer> server(new HttpServer(std::move(app)));
  Impl& impl = *server->impl_;
  App& a = *server->app_;
  if (!options.token_file.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(impl.token, ReadToken(options.token_file));
  }

  // Transport.
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!options.client_ca.empty() && options.tls_cert.empty()) {
    return InvalidArgumentError("--client-ca needs --tls-cert and --tls-key (mTLS is a TLS mode)");
  }
  const ServerLimits& limits = a.config.Get()->limits;
  const int threads = options.threads > 0 ? options.threads
                                          : std::max(32, 4 * static_cast<int>(std::thread::hardware_concurrency()));
  const ConnectionLimits connection_limits{limits.header_bytes,       limits.header_count,
                                           limits.header_timeout_ms,  limits.connections_per_client,
                                           limits.request_timeout_ms, static_cast<std::size_t>(threads)};
  a.metrics.DeclareCounter("seedance_rejected_inputs_total",
                           "Requests rejected before or by a handler, by reason (bad_request, unauthorized, "
                           "length_required, body_too_large, rate_limited, header_bytes, header_count, "
                           "header_timeout, request_timeout, connections_per_client).");
  RefusalHook on_refusal = [&a](std::string_view reason, const std::string& client) {
    a.metrics.Inc("seedance_rejected_inputs_total", {{"reason", std::string(reason)}});
    a.Log("warn", "connection_refused", {{"reason", reason}, {"client", client}});
  };
  if (options.tls_cert.empty()) {
    impl.http = MakeGuardedServer(connection_limits, on_refusal);
  } else {
    for (const std::string* f : {&options.tls_cert, &options.tls_key, &options.client_ca}) {
      if (!f->empty() && !CheckFileReadable(*f)) return NotFoundError(*f + ": cannot open TLS file");
    }
    impl.http = MakeGuardedSslServer(options.tls_cert, options.tls_key, options.client_ca, connection_limits,
                                     on_refusal);
    impl.mtls = !options.client_ca.empty();
  }
  if (!impl.http->is_valid()) {
    std::string files = options.tls_cert + ", " + options.tls_key;
    if (!options.client_ca.empty()) {
      files += ", ";
      files += options.client_ca;
    }
    return InvalidArgumentError(std::string("cannot load the TLS certificate, key or client CA (") + files + ")");
  }
  if (options.rate_limit_rps > 0) {
    impl.limiter = std::make_unique<RateLimiter>(options.rate_limit_rps, options.rate_limit_burst);
  }

  httplib::Server& http = *impl.http;
  // The guard's queue (guarded_server.h) runs complete requests on `threads` workers.
  http.set_keep_alive_max_count(100'000);
  // An idle keep-alive connection outlives its client's idle timeout, so the client closes it
  // first: kube-scheduler's extender transport (Go's default, 90 s) reuses an idle connection for
  // a POST, which Go does not retry, so a server that closes first (cpp-httplib's 5 s) races that
  // write ("broken pipe") and, with `ignorable: true`, the pod is scheduled without Seedance (seen
  // once in 8,152 pods of the as-shipped parity run). Idle connections wait in the reactor, a pollfd
  // each, bounded per client by connections_per_client.
  http.set_keep_alive_timeout(kKeepAliveIdleSeconds);
  // Small answers go out at once: without it Nagle and the peer's delayed ACK add ~40 ms to each
  // keep-alive request (338 requests/s on /healthz instead of thousands).
  http.set_tcp_nodelay(true);
  http.set_payload_max_length(options.max_body_bytes);

  a.metrics.DeclareCounter("seedance_http_requests_total", "HTTP requests answered, by route and status code.");
  a.metrics.DeclareCounter("seedance_config_reloads_total", "Config reloads (SIGHUP), by result (applied, rejected).");
  a.metrics.DeclareGauge("seedance_config_loaded_timestamp_seconds", "When the config in use was loaded (Unix s).");
  a.metrics.Set("seedance_config_loaded_timestamp_seconds", {}, static_cast<double>(a.now_ms()) / 1000.0);

  Impl* ip = &impl;
  http.set_pre_routing_handler([ip, &a](const httplib::Request& req, httplib::Response& res) {
    t_rejected_before_routing = false;
    auto reject = [&res](int status, std::string_view field, std::string_view message) {
      t_rejected_before_routing = true;
      ReplyError(res, status, field, message);
      // The body was not read: the connection cannot carry another request.
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    };
    if (ip->limiter) {
      if (std::int64_t wait_s = ip->limiter->Take(req.remote_addr, a.now_ms()); wait_s > 0) {
        res.set_header("Retry-After", std::to_string(wait_s));
        return reject(429, "", std::string("rate limit exceeded for ") + req.remote_addr);
      }
    }
    // cpp-httplib 0.11 does not bound chunked bodies by set_payload_max_length: a body must say
    // its length, so the limit holds before anything is read.
    if (req.has_header("Transfer-Encoding")) {
      return reject(411, "Transfer-Encoding",
                    "chunked request bodies are not accepted: send the body with a Content-Length");
    }
    // Two Content-Length fields (even equal ones) leave the body's end ambiguous between this
    // server and any proxy in front of it (request smuggling): refused.
    if (req.get_header_value_count("Content-Length") > 1) {
      return reject(400, "Content-Length", "more than one Content-Length header");
    }
    if (req.has_header("Content-Length")) {
      const std::string& text = req.get_header_value("Content-Length");
      std::size_t length = 0;
      bool ok = !text.empty() && text.size() <= 19 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (ok) length = std::stoull(text);
      if (!ok) return reject(400, "Content-Length", "Content-Length is not a number");
      if (length > a.options.max_body_bytes) {
        return reject(413, "", std::string("request body of ") + text + " bytes is over the limit of " +
                                   std::to_string(a.options.max_body_bytes) + " bytes");
      }
    }
    // Under mTLS (--client-ca) the extender's decision verbs need a credential too: kube-scheduler
    // presents its client certificate (tlsConfig.certFile), so an anonymous pod that reaches the
    // port cannot ask for decisions. Without --client-ca they stay open (kube-scheduler cannot
    // send a token). GETs (health probes, /metrics) never need one.
    const bool pure_verb = IsPureExtenderVerb(req.path);
    if (IsWrite(req.method) && (!pure_verb || ip->mtls) && (!ip->token.empty() || ip->mtls)) {
      bool authorized = false;
      if (!ip->token.empty()) {
        // RFC 7235: the auth scheme is case-insensitive ("bearer", "BEARER").
        const std::string& auth = req.get_header_value("Authorization");
        constexpr std::string_view kBearer = "bearer ";
        if (auth.size() == kBearer.size() + ip->token.size() &&
            std::equal(kBearer.begin(), kBearer.end(), auth.begin(),
                       [](char x, char y) { return x == std::tolower(static_cast<unsigned char>(y)); })) {
          authorized = CRYPTO_memcmp(auth.data() + kBearer.size(), ip->token.data(), ip->token.size()) == 0;
        }
      }
      if (!authorized && ip->mtls && req.ssl != nullptr) {
        authorized = SSL_get0_peer_certificate(req.ssl) != nullptr && SSL_get_verify_result(req.ssl) == X509_V_OK;
      }
      if (!authorized) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"seedance\"");
        if (pure_verb || req.path == "/extender/bind") {
          return reject(401, "Authorization",
                        "the extender's verbs need a client certificate signed by --client-ca (kube-scheduler's "
                        "tlsConfig.certFile/keyFile) or 'Authorization: Bearer <token>'");
        }
        return reject(401, "Authorization", "writes need 'Authorization: Bearer <token>' or a client certificate");
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message = std::string("HTTP ") + std::to_string(res.status);
    if (res.status == 404) message = std::string("no route for ") + req.method + " " + req.path;
    if (res.status == 413) message = "request body is over the size limit";
    if (res.status == 414) message = "request URI is too long";
    ReplyError(res, res.status, "", message);
    return httplib::Server::HandlerResponse::Handled;
  }));
  // Counted after the error handler and before the answer is written, so a client that has its
  // answer sees it counted.
  http.set_post_routing_handler([ip, &a](const httplib::Request& req, httplib::Response& res) {
    // A route answered unless the checks above rejected the request or the router found none.
    const bool routed = !t_rejected_before_routing && res.status != 404 && res.status != 405 && res.status != 414;
    const std::string code = std::to_string(res.status);
    a.metrics.Inc("seedance_http_requests_total", {{"path", ip->paths.Label(req.path, routed)}, {"code", code}});
    if (std::string_view reason = RejectReason(res.status); !reason.empty()) {
      a.metrics.Inc("seedance_rejected_inputs_total", {{"reason", std::string(reason)}});
    }
  });
  http.set_logger([&a](const httplib::Request& req, const httplib::Response& res) {
    if (res.status >= 500) {
      a.Log("error", "http_error", {{"method", req.method}, {"path", req.path}, {"status", res.status},
                                    {"body", res.body.substr(0, 512)}});
    }
  });

  http.set_exception_handler([](const httplib::Request& /*req*/, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const nlohmann::json::exception& e) {
      ReplyError(res, 400, "", std::string("malformed request: ") + e.what());
    } catch (const std::exception& e) {
      ReplyError(res, 500, "", std::string("internal error: ") + e.what());
    } catch (...) {
      ReplyError(res, 500, "", "internal error");
    }
  });
  for (const PartFactory& make : parts) impl.parts.push_back(make(a));
  for (auto& part : impl.parts) part->Register(http);

  if (options.port == 0) {
    server->port_ = http.bind_to_any_port(options.host);
    if (server->port_ < 0) return UnavailableError(std::string("cannot bind ") + options.host + " on any port");
  } else {
    if (options.port < 0 || options.port > 65535) {
      return InvalidArgumentError(std::string("port ") + std::to_string(options.port) + " is out of range [0, 65535]");
    }
    if (!http.bind_to_port(options.host, options.port)) {
      return UnavailableError(std::string("cannot bind ") + options.host + ":" + std::to_string(options.port) +
                              " (in use, or not an address of this host)");
    }
    server->port_ = options.port;
  }
  if (!SetListenBacklog(http, SOMAXCONN)) {
    a.Log("warn", "listen_backlog", {{"message", "could not raise the listen backlog above cpp-httplib's 5"}});
  }
  if (impl.token.empty() && !impl.mtls) {
    a.Log("warn", "writes_open", {{"message", "no --token-file and no --client-ca: anyone who reaches the port can write"}});
  }
  return server;
}

Status HttpServer::Run() {
  Impl& impl = *impl_;
  impl.run_started = true;
  std::size_t started = 0;
  Status status = Status::Ok();
  for (; started < impl.parts.size(); ++started) {
    status = impl.parts[started]->Start();
    if (!status.ok()) break;
  }
  if (status.ok() && !impl.stop_requested.load()) {
    app_->Log("info", "serving", {{"host", app_->options.host}, {"port", port_}});
    if (!impl.http->listen_after_bind() && !impl.stop_requested.load()) {
      status = UnavailableError("the HTTP server stopped serving unexpectedly");
    }
  }
  for (std::size_t i = started; i-- > 0;) impl.parts[i]->Stop();
  impl.run_finished = true;
  return status;
}

bool HttpServer::running() const { return impl_->http && impl_->http->is_running(); }

void HttpServer::Stop() {
  Impl& impl = *impl_;
  impl.stop_requested = true;
  if (!impl.http) return;
  // Run may be between starting its parts and listening: wait (bounded) until it listens.
  for (int i = 0; i < 500 && impl.run_started.load() && !impl.http->is_running() && !impl.run_finished.load();
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  impl.http->stop();
}

Status HttpServer::Reload() {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.reload_mu);
  App& a = *app_;
  auto reject = [&a](const Status& why) {
    a.metrics.Inc("seedance_config_reloads_total", {{"result", "rejected"}});
    a.Log("error", "config_rejected", {{"reason", why.message()}, {"kept", a.config.Get()->source}});
    return why;
  };
  Result<ServerConfig> loaded =
      a.options.config_path.empty() ? Result<ServerConfig>(ServerConfig::Defaults())
                                    : ServerConfig::LoadFile(a.options.config_path);
  if (!loaded.has_value()) return reject(loaded.error());
  auto config = std::make_shared<const ServerConfig>(std::move(*loaded));
  for (auto& part : impl.parts) {
    if (Status s = part->CheckConfig(*config); !s.ok()) return reject(s);
  }
  a.config.Set(config);
  for (auto& part : impl.parts) part->ApplyConfig(config);
  a.metrics.Inc("seedance_config_reloads_total", {{"result", "applied"}});
  a.metrics.Set("seedance_config_loaded_timestamp_seconds", {}, static_cast<double>(a.now_ms()) / 1000.0);
  a.Log("info", "config_applied", {{"source", config->source}, {"tenants", config->tenancy.tenants.size()}});
  return Status::Ok();
}

}  // namespace seedance::server

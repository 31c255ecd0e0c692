#pragma once

// The server's shell: one cpp-httplib server (TLS and mTLS when asked) carrying every part's
// routes, behind the checks that apply to all of them, in this order:
//   1. rate limit per client address (token bucket; 429 with Retry-After),
//   2. body size (Content-Length above max_body_bytes: 413 before the body is read; a chunked
//      body, which cpp-httplib 0.11 would read without bound, is refused with 411),
//   3. authentication of writes (POST/PUT/PATCH/DELETE): a bearer token from token_file, or a
//      verified client certificate under mTLS; 401 with WWW-Authenticate otherwise. The
//      kube-scheduler extender's pure verbs (/extender/filter, /extender/prioritize,
//      /extender/preempt) change no state and pass without (kube-scheduler sends no token),
//      except under mTLS (client_ca set): then they need the certificate (or the token) too.
// Every answer is counted in seedance_http_requests_total{path,code} and every rejected input
// (400, 401, 411, 413, 429) in seedance_rejected_inputs_total{reason}; error answers without a body
// get the JSON error body {"error":..., "field":""}. An exception that escapes a handler is
// answered, never fatal: a nlohmann::json exception (malformed JSON, a wrong type) is a 400 naming
// it, anything else a 500 (logged).
//
// Lifecycle: Create binds the listening socket (port 0: an ephemeral port, see port()), Run
// starts the parts and serves until Stop (from any thread); Reload re-reads the config file and
// swaps it in only when it parses and every part accepts it.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/server/app.h"

namespace seedance::server {

// How long an idle keep-alive connection stays open: longer than Go's http.Transport default
// IdleConnTimeout (90 s), which kube-scheduler's extender client uses, so that the client closes an
// idle connection before the server does (docs/SECURITY.md, "Limits").
inline constexpr int kKeepAliveIdleSeconds = 120;

class HttpServer {
 public:
  // Makes one part of the server from the shared App.
  using PartFactory = std::function<std::unique_ptr<Service>(App&)>;
  // The parts of `seedance server`, in registration order: admin, extender, telemetry, admission.
  static std::vector<PartFactory> DefaultParts();

  // Loads the config (options.config_path, or the defaults), reads the token file, builds the
  // parts and binds host:port. Errors: kInvalidArgument / kNotFound for the config or the token
  // file, kInvalidArgument for TLS files that do not load, kUnavailable when the address cannot
  // be bound. `now_ms`: the wall clock (Unix ms) the server and its parts read.
  // `parts`: what to serve (tests pass a subset, or a part of their own).
  static Result<std::unique_ptr<HttpServer>> Create(ServerOptions options, std::function<std::int64_t()> now_ms,
                                                    const std::vector<PartFactory>& parts = DefaultParts());
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the ephemeral one when options.port was 0).
  int port() const { return port_; }
  // Starts the parts, serves until Stop(), then stops the parts. Errors: a part that fails to
  // start (the others are stopped again), or kUnavailable when serving fails.
  Status Run();
  // Ends Run (thread-safe; may be called before Run has begun listening, or twice).
  void Stop();
  // Whether Run is accepting connections.
  bool running() const;
  // Re-reads options.config_path. A config that does not parse or that a part rejects keeps the
  // old one (logged, seedance_config_reloads_total{result="rejected"}, the error returned).
  Status Reload();
  App& app() { return *app_; }

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<App> app);
  std::unique_ptr<App> app_;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace seedance::server

// seedance server: the online mode (a Kubernetes scheduler extender, telemetry ingest, the ledger,
// the breaker and /metrics) on one HTTP(S) port. SIGHUP reloads the config; SIGTERM/SIGINT stop.
#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include "commands.h"
#include "common.h"
#include "seedance/server/http_server.h"

namespace seedance::cli {
namespace {

struct ServerFlags {
  std::string listen = "127.0.0.1:8080";
  server::ServerOptions options;
  double max_body = static_cast<double>(server::ServerOptions{}.max_body_bytes);
};

// "HOST:PORT" or "[IPV6]:PORT" into options.host / options.port.
Status ParseListen(const std::string& text, server::ServerOptions& o) {
  const std::size_t colon = text.rfind(':');
  auto bad = [&text] {
    return InvalidArgumentError(std::string("--listen '") + text + "': expected HOST:PORT (e.g. 127.0.0.1:8080, 0.0.0.0:8443, "
                                "[::1]:8080; port 0 picks a free one)");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return bad();
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return bad();
  const int p = std::stoi(port);
  if (p > 65535) return bad();
  o.host = host;
  o.port = p;
  return Status::Ok();
}

int Run(ServerFlags f) {
  if (Status s = ParseListen(f.listen, f.options); !s.ok()) return ReportError(s);
  if (!std::isfinite(f.max_body) || f.max_body < 1 || f.max_body > 1e12) {
    return ReportError(InvalidArgumentError("--max-body: must be a number of bytes in [1, 1e12]"));
  }
  f.options.max_body_bytes = static_cast<std::size_t>(f.max_body);
  if (!std::isfinite(f.options.rate_limit_rps) || f.options.rate_limit_rps < 0) {
    return ReportError(InvalidArgumentError("--rate-limit: must be >= 0 requests/s per client (0: none)"));
  }
  if (f.options.threads < 0 || f.options.threads > 4096) {
    return ReportError(InvalidArgumentError("--threads: must be in [0, 4096] (0: 4 x cores, at least 32)"));
  }
  f.options.rate_limit_burst = f.options.rate_limit_rps;  // one second's worth
  if (f.options.db.rfind("postgresql://", 0) == 0 || f.options.db.rfind("postgres://", 0) == 0) {
    return ReportError(InvalidArgumentError(
        "--db " + f.options.db +
        ": the server's ledger must be an SQLite file (telemetry samples live there); replicas share "
        "admission through --admission-db postgresql://..., charges through `seedance cost-benchmark "
        "--ledger postgresql://...`"));
  }

  // Every thread started from here on inherits the mask; one thread takes the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto created = server::HttpServer::Create(f.options, nullptr);
  if (!created.has_value()) return ReportError(created.error());
  std::unique_ptr<server::HttpServer> srv = std::move(*created);
  server::App& app = srv->app();
  app.Log("info", "listening",
          {{"host", f.options.host}, {"port", srv->port()}, {"tls", !f.options.tls_cert.empty()},
           {"mtls", !f.options.client_ca.empty()}, {"config", app.config.Get()->source}, {"db", f.options.db}});

  std::thread signal_thread([&srv, &app, signals] {
    while (true) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (sig == SIGHUP) {
        app.Log("info", "sighup", {{"action", "reload"}});
        (void)srv->Reload();  // logged and counted either way
        continue;
      }
      app.Log("info", "shutdown", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      srv->Stop();
      return;
    }
  });
  Status run = srv->Run();
  // Run may end on its own (an error): wake the signal thread so it can be joined.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  app.Log(run.ok() ? "info" : "error", "stopped", {{"status", run.ok() ? "ok" : run.message()}});
  return run.ok() ? kExitOk : ReportError(run);
}

}  // namespace

Action RegisterServer(CLI::App& app) {
  auto f = std::make_shared<ServerFlags>();
  f->options.watch_in_cluster = true;  // in a pod: its service account (docs/KUBERNETES.md)
  CLI::App* cmd = AddCommand(
      app, "server", "Run the online mode: scheduler extender, telemetry ingest and /metrics",
      "Serves the Kubernetes scheduler extender (/extender/filter, prioritize, preempt, bind), node and pod "
      "state (/v1/nodes, /v1/pods, /v1/decisions), telemetry ingest (OTLP JSON /v1/metrics, Prometheus text "
      "/v1/ingest/prom), the breaker, cost queries and its own metrics (/metrics), with one JSON log line per "
      "event on stderr. Without --config it starts on defaults: one tenant, the bundled price table, bestfit. "
      "--token-file: writes (POST/PUT/DELETE, and /extender/bind) need 'Authorization: Bearer <first line of the "
      "file>'; filter, prioritize and preempt stay open for kube-scheduler unless --client-ca is set. --client-ca: "
      "mutual TLS, a verified client certificate authorizes writes, and the extender's verbs (filter, prioritize, "
      "preempt, bind) need one (or the token); GETs stay open. SIGHUP reloads the config (a bad one is rejected and the old one "
      "kept); SIGTERM or SIGINT stop it (exit 0). Exit 2 on bad flags or config."
      " --kubeconfig FILE (in a pod: its service account): the server lists and watches Nodes and Pods and /readyz waits for the first lists (docs/KUBERNETES.md). Install: deploy/README.md."
      " Limits on what one client may cost (server.limits in --config, docs/SECURITY.md): header_timeout 10s and request_timeout 30s (headers and body) per request, 408 after; connections_per_client 16; JSON nesting 64 levels (400); candidates per extender request max(2 x nodes known, candidates_floor 5000) (413); full-node mode (nodeCacheCapable: false) off unless server.extender_full_nodes: true. server.extender_decide_at_filter: true (deploy/'s config) makes the filter answer only the policy's pick, so kube-scheduler skips its score phase and prioritize (docs/KUBERNETES.md, section Deciding at filter). Slow clients wait in one event thread, never on a worker. --leader-elect: a follower answers /readyz and every extender verb 503.",
      "seedance server --config seedance-config.yaml --listen 0.0.0.0:8443 --tls-cert tls.crt --tls-key tls.key");
  cmd->add_option("--config", f->options.config_path, "seedance-config.yaml (server: and tenancy: sections)");
  cmd->add_option("--listen", f->listen, "HOST:PORT to serve on (port 0: a free port, logged)")
      ->capture_default_str();
  cmd->add_option("--db", f->options.db, "the ledger: an SQLite file (created if absent)")
      ->capture_default_str();
  cmd->add_option("--admission-db", f->options.admission_db,
                  "the admission log (/v1/workloads): an SQLite file, or a postgresql:// URL that replicas "
                  "share (default: --db)")
      ->envname("SEEDANCE_ADMISSION_DB");
  cmd->add_option("--tls-cert", f->options.tls_cert, "PEM certificate: serve HTTPS");
  cmd->add_option("--tls-key", f->options.tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--client-ca", f->options.client_ca, "PEM CA bundle: request client certificates and verify those presented; the extender's verbs then need one");
  cmd->add_option("--token-file", f->options.token_file, "file whose first line is the bearer token for writes");
  cmd->add_option("--max-body", f->max_body, "largest request body in bytes (413 above)")->capture_default_str();
  cmd->add_option("--rate-limit", f->options.rate_limit_rps, "requests/s per client address (429 above; 0: none)")
      ->capture_default_str();
  cmd->add_option("--threads", f->options.threads, "HTTP worker threads (0: 4 x cores, at least 32)")
      ->capture_default_str();
  cmd->add_option("--kubeconfig", f->options.kubeconfig,
                  "kubeconfig whose current context to watch Nodes and Pods through");
  cmd->add_flag("--leader-elect", f->options.leader_elect,
                "elect one leader among replicas on a Lease; followers answer /readyz and the extender verbs 503");
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return Run(*f);
  };
}

}  // namespace seedance::cli

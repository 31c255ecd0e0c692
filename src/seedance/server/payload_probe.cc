// server_payload_probe: one hostile extender request against a `seedance server` in a child
// process, measuring what it costs the server (issue 40, docs/BENCHMARKS.md):
//   server_payload_probe names N   a filter with N unknown NodeNames ("n0".."n<N-1>", ~11 B each)
//   server_payload_probe depth D   a full-node filter whose one Node nests D arrays deep
//   server_payload_probe load S    S seconds of filter + prioritize (alternating) for a 1-GPU pod
//                                  with 420 of 1,000 registered nodes' names, 4 keep-alive
//                                  clients: requests/s and p99 (the front end's cost per request)
// Prints one JSON line: the HTTP status (or "died" with the child's signal), the wall time of the
// request, the child's peak RSS (VmHWM) and its RSS after, and whether it still answers /healthz.
// Built with the benchmarks; scripts/bench-payloads.sh runs the figures.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "seedance/server/http_server.h"

namespace {

long StatusKib(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::string(field).size());
  }
  return -1;
}

std::string NamesBody(long n) {
  std::string b = R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"}},"NodeNames":[)";
  b.reserve(b.size() + static_cast<std::size_t>(n) * 12);
  for (long i = 0; i < n; ++i) {
    if (i > 0) b += ',';
    b += "\"n" + std::to_string(i) + "\"";
  }
  return b + "]}";
}

std::string DeepBody(long depth) {
  return R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"}},"Nodes":{"items":[{"metadata":{"name":"n"},"x":)" +
         std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']') + "}]}}";
}

// `secs` seconds of filter + prioritize from 4 keep-alive clients; prints requests/s and p99.
int Load(int port, double secs) {
  httplib::Client admin("127.0.0.1", port);
  std::string nodes = R"({"kind":"NodeList","items":[)";
  for (int i = 0; i < 1000; ++i) {
    if (i > 0) nodes += ',';
    nodes += R"({"metadata":{"name":"node-)" + std::to_string(i) +
             R"(","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},"status":{"allocatable":{"cpu":"96","memory":"512Gi","nvidia.com/gpu":"8"}}})";
  }
  nodes += "]}";
  auto r = admin.Post("/v1/nodes", nodes, "application/json");
  if (!r || r->status != 200) return 1;
  std::string body = R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"1"}}}]}},"NodeNames":[)";
  for (int i = 0; i < 420; ++i) body += std::string(i > 0 ? "," : "") + "\"node-" + std::to_string(i * 2) + "\"";
  body += "]}";
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> lat(4);
  std::atomic<long> errors{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      for (long i = 0; !stop.load(); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto res = c.Post(i % 2 == 0 ? "/extender/filter" : "/extender/prioritize", body, "application/json");
        lat[static_cast<std::size_t>(t)].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (!res || res->status != 200) ++errors;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(secs));
  stop = true;
  for (auto& c : clients) c.join();
  std::vector<double> all;
  for (const auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  std::printf("{\"kind\":\"load\",\"seconds\":%.0f,\"requests\":%zu,\"per_second\":%.0f,\"p50_ms\":%.3f,"
              "\"p99_ms\":%.3f,\"errors\":%ld}\n",
              secs, all.size(), static_cast<double>(all.size()) / secs, all[all.size() / 2], all[all.size() * 99 / 100],
              errors.load());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "names" && std::string(argv[1]) != "depth" &&
                    std::string(argv[1]) != "load")) {
    std::fprintf(stderr, "usage: server_payload_probe names N | depth D | load SECONDS\n");
    return 2;
  }
  const std::string kind = argv[1];
  const long n = std::atol(argv[2]);
  int ports[2];
  if (::pipe(ports) != 0) return 1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ports[0]);
    seedance::server::ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.db = "/tmp/server_payload_probe_" + std::to_string(::getpid()) + ".db";
    o.max_body_bytes = 256u << 20;
    auto s = seedance::server::HttpServer::Create(o, nullptr);
    if (!s.has_value()) return 1;
    const int port = (*s)->port();
    [[maybe_unused]] const auto w = ::write(ports[1], &port, sizeof port);
    const seedance::Status st = (*s)->Run();
    return st.ok() ? 0 : 1;
  }
  ::close(ports[1]);
  int port = 0;
  if (::read(ports[0], &port, sizeof port) != sizeof port) return 1;
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(300, 0);
  c.set_write_timeout(300, 0);
  for (int i = 0; i < 500 && !c.Get("/healthz"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (kind == "load") {
    const int rc = Load(port, static_cast<double>(n));
    int ws = 0;
    ::kill(child, SIGTERM);
    ::waitpid(child, &ws, 0);
    return rc;
  }
  const long rss_idle = StatusKib(child, "VmRSS:");
  const std::string body = kind == "names" ? NamesBody(n) : DeepBody(n);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = c.Post("/extender/filter", body, "application/json");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long hwm = StatusKib(child, "VmHWM:");
  const long rss = StatusKib(child, "VmRSS:");
  int wstatus = 0;
  std::string outcome;
  if (::waitpid(child, &wstatus, WNOHANG) == child) {
    outcome = WIFSIGNALED(wstatus) ? "\"died: signal " + std::to_string(WTERMSIG(wstatus)) + "\"" : "\"exited\"";
  } else {
    outcome = r ? std::to_string(r->status) : "\"no answer\"";
  }
  httplib::Client again("127.0.0.1", port);
  again.set_connection_timeout(2, 0);
  const bool alive = static_cast<bool>(again.Get("/healthz"));
  std::printf("{\"kind\":\"%s\",\"n\":%ld,\"body_bytes\":%zu,\"status\":%s,\"seconds\":%.3f,"
              "\"rss_idle_mib\":%.1f,\"peak_rss_mib\":%.1f,\"rss_after_mib\":%.1f,\"alive_after\":%s}\n",
              kind.c_str(), n, body.size(), outcome.c_str(), secs, static_cast<double>(rss_idle) / 1024.0,
              static_cast<double>(hwm) / 1024.0, static_cast<double>(rss) / 1024.0,
              alive ? "true" : "false");
  ::kill(child, SIGTERM);
  ::waitpid(child, &wstatus, 0);
  std::remove(("/tmp/server_payload_probe_" + std::to_string(child) + ".db").c_str());
  return 0;
}

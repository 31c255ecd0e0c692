// server_payload_probe: one hostile extender request against a `seedance server` in a child
// process, measuring what it costs the server (issue 40, docs/BENCHMARKS.md):
//   server_payload_probe names N   a filter with N unknown NodeNames ("n0".."n<N-1>", ~11 B each)
//   server_payload_probe depth D   a full-node filter whose one Node nests D arrays deep
// Prints one JSON line: the HTTP status (or "died" with the child's signal), the wall time of the
// request, the child's peak RSS (VmHWM) and its RSS after, and whether it still answers /healthz.
// Built with the benchmarks; scripts/bench-payloads.sh runs the figures.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "names" && std::string(argv[1]) != "depth")) {
    std::fprintf(stderr, "usage: server_payload_probe names N | depth D\n");
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

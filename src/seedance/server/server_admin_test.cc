// The server's shell end to end, in-process over loopback HTTP: auth, body limit, rate limit,
// mTLS, config reload, /metrics and /v1/config.
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <thread>
#include <chrono>
#include <nlohmann/json.hpp>

#include "seedance/server/http_server.h"
#include "seedance/server/testing/raw_socket.h"
#include "seedance/server/testing/test_server.h"
#include "seedance/telemetry/parse.h"
#include "seedance/core/testing/require_peer.h"

namespace seedance::server {
namespace {

using testing::StartTestServer;
using testing::TestDir;
using testing::WriteFile;

ServerOptions WithToken(const std::string& dir, const std::string& token = "s3cret") {
  ServerOptions o;
  o.token_file = dir + "/token";
  WriteFile(o.token_file, token + "\n");
  return o;
}

// A part of the tests' own: an echo write, handlers that throw, and one that answers 400.
class TestPart final : public Service {
 public:
  void Register(httplib::Server& http) override {
    http.Post("/test/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    http.Get("/test/json-throw", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(nlohmann::json::parse("{\"a\":").dump(), "application/json");
    });
    http.Get("/test/throw", [](const httplib::Request&, httplib::Response&) { throw std::runtime_error("boom"); });
    http.Get("/test/bad", [](const httplib::Request&, httplib::Response& res) {
      ReplyError(res, 400, "pod.metadata.name", "expected a string");
    });
  }
};

std::vector<HttpServer::PartFactory> WithTestPart() {
  auto parts = HttpServer::DefaultParts();
  parts.push_back([](App&) { return std::make_unique<TestPart>(); });
  return parts;
}

// The JSON error body of a rejected request names what is wrong.
std::string ErrorOf(const httplib::Result& r) {
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  return j.is_object() && j.contains("error") ? j["error"].get<std::string>() : std::string("<not a JSON error: ") + r->body + ">";
}

TEST(ServerAdminTest, HealthzAndConfigOnDefaults) {
  auto s = StartTestServer({});
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  auto h = c.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->body, "ok\n");
  auto cfg = c.Get("/v1/config");
  ASSERT_TRUE(cfg);
  ASSERT_EQ(cfg->status, 200);
  auto j = nlohmann::json::parse(cfg->body);
  EXPECT_EQ(j["source"], "<defaults>");
  EXPECT_EQ(j["loaded"], "2026-11-29T11:00:00Z");
  EXPECT_EQ(j["tenants"][0]["name"], "default");
  EXPECT_EQ(j["tenants"][0]["tier"], "gold");
  EXPECT_EQ(j["placement"]["policy"], "bestfit");
  auto missing = c.Get("/no/such/route");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(ErrorOf(missing), "no route for GET /no/such/route");
}

TEST(ServerAdminTest, WritesNeedTheBearerTokenExceptPureExtenderVerbs) {
  auto s = StartTestServer(WithToken(TestDir()), nullptr, WithTestPart());
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  auto none = c.Post("/test/echo", "{}", "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer realm=\"seedance\"");
  EXPECT_NE(ErrorOf(none).find("Authorization: Bearer"), std::string::npos);
  // The same keep-alive client goes on working after a rejected write.
  auto after = c.Get("/healthz");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);

  auto wrong = c.Post("/v1/nodes", {{"Authorization", "Bearer s3cre"}}, "{}", "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto bind = c.Post("/extender/bind", "{}", "application/json");
  ASSERT_TRUE(bind);
  EXPECT_EQ(bind->status, 401);  // bind changes state: a write

  auto right = c.Post("/test/echo", {{"Authorization", "Bearer s3cret"}}, "{\"x\":1}", "application/json");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  EXPECT_EQ(right->body, "{\"x\":1}");
  for (const char* verb : {"/extender/filter", "/extender/prioritize", "/extender/preempt"}) {
    auto r = c.Post(verb, "{}", "application/json");
    ASSERT_TRUE(r);
    EXPECT_NE(r->status, 401) << verb;
  }
  auto get = c.Get("/metrics");  // reads stay open
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  auto again = c.Post("/test/echo", "{}", "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 401);
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "unauthorized"}}), 4);
  // Rejected before routing: counted under the path only once a route has answered it.
  EXPECT_EQ(s->app().metrics.Value("seedance_http_requests_total", {{"path", "other"}, {"code", "401"}}), 3);
  EXPECT_EQ(s->app().metrics.Value("seedance_http_requests_total", {{"path", "/test/echo"}, {"code", "401"}}), 1);
  EXPECT_EQ(s->app().metrics.Value("seedance_http_requests_total", {{"path", "/extender/bind"}, {"code", "401"}}), 0);
}

TEST(ServerAdminTest, OversizedBodyIs413BeforeItIsRead) {
  ServerOptions o = WithToken(TestDir());
  o.max_body_bytes = 1024;
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  const httplib::Headers auth = {{"Authorization", "Bearer s3cret"}};
  auto big = c.Post("/v1/metrics", auth, std::string(4096, 'x'), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(ErrorOf(big).find("4096 bytes is over the limit of 1024"), std::string::npos);
  auto fits = c.Post("/v1/metrics", auth, std::string(1024, 'x'), "application/json");
  ASSERT_TRUE(fits);
  EXPECT_NE(fits->status, 413);
  // Even an unauthenticated pure verb is bounded.
  auto filter = c.Post("/extender/filter", std::string(2048, ' '), "application/json");
  ASSERT_TRUE(filter);
  EXPECT_EQ(filter->status, 413);
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "body_too_large"}}), 2);
}

// Sends `request` in one write on a fresh connection; returns what comes back until the server
// closes.
std::string RawExchange(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// cpp-httplib 0.11 reads chunked bodies past set_payload_max_length: they are refused unread.
TEST(ServerAdminTest, ChunkedBodyIsRefusedWith411) {
  ServerOptions o;
  o.max_body_bytes = 16;
  auto s = StartTestServer(o, nullptr, WithTestPart());
  ASSERT_NE(s, nullptr);
  const std::string reply = RawExchange(s->port(),
                                        "POST /test/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                        "Content-Type: application/json\r\n\r\n"
                                        "20\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n0\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 411 ", 0), 0u) << reply;
  EXPECT_NE(reply.find("send the body with a Content-Length"), std::string::npos) << reply;
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "length_required"}}), 1);
}

TEST(ServerAdminTest, ExceptionsAndBadInputBecomeJsonErrors) {
  auto s = StartTestServer({}, nullptr, WithTestPart());
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  auto json = c.Get("/test/json-throw");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 400);
  EXPECT_EQ(ErrorOf(json).rfind("malformed request: [json.exception.parse_error", 0), 0u) << ErrorOf(json);
  auto other = c.Get("/test/throw");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 500);
  EXPECT_EQ(ErrorOf(other), "internal error: boom");
  auto bad = c.Get("/test/bad");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto j = nlohmann::json::parse(bad->body);
  EXPECT_EQ(j["field"], "pod.metadata.name");
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "bad_request"}}), 2);
}

TEST(ServerAdminTest, RateLimitPerClientWithRetryAfter) {
  ServerOptions o;
  o.rate_limit_rps = 1;
  o.rate_limit_burst = 2;
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  auto limited = c.Get("/healthz");
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->status, 429);
  EXPECT_EQ(limited->get_header_value("Retry-After"), "1");
  *s->clock_ms += 1000;  // one token back
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  EXPECT_EQ(c.Get("/healthz")->status, 429);
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "rate_limited"}}), 2);
}

TEST(ServerAdminTest, MetricsCountRoutesAndParseBack) {
  auto s = StartTestServer({});
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.Get("/healthz"));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c.Get("/random/" + std::to_string(i)));
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  telemetry::CollectingSink sink;
  telemetry::ParseStats stats;
  telemetry::ParseText(telemetry::InputFormat::kPrometheus, m->body, {}, sink, stats);
  EXPECT_EQ(stats.rejected, 0u);
  std::map<std::string, double> requests;  // path|code -> count
  for (const auto& x : sink.samples) {
    if (x.metric != "seedance_http_requests_total") continue;
    ASSERT_EQ(x.labels.size(), 2u);
    requests[x.labels[0].value + "|" + x.labels[1].value] = x.value;
  }
  EXPECT_EQ(requests["/healthz|200"], 3);
  EXPECT_EQ(requests["other|404"], 5);  // unknown URLs share one series
  EXPECT_EQ(requests.size(), 2u);       // /metrics is counted after it renders
}

TEST(ServerAdminTest, ReloadKeepsTheOldConfigWhenTheNewOneIsBroken) {
  const std::string dir = TestDir();
  ServerOptions o;
  o.config_path = dir + "/seedance-config.yaml";
  WriteFile(o.config_path, "server:\n  placement_policy: fgd\ntenancy:\n  tenants:\n    - {name: team-a}\n");
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->app().config.Get()->placement_policy, "fgd");

  WriteFile(o.config_path, "server:\n  placement_policy: fgd\n  seed: lots\n");
  Status bad = s->server->Reload();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find(o.config_path + ":3: key 'server.seed'"), std::string::npos) << bad.message();
  EXPECT_EQ(s->app().config.Get()->tenancy.tenants.at(0).name, "team-a");
  EXPECT_EQ(s->app().metrics.Value("seedance_config_reloads_total", {{"result", "rejected"}}), 1);

  WriteFile(o.config_path, "server:\n  placement_policy: packing\n  seed: 7\n");
  *s->clock_ms += 60'000;
  ASSERT_TRUE(s->server->Reload().ok());
  EXPECT_EQ(s->app().config.Get()->placement_policy, "packing");
  EXPECT_EQ(s->app().config.Get()->seed, 7u);
  EXPECT_EQ(s->app().metrics.Value("seedance_config_reloads_total", {{"result", "applied"}}), 1);
  httplib::Client c("127.0.0.1", s->port());
  auto j = nlohmann::json::parse(c.Get("/v1/config")->body);
  EXPECT_EQ(j["placement"]["policy"], "packing");
  EXPECT_EQ(j["loaded"], "2026-11-29T11:01:00Z");
}

TEST(ServerAdminTest, CreateRejectsBadSetups) {
  const std::string dir = TestDir();
  ServerOptions no_token;
  no_token.token_file = dir + "/absent";
  EXPECT_EQ(HttpServer::Create(no_token, nullptr).error().code(), StatusCode::kNotFound);
  ServerOptions empty_token;
  empty_token.token_file = dir + "/empty";
  WriteFile(empty_token.token_file, "\n");
  EXPECT_EQ(HttpServer::Create(empty_token, nullptr).error().code(), StatusCode::kInvalidArgument);
  ServerOptions half_tls;
  half_tls.tls_cert = dir + "/cert.pem";
  EXPECT_EQ(HttpServer::Create(half_tls, nullptr).error().code(), StatusCode::kInvalidArgument);
  ServerOptions garbage_tls;
  garbage_tls.tls_cert = dir + "/cert.pem";
  garbage_tls.tls_key = dir + "/key.pem";
  WriteFile(garbage_tls.tls_cert, "not a certificate\n");
  WriteFile(garbage_tls.tls_key, "not a key\n");
  auto tls = HttpServer::Create(garbage_tls, nullptr);
  ASSERT_FALSE(tls.has_value());
  EXPECT_EQ(tls.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(tls.error().message().find("cannot load the TLS certificate"), std::string::npos);
  ServerOptions bad_config;
  bad_config.config_path = dir + "/c.yaml";
  WriteFile(bad_config.config_path, "server:\n  nope: 1\n");
  auto r = HttpServer::Create(bad_config, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find(":2: key 'server.nope'"), std::string::npos);
  ServerOptions bad_port;
  bad_port.port = 70000;
  EXPECT_EQ(HttpServer::Create(bad_port, nullptr).error().code(), StatusCode::kInvalidArgument);
}

// A CA, a server certificate for 127.0.0.1 and a client certificate, made with the openssl CLI.
bool MakeCertificates(const std::string& dir) {
  const std::string key = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj ";
  const std::string sign = "openssl x509 -req -days 2 -CA " + dir + "/ca.crt -CAkey " + dir + "/ca.key -CAcreateserial ";
  const std::string script =
      "cd " + dir + " && " +
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=test-ca "
      "-keyout ca.key -out ca.crt && " +
      key + "/CN=127.0.0.1 -keyout server.key -out server.csr && " +
      "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && " + sign +
      "-in server.csr -extfile san.ext -out server.crt && " + key +
      "/CN=client -keyout client.key -out client.csr && " + sign + "-in client.csr -out client.crt";
  return std::system((script + " >/dev/null 2>&1").c_str()) == 0;
}

// mTLS is optional-verify: a client certificate authorizes writes, a client without one still
// connects (reads, and writes with the bearer token), a certificate that does not verify fails
// the handshake, and plaintext is not TLS.
TEST(ServerAdminTest, MutualTlsTakesACertificateOrTheToken) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v openssl >/dev/null 2>&1") != 0) << "openssl CLI not on PATH";
  const std::string dir = TestDir();
  ASSERT_TRUE(MakeCertificates(dir));
  ServerOptions o = WithToken(dir);
  o.tls_cert = dir + "/server.crt";
  o.tls_key = dir + "/server.key";
  o.client_ca = dir + "/ca.crt";
  auto s = StartTestServer(o, nullptr, WithTestPart());
  ASSERT_NE(s, nullptr);

  httplib::SSLClient with_cert("127.0.0.1", s->port(), dir + "/client.crt", dir + "/client.key");
  with_cert.set_ca_cert_path((dir + "/ca.crt").c_str());
  with_cert.enable_server_certificate_verification(true);
  auto write = with_cert.Post("/test/echo", "{}", "application/json");
  ASSERT_TRUE(write) << httplib::to_string(write.error());
  EXPECT_EQ(write->status, 200);  // the verified certificate authorizes the write
  auto health = with_cert.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  httplib::SSLClient without_cert("127.0.0.1", s->port());
  without_cert.set_ca_cert_path((dir + "/ca.crt").c_str());
  without_cert.enable_server_certificate_verification(true);
  auto read = without_cert.Get("/healthz");
  ASSERT_TRUE(read) << httplib::to_string(read.error());
  EXPECT_EQ(read->status, 200);
  auto anonymous = without_cert.Post("/test/echo", "{}", "application/json");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  auto token = without_cert.Post("/test/echo", {{"Authorization", "Bearer s3cret"}}, "{}", "application/json");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->status, 200);

  // A certificate the client CA did not sign: the handshake fails.
  ASSERT_EQ(std::system(("cd " + dir + " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                         "-days 2 -subj /CN=rogue -keyout rogue.key -out rogue.crt >/dev/null 2>&1")
                            .c_str()),
            0);
  httplib::SSLClient wrong_cert("127.0.0.1", s->port(), dir + "/rogue.crt", dir + "/rogue.key");
  wrong_cert.set_ca_cert_path((dir + "/ca.crt").c_str());
  wrong_cert.enable_server_certificate_verification(true);
  auto refused = wrong_cert.Get("/healthz");
  EXPECT_FALSE(refused && refused->status == 200);

  httplib::Client plain("127.0.0.1", s->port());
  auto plaintext = plain.Get("/healthz");
  EXPECT_FALSE(plaintext && plaintext->status == 200);
}

// Issue 40: under mTLS the extender's decision verbs need kube-scheduler's client certificate.
// The certificates come from the shipped openssl recipe (scripts/seedance-certs.sh, the one
// deploy/README.md documents): a client without a certificate is refused (401) on filter,
// prioritize, preempt and bind while GETs (the kubelet's probes, Prometheus's /metrics) stay open;
// a certificate from another CA fails the handshake; the recipe's scheduler certificate is
// accepted, and so is the bearer token.
TEST(ServerAdminTest, ExtenderVerbsNeedTheSchedulersClientCertificate) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v openssl >/dev/null 2>&1") != 0) << "openssl CLI not on PATH";
  const std::string dir = TestDir();
  const std::string recipe = std::string(SEEDANCE_TEST_DATA_DIR) + "/../scripts/seedance-certs.sh";
  ASSERT_EQ(std::system(("bash " + recipe + " " + dir + "/pki --san IP:127.0.0.1 --days 2 >/dev/null").c_str()), 0);
  ASSERT_EQ(std::system(("bash " + recipe + " " + dir + "/other --san IP:127.0.0.1 --days 2 >/dev/null").c_str()), 0);
  const std::string pki = dir + "/pki/";
  ServerOptions o = WithToken(dir);
  o.tls_cert = pki + "tls.crt";
  o.tls_key = pki + "tls.key";
  o.client_ca = pki + "ca.crt";
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);
  const std::string filter =
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{"containers":[]}},"NodeNames":[]})";
  const std::vector<std::string> verbs = {"/extender/filter", "/extender/prioritize", "/extender/preempt",
                                          "/extender/bind"};

  httplib::SSLClient anonymous("127.0.0.1", s->port());
  anonymous.set_ca_cert_path((pki + "ca.crt").c_str());
  anonymous.enable_server_certificate_verification(true);
  for (const std::string& verb : verbs) {
    auto r = anonymous.Post(verb, filter, "application/json");
    ASSERT_TRUE(r) << verb << ": " << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 401) << verb;
    EXPECT_NE(ErrorOf(r).find("client certificate signed by --client-ca"), std::string::npos) << ErrorOf(r);
  }
  for (const char* open : {"/healthz", "/readyz", "/metrics"}) {
    auto r = anonymous.Get(open);
    ASSERT_TRUE(r) << open;
    EXPECT_EQ(r->status, 200) << open;
  }
  auto token = anonymous.Post("/extender/filter", {{"Authorization", "Bearer s3cret"}}, filter, "application/json");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->status, 200) << token->body;

  // The other CA's scheduler certificate: the handshake fails, nothing is answered.
  httplib::SSLClient other("127.0.0.1", s->port(), dir + "/other/scheduler.crt", dir + "/other/scheduler.key");
  other.set_ca_cert_path((pki + "ca.crt").c_str());
  other.enable_server_certificate_verification(true);
  auto foreign = other.Post("/extender/filter", filter, "application/json");
  EXPECT_FALSE(foreign) << "a certificate from another CA was answered " << foreign->status;

  // The server's own certificate is not a client certificate (extendedKeyUsage serverAuth only).
  httplib::SSLClient server_cert("127.0.0.1", s->port(), pki + "tls.crt", pki + "tls.key");
  server_cert.set_ca_cert_path((pki + "ca.crt").c_str());
  server_cert.enable_server_certificate_verification(true);
  auto wrong_usage = server_cert.Post("/extender/filter", filter, "application/json");
  EXPECT_FALSE(wrong_usage && wrong_usage->status == 200);

  httplib::SSLClient scheduler("127.0.0.1", s->port(), pki + "scheduler.crt", pki + "scheduler.key");
  scheduler.set_ca_cert_path((pki + "ca.crt").c_str());
  scheduler.enable_server_certificate_verification(true);
  auto accepted = scheduler.Post("/extender/filter", filter, "application/json");
  ASSERT_TRUE(accepted) << httplib::to_string(accepted.error());
  EXPECT_EQ(accepted->status, 200) << accepted->body;
  auto j = nlohmann::json::parse(accepted->body);
  EXPECT_TRUE(j.contains("NodeNames")) << accepted->body;
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "unauthorized"}}), 4);
}

// Issue 40, found by the as-shipped parity run: the server closed idle keep-alive connections
// after 5 s while kube-scheduler's Go client keeps them 90 s and reuses one for its next POST, which
// then failed ("broken pipe") and, with ignorable: true, scheduled the pod without Seedance. An idle
// connection must outlive the client's idle timeout: it still serves a request after 6 s idle.
TEST(ServerAdminTest, IdleKeepAliveOutlastsTheSchedulersIdleTimeout) {
  EXPECT_GT(kKeepAliveIdleSeconds, 90) << "Go's http.Transport IdleConnTimeout (kube-scheduler's extender client)";
  auto s = StartTestServer({});
  ASSERT_NE(s, nullptr);
  const int fd = testing::Connect(s->port(), "127.0.0.1");
  ASSERT_GE(fd, 0);
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  testing::SendAll(fd, get);
  EXPECT_NE(testing::ReadResponse(fd, 2000).find("200 OK"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // past cpp-httplib's 5 s default
  testing::SendAll(fd, get);
  EXPECT_NE(testing::ReadResponse(fd, 2000).find("200 OK"), std::string::npos) << "the idle connection was closed";
  ::close(fd);
}

// Issue 40 over TLS: connections that never finish the handshake wait in the front end, not on a
// worker (4 workers, 32 such connections from 2 addresses), and are closed at the header deadline.
TEST(ServerAdminTest, StalledTlsHandshakesHoldNoWorker) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v openssl >/dev/null 2>&1") != 0) << "openssl CLI not on PATH";
  const std::string dir = TestDir();
  ASSERT_TRUE(MakeCertificates(dir));
  ServerOptions o;
  o.tls_cert = dir + "/server.crt";
  o.tls_key = dir + "/server.key";
  o.threads = 4;
  o.config_path = dir + "/seedance.yaml";
  WriteFile(o.config_path, "server:\n  limits:\n    header_timeout: 1s\n");
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);
  std::vector<int> stalled;
  for (const char* from : {"127.0.0.2", "127.0.0.3"}) {
    for (int i = 0; i < 16; ++i) {
      const int fd = testing::Connect(s->port(), from);
      ASSERT_GE(fd, 0);
      if (i % 2 == 0) testing::SendAll(fd, std::string("\x16\x03\x01\x02\x00", 5));  // half a ClientHello
      stalled.push_back(fd);
    }
  }
  httplib::SSLClient c("127.0.0.1", s->port());
  c.set_ca_cert_path((dir + "/ca.crt").c_str());
  c.enable_server_certificate_verification(true);
  c.set_read_timeout(1, 0);
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  int closed = 0;
  for (int fd : stalled) {
    closed += testing::ReadAll(fd, 3000).empty() ? 1 : 0;  // closed without an answer
    ::close(fd);
  }
  EXPECT_EQ(closed, 32);
  EXPECT_EQ(s->app().metrics.Value("seedance_rejected_inputs_total", {{"reason", "header_timeout"}}), 32);
}

}  // namespace
}  // namespace seedance::server

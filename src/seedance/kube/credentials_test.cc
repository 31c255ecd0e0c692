#include "seedance/kube/credentials.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "seedance/kube/client.h"
#include "seedance/kube/testing/fake_apiserver.h"

namespace seedance::kube {
namespace {

std::string Dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "/kube_creds_" + info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// base64 of "CA-PEM", "CERT-PEM", "KEY-PEM".
constexpr const char* kConfig = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: other
  cluster: {server: "https://other:6443"}
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: Q0EtUEVN
contexts:
- name: dev
  context: {cluster: other, user: dev-user}
- name: prod
  context: {cluster: prod-cluster, user: admin}
users:
- name: dev-user
  user: {tokenFile: token.txt}
- name: admin
  user:
    client-certificate-data: Q0VSVC1QRU0=
    client-key-data: S0VZLVBFTQ==
)";

TEST(KubeconfigTest, CurrentContextWithInlineCertificates) {
  const std::string dir = Dir();
  Write(dir + "/config", kConfig);
  auto c = LoadKubeconfig(dir + "/config");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "CA-PEM");
  EXPECT_EQ(c->client_cert_pem, "CERT-PEM");
  EXPECT_EQ(c->client_key_pem, "KEY-PEM");
  EXPECT_TRUE(c->token.empty());
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, NamedContextTokenFileRelativeToTheKubeconfig) {
  const std::string dir = Dir();
  Write(dir + "/config", kConfig);
  Write(dir + "/token.txt", "s3cret\n");
  auto c = LoadKubeconfig(dir + "/config", "dev");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->server, "https://other:6443");
  EXPECT_EQ(c->token, "s3cret");
  EXPECT_TRUE(c->ca_pem.empty());
}

TEST(KubeconfigTest, FilesAndInsecure) {
  const std::string dir = Dir();
  Write(dir + "/ca.crt", "CA FILE");
  Write(dir + "/c.crt", "CERT FILE");
  Write(dir + "/c.key", "KEY FILE");
  Write(dir + "/config", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h", certificate-authority: ca.crt, insecure-skip-tls-verify: true}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {client-certificate: c.crt, client-key: )" + dir + R"(/c.key, token: abc}}]
)");
  auto c = LoadKubeconfig(dir + "/config");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->ca_pem, "CA FILE");
  EXPECT_EQ(c->client_cert_pem, "CERT FILE");
  EXPECT_EQ(c->client_key_pem, "KEY FILE");
  EXPECT_EQ(c->token, "abc");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, ErrorsNameTheField) {
  const std::string dir = Dir();
  struct Case {
    std::string yaml, field;
  };
  // Block style, as kubectl writes kubeconfigs.
  const std::string ctx = "current-context: x\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n";
  const std::string cluster = "clusters:\n- name: c\n  cluster:\n    server: https://h\n";
  const std::vector<Case> cases = {
      {"clusters: []\n", "current-context"},
      {"current-context: nope\ncontexts: []\n", "contexts: no context named 'nope'"},
      {ctx + "clusters: []\n", "clusters: no cluster named 'c'"},
      {ctx + "clusters:\n- name: c\n  cluster:\n    server: ftp://h\n", "clusters[0].cluster.server"},
      {ctx + cluster + "users:\n- name: u\n  user:\n    client-key-data: '*!'\n", "users[0].user.client-key-data: not base64"},
      {ctx + cluster + "users:\n- name: u\n  user:\n    client-certificate-data: QQ==\n",
       "users[0].user.client-key: a client certificate needs its key"},
      {ctx + cluster + "users:\n- name: u\n  user:\n    tokenFile: missing\n", "users[0].user.tokenFile"},
      {ctx + cluster + "users:\n- name: u\n  user:\n    exec:\n      command: aws\n",
       "users[0].user.exec: credential plugins are not supported"},
      {ctx + cluster + "    insecure-skip-tls-verify: maybe\n", "clusters[0].cluster.insecure-skip-tls-verify"},
      {ctx + cluster + "users:\n- name: other\n  user: {}\n", "users: no user named 'u'"},
  };
  for (const Case& k : cases) {
    Write(dir + "/config", k.yaml);
    auto c = LoadKubeconfig(dir + "/config");
    ASSERT_FALSE(c.has_value()) << k.yaml;
    EXPECT_EQ(c.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.error().message().find(k.field), std::string::npos) << c.error().message();
    EXPECT_NE(c.error().message().find("kubeconfig " + dir + "/config"), std::string::npos) << c.error().message();
  }
  auto missing = LoadKubeconfig(dir + "/absent");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("cannot read"), std::string::npos);
}

TEST(InClusterTest, ServiceAccountFiles) {
  const std::string dir = Dir();
  InClusterEnv env{"10.96.0.1", "443", dir};
  EXPECT_TRUE(InClusterConfigured(env));
  auto missing = LoadInCluster(env);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find(dir + "/token"), std::string::npos);
  Write(dir + "/token", "eyJhbGciOi\n");
  Write(dir + "/ca.crt", "CLUSTER CA");
  auto c = LoadInCluster(env);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token, "eyJhbGciOi");
  EXPECT_EQ(c->ca_pem, "CLUSTER CA");
  auto v6 = LoadInCluster(InClusterEnv{"fd00::1", "6443", dir});
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->server, "https://[fd00::1]:6443");
  EXPECT_FALSE(InClusterConfigured(InClusterEnv{"", "", dir}));
  auto no_port = LoadInCluster(InClusterEnv{"h", "", dir});
  ASSERT_FALSE(no_port.has_value());
  EXPECT_NE(no_port.error().message().find("KUBERNETES_SERVICE_PORT"), std::string::npos);
}

TEST(Base64Test, DecodesAndRejects) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(*DecodeBase64("aGVs\nbG8"), "hello");
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("aGV*").has_value());
  EXPECT_FALSE(DecodeBase64("a").has_value());
  EXPECT_FALSE(DecodeBase64("aG=Vs").has_value());
}

}  // namespace
}  // namespace seedance::kube

namespace seedance::kube {
namespace {

// A projected service-account token rotates under the same path (the kubelet swaps a symlink):
// the client sends the new token from the next request on, as client-go's file token source.
TEST(CredentialsTest, RotatedTokenFileIsReadAgain) {
  const std::string dir = Dir();
  testing::FakeApiServer fake;
  fake.RequireToken("token-1");
  Write(dir + "/token", "token-1\n");
  Write(dir + "/config", "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster: {server: \"" +
                             fake.url() + "\"}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n"
                             "  user: {tokenFile: token}\n");
  auto creds = LoadKubeconfig(dir + "/config");
  ASSERT_TRUE(creds.has_value()) << creds.error().message();
  ApiClient client(*creds);
  ASSERT_TRUE(client.Json("GET", "/api/v1/nodes").has_value());
  EXPECT_EQ(fake.last_authorization(), "Bearer token-1");
  // Rotation: a new file renamed over the old one; the API server accepts only the new token.
  Write(dir + "/token.new", "token-2-longer\n");
  std::filesystem::rename(dir + "/token.new", dir + "/token");
  fake.RequireToken("token-2-longer");
  auto r = client.Json("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.last_authorization(), "Bearer token-2-longer");
  // A file that disappears or is emptied mid-rotation keeps the last good token.
  Write(dir + "/token", "");
  EXPECT_TRUE(client.Json("GET", "/api/v1/nodes").has_value());
  EXPECT_EQ(fake.last_authorization(), "Bearer token-2-longer");
}

TEST(CredentialsTest, InClusterTokenIsReadAgainFromItsFile) {
  const std::string dir = Dir();
  Write(dir + "/token", "sa-token\n");
  Write(dir + "/ca.crt", "CA");
  InClusterEnv env;
  env.host = "10.96.0.1";
  env.port = "443";
  env.root = dir;
  auto c = LoadInCluster(env);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->token, "sa-token");
  EXPECT_EQ(c->token_file, dir + "/token");
}

}  // namespace
}  // namespace seedance::kube

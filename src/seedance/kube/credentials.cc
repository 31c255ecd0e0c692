#include "seedance/kube/credentials.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace seedance::kube {
namespace {

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError(fmt::format("cannot read '{}'", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// The entry of `list` (clusters / users / contexts) named `name`, its index in *index.
std::optional<YAML::Node> Named(const YAML::Node& list, const std::string& name, std::size_t* index) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].as<std::string>() == name) {
      *index = i;
      return e;
    }
  }
  return std::nullopt;
}

std::string Scalar(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap() || !map[key] || !map[key].IsScalar()) return "";
  return map[key].as<std::string>();
}

}  // namespace

Result<std::string> DecodeBase64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = value(c);
    if (v < 0 || padding) return InvalidArgumentError(fmt::format("not base64 (character '{}')", c));
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFu));
    }
  }
  if (bits >= 6) return InvalidArgumentError("not base64 (truncated)");
  return out;
}

Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context) {
  const std::string where = "kubeconfig " + path;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return InvalidArgumentError(fmt::format("{}: cannot read the file", where));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}:{}: {}", where, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return InvalidArgumentError(where + ": not a YAML mapping");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto resolve = [&](const std::string& file) {
    const std::filesystem::path p(file);
    return p.is_absolute() || dir.empty() ? file : (dir / p).string();
  };
  std::string ctx_name = context.empty() ? Scalar(root, "current-context") : context;
  if (ctx_name.empty()) return InvalidArgumentError(where + ": current-context: not set (and no --context given)");
  std::size_t ci = 0, cl = 0, ui = 0;
  const std::optional<YAML::Node> ctx = Named(root["contexts"], ctx_name, &ci);
  if (!ctx) return InvalidArgumentError(fmt::format("{}: contexts: no context named '{}'", where, ctx_name));
  const YAML::Node ctx_body = (*ctx)["context"];
  const std::string cluster_name = Scalar(ctx_body, "cluster");
  const std::string user_name = Scalar(ctx_body, "user");
  if (cluster_name.empty()) return InvalidArgumentError(fmt::format("{}: contexts[{}].context.cluster: not set", where, ci));
  const std::optional<YAML::Node> cluster_entry = Named(root["clusters"], cluster_name, &cl);
  if (!cluster_entry) {
    return InvalidArgumentError(fmt::format("{}: clusters: no cluster named '{}' (contexts[{}].context.cluster)", where,
                                            cluster_name, ci));
  }
  const YAML::Node cluster = (*cluster_entry)["cluster"];
  const std::string cpath = fmt::format("clusters[{}].cluster", cl);

  Credentials c;
  c.source = fmt::format("kubeconfig {} (context {})", path, ctx_name);
  c.server = Scalar(cluster, "server");
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    return InvalidArgumentError(fmt::format("{}: {}.server: expected https://host[:port], got '{}'", where, cpath, c.server));
  }
  const std::string insecure = Scalar(cluster, "insecure-skip-tls-verify");
  if (!insecure.empty() && insecure != "true" && insecure != "false") {
    return InvalidArgumentError(fmt::format("{}: {}.insecure-skip-tls-verify: expected true or false, got '{}'", where,
                                            cpath, insecure));
  }
  c.insecure_skip_tls_verify = insecure == "true";
  // *-data wins over the file, as in client-go.
  auto pem = [&](const YAML::Node& map, const std::string& base, const char* data_key, const char* file_key,
                 std::string* out) -> Status {
    if (const std::string data = Scalar(map, data_key); !data.empty()) {
      auto decoded = DecodeBase64(data);
      if (!decoded.has_value()) {
        return InvalidArgumentError(fmt::format("{}: {}.{}: {}", where, base, data_key, decoded.error().message()));
      }
      *out = std::move(*decoded);
      return Status::Ok();
    }
    if (const std::string file = Scalar(map, file_key); !file.empty()) {
      auto text = ReadWholeFile(resolve(file));
      if (!text.has_value()) {
        return InvalidArgumentError(fmt::format("{}: {}.{}: {}", where, base, file_key, text.error().message()));
      }
      *out = std::move(*text);
    }
    return Status::Ok();
  };
  SEEDANCE_RETURN_IF_ERROR(pem(cluster, cpath, "certificate-authority-data", "certificate-authority", &c.ca_pem));

  if (!user_name.empty()) {
    const std::optional<YAML::Node> user_entry = Named(root["users"], user_name, &ui);
    if (!user_entry) {
      return InvalidArgumentError(fmt::format("{}: users: no user named '{}' (contexts[{}].context.user)", where,
                                              user_name, ci));
    }
    const YAML::Node user = (*user_entry)["user"];
    const std::string upath = fmt::format("users[{}].user", ui);
    if (user && user.IsMap() && (user["exec"] || user["auth-provider"])) {
      return InvalidArgumentError(fmt::format(
          "{}: {}.{}: credential plugins are not supported; use a token, a tokenFile or a client certificate", where,
          upath, user["exec"] ? "exec" : "auth-provider"));
    }
    c.token = Scalar(user, "token");
    if (const std::string file = Scalar(user, "tokenFile"); c.token.empty() && !file.empty()) {
      auto text = ReadWholeFile(resolve(file));
      if (!text.has_value()) {
        return InvalidArgumentError(fmt::format("{}: {}.tokenFile: {}", where, upath, text.error().message()));
      }
      c.token = Trim(*text);
      if (c.token.empty()) return InvalidArgumentError(fmt::format("{}: {}.tokenFile: '{}' is empty", where, upath, file));
      c.token_file = resolve(file);
    }
    SEEDANCE_RETURN_IF_ERROR(pem(user, upath, "client-certificate-data", "client-certificate", &c.client_cert_pem));
    SEEDANCE_RETURN_IF_ERROR(pem(user, upath, "client-key-data", "client-key", &c.client_key_pem));
    if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
      return InvalidArgumentError(fmt::format("{}: {}.{}: a client certificate needs its key and the key its certificate",
                                              where, upath, c.client_cert_pem.empty() ? "client-certificate" : "client-key"));
    }
  }
  return c;
}

InClusterEnv InClusterFromEnvironment() {
  InClusterEnv env;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) env.host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) env.port = p;
  return env;
}

bool InClusterConfigured(const InClusterEnv& env) { return !env.host.empty(); }

Result<Credentials> LoadInCluster(const InClusterEnv& env) {
  if (env.host.empty()) return InvalidArgumentError("in-cluster: KUBERNETES_SERVICE_HOST: not set");
  if (env.port.empty()) return InvalidArgumentError("in-cluster: KUBERNETES_SERVICE_PORT: not set");
  Credentials c;
  c.source = "in-cluster";
  // An IPv6 service address needs brackets in the URL.
  const bool v6 = env.host.find(':') != std::string::npos;
  c.server = fmt::format("https://{}{}{}:{}", v6 ? "[" : "", env.host, v6 ? "]" : "", env.port);
  auto token = ReadWholeFile(env.root + "/token");
  if (!token.has_value()) return InvalidArgumentError("in-cluster: " + env.root + "/token: " + token.error().message());
  c.token = Trim(*token);
  if (c.token.empty()) return InvalidArgumentError("in-cluster: " + env.root + "/token: empty");
  c.token_file = env.root + "/token";
  auto ca = ReadWholeFile(env.root + "/ca.crt");
  if (!ca.has_value()) return InvalidArgumentError("in-cluster: " + env.root + "/ca.crt: " + ca.error().message());
  c.ca_pem = std::move(*ca);
  return c;
}

}  // namespace seedance::kube

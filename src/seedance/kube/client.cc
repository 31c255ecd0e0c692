#include "seedance/kube/client.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "seedance/core/json_depth.h"

namespace seedance::kube {
namespace {

struct Endpoint {
  bool tls = true;
  std::string host;
  int port = 443;
};

Endpoint ParseServer(const std::string& server) {
  Endpoint e;
  std::string rest = server;
  if (rest.rfind("https://", 0) == 0) {
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
    e.tls = false;
    e.port = 80;
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  std::size_t colon = std::string::npos;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find(']');
    e.host = rest.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    if (close != std::string::npos && close + 1 < rest.size() && rest[close + 1] == ':') colon = close + 1;
  } else {
    colon = rest.rfind(':');
    e.host = rest.substr(0, colon);
  }
  if (colon != std::string::npos) e.port = std::atoi(rest.c_str() + colon + 1);
  return e;
}

X509_STORE* StoreFromPem(const std::string& pem) {
  X509_STORE* store = X509_STORE_new();
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    X509_free(cert);
  }
  BIO_free(bio);
  return store;
}

}  // namespace

nlohmann::json ParsePeerJson(std::string_view text) {
  if (!CheckJsonDepth(text).ok()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

namespace {

// What tells a rewritten file from the one read: inode (an atomic rename or symlink swap), size
// and mtime. "" when it cannot be read.
std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TokenFile::TokenFile(std::string path, std::string token, int reread_s)
    : path_(std::move(path)), token_(std::move(token)), reread_s_(reread_s) {
  if (!path_.empty()) {
    stamp_ = FileStamp(path_);
    read_s_ = SteadySeconds();
  }
}

std::string TokenFile::Get() {
  std::lock_guard lock(mu_);
  if (path_.empty()) return token_;
  const std::string stamp = FileStamp(path_);
  const double now = SteadySeconds();
  if (stamp == stamp_ && now - read_s_ < reread_s_) return token_;
  std::ifstream in(path_, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string t = text.str();
  const auto first = t.find_first_not_of(" \t\r\n");
  const auto last = t.find_last_not_of(" \t\r\n");
  t = first == std::string::npos ? "" : t.substr(first, last - first + 1);
  if (in && !t.empty()) {
    token_ = std::move(t);
    stamp_ = stamp;
    read_s_ = now;
  }
  return token_;
}

ApiClient::ApiClient(Credentials credentials, ClientOptions options)
    : credentials_(std::move(credentials)),
      options_(options),
      token_(credentials_.token_file, credentials_.token, options_.token_reread_s) {}

ApiClient::~ApiClient() = default;

std::string ApiClient::token() { return token_.Get(); }

std::unique_ptr<httplib::ClientImpl> ApiClient::Connect(int read_timeout_s) {
  const Endpoint e = ParseServer(credentials_.server);
  std::unique_ptr<httplib::ClientImpl> client;
  if (e.tls) {
    std::unique_ptr<httplib::SSLClient> ssl;
    if (!credentials_.client_cert_pem.empty()) {
      BIO* cb = BIO_new_mem_buf(credentials_.client_cert_pem.data(), static_cast<int>(credentials_.client_cert_pem.size()));
      BIO* kb = BIO_new_mem_buf(credentials_.client_key_pem.data(), static_cast<int>(credentials_.client_key_pem.size()));
      X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
      EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
      ssl = std::make_unique<httplib::SSLClient>(e.host, e.port, cert, key);  // the context keeps its own refs
      if (cert != nullptr) X509_free(cert);
      if (key != nullptr) EVP_PKEY_free(key);
      BIO_free(cb);
      BIO_free(kb);
    } else {
      ssl = std::make_unique<httplib::SSLClient>(e.host, e.port);
    }
    if (!credentials_.ca_pem.empty()) ssl->set_ca_cert_store(StoreFromPem(credentials_.ca_pem));
    ssl->enable_server_certificate_verification(!credentials_.insecure_skip_tls_verify);
    client = std::move(ssl);
  } else {
    client = std::make_unique<httplib::ClientImpl>(e.host, e.port);
  }
  client->set_connection_timeout(options_.connect_timeout_s, 0);
  client->set_read_timeout(read_timeout_s, 0);
  client->set_write_timeout(options_.request_timeout_s, 0);
  if (const std::string t = token(); !t.empty()) client->set_bearer_token_auth(t.c_str());
  client->set_default_headers({{"Accept", "application/json"}, {"User-Agent", "seedance"}});
  return client;
}

std::string ApiClient::StatusMessage(const std::string& body) {
  const auto j = ParsePeerJson(body);
  if (j.is_object() && j.value("kind", "") == "Status" && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  return "";
}

Result<HttpResponse> ApiClient::Request(std::string_view method, const std::string& path, const std::string& body) {
  auto client = Connect(options_.request_timeout_s);
  httplib::Result r{nullptr, httplib::Error::Unknown};
  if (method == "GET") {
    r = client->Get(path.c_str());
  } else if (method == "POST") {
    r = client->Post(path.c_str(), body, "application/json");
  } else if (method == "PUT") {
    r = client->Put(path.c_str(), body, "application/json");
  } else if (method == "DELETE") {
    r = client->Delete(path.c_str());
  } else {
    return InvalidArgumentError(fmt::format("method: {} not supported", method));
  }
  if (!r) {
    return UnavailableError(fmt::format("kube-apiserver {}: {} {}: {}", credentials_.server, method, path,
                                        httplib::to_string(r.error())));
  }
  return HttpResponse{r->status, r->body};
}

Result<nlohmann::json> ApiClient::Json(std::string_view method, const std::string& path, const nlohmann::json& body) {
  SEEDANCE_ASSIGN_OR_RETURN(HttpResponse r, Request(method, path, body.is_null() ? std::string() : body.dump()));
  if (r.status >= 200 && r.status < 300) {
    if (Status depth = CheckJsonDepth(r.body); !depth.ok()) {
      return UnavailableError(fmt::format("kube-apiserver {} {}: answer refused: {}", method, path, depth.message()));
    }
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_discarded()) {
      return UnavailableError(fmt::format("kube-apiserver {} {}: answer is not JSON", method, path));
    }
    return j;
  }
  std::string message = StatusMessage(r.body);
  if (message.empty()) message = r.body.substr(0, 200);
  const std::string text = fmt::format("kube-apiserver answered {} to {} {}: {}", r.status, method, path, message);
  const auto reason = [&] {
    const auto j = ParsePeerJson(r.body);
    return j.is_object() ? j.value("reason", "") : std::string();
  }();
  switch (r.status) {
    case 404: return NotFoundError(text);
    case 409: return reason == "AlreadyExists" ? Status(StatusCode::kAlreadyExists, text) : FailedPreconditionError(text);
    case 410: return OutOfRangeError(text);
    case 429: return UnavailableError(text);
    default: return r.status >= 500 ? UnavailableError(text) : InvalidArgumentError(text);
  }
}

Status ApiClient::Stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                         int* status_out, std::string* rest, const std::atomic<bool>* cancelled) {
  auto client = Connect(options_.stream_idle_timeout_s);
  {
    std::lock_guard lock(mu_);
    streams_.insert(client.get());
  }
  if (cancelled != nullptr && cancelled->load()) {
    std::lock_guard lock(mu_);
    streams_.erase(client.get());
    *status_out = 0;
    return UnavailableError("cancelled");
  }
  int status = 0;
  std::string buffer;
  bool stopped = false;
  auto r = client->Get(
      path.c_str(), httplib::Headers{},
      [&](const httplib::Response& res) {
        status = res.status;
        return true;
      },
      [&](const char* data, std::size_t len) {
        buffer.append(data, len);
        if (status < 200 || status >= 300) return buffer.size() < (1u << 20);
        std::size_t start = 0;
        for (std::size_t nl = buffer.find('\n', start); nl != std::string::npos; nl = buffer.find('\n', start)) {
          std::string_view line(buffer.data() + start, nl - start);
          start = nl + 1;
          if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
          if (line.empty()) continue;
          if (!on_line(line)) {
            stopped = true;
            break;
          }
        }
        buffer.erase(0, start);
        return !stopped;
      });
  {
    std::lock_guard lock(mu_);
    streams_.erase(client.get());
  }
  *status_out = status;
  *rest = std::move(buffer);
  if (stopped) return Status::Ok();
  if (!r) {
    if (r.error() == httplib::Error::Canceled && status >= 200 && status < 300) return Status::Ok();
    return UnavailableError(fmt::format("kube-apiserver {}: GET {}: {}{}", credentials_.server, path,
                                        status == 0 ? "" : "stream broken: ", httplib::to_string(r.error())));
  }
  return Status::Ok();
}

void ApiClient::CancelStreams() {
  std::lock_guard lock(mu_);
  for (httplib::ClientImpl* c : streams_) c->stop();
}

}  // namespace seedance::kube

#include "seedance/server/kube_binder.h"

#include <fstream>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "seedance/kube/client.h"
#include "seedance/server/config.h"

namespace seedance::server {

Result<std::unique_ptr<KubeBinder>> KubeBinder::FromConfig(const ServerConfig& config) {
  auto b = std::unique_ptr<KubeBinder>(new KubeBinder());
  b->url_ = config.kube_api_url;
  while (!b->url_.empty() && b->url_.back() == '/') b->url_.pop_back();
  b->ca_file_ = config.kube_ca_file;
  std::string token;
  if (!config.kube_token_file.empty()) {
    std::ifstream in(config.kube_token_file);
    if (!in || !std::getline(in, token) || token.empty())
      return InvalidArgumentError("server.kube_token_file: cannot read a token from '" + config.kube_token_file + "'");
  }
  b->token_ = std::make_shared<kube::TokenFile>(config.kube_token_file, token);
  if (!b->ca_file_.empty() && !std::ifstream(b->ca_file_))
    return InvalidArgumentError("server.kube_ca_file: cannot read '" + b->ca_file_ + "'");
  return b;
}

KubeBinder::~KubeBinder() = default;

std::unique_ptr<httplib::Client> KubeBinder::Take() const {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  auto client = std::make_unique<httplib::Client>(url_);
  client->set_connection_timeout(2, 0);
  client->set_read_timeout(5, 0);
  client->set_keep_alive(true);
  if (!ca_file_.empty()) client->set_ca_cert_path(ca_file_.c_str());
  client->enable_server_certificate_verification(true);
  return client;
}

void KubeBinder::Give(std::unique_ptr<httplib::Client> client) const {
  std::lock_guard lock(mu_);
  if (idle_.size() < kIdleConnections) idle_.push_back(std::move(client));
}

Status KubeBinder::Bind(const std::string& namespace_name, const std::string& pod, const std::string& uid,
                        const std::string& node) const {
  std::unique_ptr<httplib::Client> held = Take();
  httplib::Client& client = *held;
  // The file's current token on every bind (a rotated one is sent on a kept connection too).
  if (const std::string token = token_->Get(); !token.empty()) client.set_bearer_token_auth(token.c_str());
  nlohmann::json metadata = {{"name", pod}, {"namespace", namespace_name}};
  if (!uid.empty()) metadata["uid"] = uid;
  const nlohmann::json binding = {{"apiVersion", "v1"},
                                  {"kind", "Binding"},
                                  {"metadata", metadata},
                                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  std::string path = "/api/v1/namespaces/";
  path += namespace_name;
  path += "/pods/";
  path += pod;
  path += "/binding";
  auto res = client.Post(path.c_str(), binding.dump(), "application/json");
  if (!res) return UnavailableError("kube-apiserver " + url_ + ": " + httplib::to_string(res.error()));
  Give(std::move(held));  // only a connection that answered goes back to the pool
  if (res->status != 201 && res->status != 200) {
    // A v1.Status body carries the reason ("pods \"x\" not found", "already assigned").
    auto status = kube::ParsePeerJson(res->body);
    std::string message = status.is_object() ? status.value("message", res->body) : res->body;
    return UnavailableError("kube-apiserver answered " + std::to_string(res->status) + " to the Binding of " +
                            namespace_name + "/" + pod + ": " + message);
  }
  return Status::Ok();
}

}  // namespace seedance::server

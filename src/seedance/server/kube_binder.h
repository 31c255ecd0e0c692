#pragma once

// Creates a pod's Binding in the Kubernetes API server, as kube-scheduler's DefaultBinder does:
// POST {api}/api/v1/namespaces/{namespace}/pods/{name}/binding with a v1.Binding (metadata name,
// namespace, uid; target Node). Used by /extender/bind when kube-scheduler delegates binding
// (bindVerb) and `server.kube_api_url` is set.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/kube/client.h"

namespace httplib {
class Client;
}

namespace seedance::server {

struct ServerConfig;

class KubeBinder {
 public:
  // Reads the token file now (its first line must be a token); each Bind sends the file's
  // current token (kube::TokenFile: read again when the file changes, as projected service-account
  // tokens rotate). Errors: kInvalidArgument naming the config key.
  static Result<std::unique_ptr<KubeBinder>> FromConfig(const ServerConfig& config);
  ~KubeBinder();

  // Errors: kUnavailable with the API server's status and message (kube-scheduler retries the pod).
  // Binds run side by side (kube-scheduler binds each pod from its own goroutine); each takes a
  // kept-alive connection from a pool, so a bind is one request on an open (TLS) connection, not
  // a TCP and TLS handshake and a CA file load per pod (issue 40: that was most of a bind's cost).
  Status Bind(const std::string& namespace_name, const std::string& pod, const std::string& uid,
              const std::string& node) const;

 private:
  std::unique_ptr<httplib::Client> Take() const;
  void Give(std::unique_ptr<httplib::Client> client) const;

  std::string url_, ca_file_;
  std::shared_ptr<kube::TokenFile> token_;  // never null
  static constexpr std::size_t kIdleConnections = 16;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<httplib::Client>> idle_;  // at most kIdleConnections
};

}  // namespace seedance::server

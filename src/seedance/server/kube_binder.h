#pragma once

// Creates a pod's Binding in the Kubernetes API server, as kube-scheduler's DefaultBinder does:
// POST {api}/api/v1/namespaces/{namespace}/pods/{name}/binding with a v1.Binding (metadata name,
// namespace, uid; target Node). Used by /extender/bind when kube-scheduler delegates binding
// (bindVerb) and `server.kube_api_url` is set.

#include <memory>
#include <string>

#include "seedance/core/status.h"
#include "seedance/kube/client.h"

namespace seedance::server {

struct ServerConfig;

class KubeBinder {
 public:
  // Reads the token file now (its first line must be a token); each Bind sends the file's
  // current token (kube::TokenFile: read again when the file changes, as projected service-account
  // tokens rotate). Errors: kInvalidArgument naming the config key.
  static Result<std::unique_ptr<KubeBinder>> FromConfig(const ServerConfig& config);

  // Errors: kUnavailable with the API server's status and message (kube-scheduler retries the pod).
  Status Bind(const std::string& namespace_name, const std::string& pod, const std::string& uid,
              const std::string& node) const;

 private:
  std::string url_, ca_file_;
  std::shared_ptr<kube::TokenFile> token_;  // never null
};

}  // namespace seedance::server

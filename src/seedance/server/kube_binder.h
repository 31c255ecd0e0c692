#pragma once

// Creates a pod's Binding in the Kubernetes API server, as kube-scheduler's DefaultBinder does:
// POST {api}/api/v1/namespaces/{namespace}/pods/{name}/binding with a v1.Binding (metadata name,
// namespace, uid; target Node). Used by /extender/bind when kube-scheduler delegates binding
// (bindVerb) and `server.kube_api_url` is set.

#include <memory>
#include <string>

#include "seedance/core/status.h"

namespace seedance::server {

struct ServerConfig;

class KubeBinder {
 public:
  // Reads the token file now (the first line). Errors: kInvalidArgument naming the config key.
  static Result<std::unique_ptr<KubeBinder>> FromConfig(const ServerConfig& config);

  // Errors: kUnavailable with the API server's status and message (kube-scheduler retries the pod).
  Status Bind(const std::string& namespace_name, const std::string& pod, const std::string& uid,
              const std::string& node) const;

 private:
  std::string url_, token_, ca_file_;
};

}  // namespace seedance::server

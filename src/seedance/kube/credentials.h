#pragma once

// How seedance reaches a Kubernetes API server: the address, who it is (bearer token or client
// certificate) and whom it trusts (CA bundle, or no verification). Two sources, as client-go's:
//   - a kubeconfig file (`seedance server --kubeconfig FILE`, or `server.kubeconfig`): its
//     current-context (or the one named), that context's cluster (server,
//     certificate-authority[-data], insecure-skip-tls-verify) and user (token, tokenFile,
//     client-certificate[-data], client-key[-data]). Relative file paths are resolved against
//     the kubeconfig's directory, as kubectl does; *-data fields are base64 of the PEM.
//   - in-cluster: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT and the pod's service
//     account (token, ca.crt under /var/run/secrets/kubernetes.io/serviceaccount; the root is
//     overridable for tests).
// Errors are kInvalidArgument naming the file and the field ("kubeconfig k.yaml:
// users[0].user.client-key-data: not base64").

#include <string>

#include "seedance/core/status.h"

namespace seedance::kube {

struct Credentials {
  std::string server;  // "https://host:port" or "http://host:port", no trailing slash
  std::string token;   // bearer token; "" = none
  // Where the token was read ("" = given inline): a kubeconfig's tokenFile or the in-cluster
  // service-account token, which the kubelet rotates (projected tokens); ApiClient re-reads it.
  std::string token_file;
  std::string client_cert_pem, client_key_pem;  // both or neither
  std::string ca_pem;  // CA bundle; "" = the system's trust store
  bool insecure_skip_tls_verify = false;
  std::string source;  // for logs: "kubeconfig FILE (context C)" or "in-cluster"
};

// Reads `path`; `context` "" = the file's current-context.
Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context = "");

struct InClusterEnv {
  std::string host, port;  // KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT
  std::string root = "/var/run/secrets/kubernetes.io/serviceaccount";
};
// The process environment (root at its default).
InClusterEnv InClusterFromEnvironment();
// True when the environment names an API server (host set); the files are read by LoadInCluster.
bool InClusterConfigured(const InClusterEnv& env);
// Errors name the variable or file that is missing or empty.
Result<Credentials> LoadInCluster(const InClusterEnv& env);

// Standard base64 (RFC 4648, padding optional, whitespace ignored). Errors: kInvalidArgument.
Result<std::string> DecodeBase64(std::string_view text);

}  // namespace seedance::kube

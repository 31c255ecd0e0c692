#pragma once

// A small Kubernetes API client over cpp-httplib (OpenSSL): JSON requests and one streaming
// reader for watches. One connection per call (the client is shared by threads; cpp-httplib's
// clients are not). TLS: the credentials' CA bundle (else the system's), client certificate,
// or no verification when the kubeconfig says insecure-skip-tls-verify.
//
// Errors of Json(): kUnavailable (transport, 5xx, 429), kNotFound (404), kAlreadyExists (409
// AlreadyExists), kFailedPrecondition (409 Conflict), kOutOfRange (410 Gone), kInvalidArgument
// (other 4xx); the message carries the API server's v1.Status message.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "seedance/core/status.h"
#include "seedance/kube/credentials.h"

namespace httplib {
class ClientImpl;
}

namespace seedance::kube {

// The kube-apiserver's JSON (answers, watch event lines): a discarded value when it is malformed
// or nests deeper than core's kMaxJsonDepth (checked before the DOM: nlohmann copies recursively).
nlohmann::json ParsePeerJson(std::string_view text);

struct ClientOptions {
  int connect_timeout_s = 5;
  int request_timeout_s = 30;   // JSON calls
  int stream_idle_timeout_s = 660;  // a watch with no bytes this long is cut (above timeoutSeconds)
  // Credentials::token_file is read again when it changes (its inode, size or mtime: the kubelet
  // swaps a projected token's symlink) and at least this often, as client-go's cached file token
  // source (1 minute). A read that fails or finds the file empty keeps the previous token.
  int token_reread_s = 60;
};

// A bearer token read from a file and read again when the file changes (its inode, size or
// mtime: the kubelet swaps a projected token's symlink) and at least every `reread_s` seconds, as
// client-go's cached file token source; a read that fails or finds the file empty keeps the last
// token. An empty path: the given token, always. Thread-safe.
class TokenFile {
 public:
  TokenFile(std::string path, std::string token, int reread_s = 60);
  std::string Get();

 private:
  std::mutex mu_;
  std::string path_, token_, stamp_;
  int reread_s_;
  double read_s_ = 0;  // steady seconds of the last read
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

class ApiClient {
 public:
  ApiClient(Credentials credentials, ClientOptions options = {});
  ~ApiClient();

  // One request; any HTTP status is a value. Errors: kUnavailable (no response).
  Result<HttpResponse> Request(std::string_view method, const std::string& path, const std::string& body = "");
  // A request whose 2xx body is JSON; other statuses map to errors as above.
  Result<nlohmann::json> Json(std::string_view method, const std::string& path, const nlohmann::json& body = nullptr);

  // GET `path` and hand each complete line of the body to `on_line` (false stops reading). A
  // line split across chunks is joined first. Returns the HTTP status; *rest receives a
  // trailing partial line (a stream cut mid-line) or, for a non-2xx status, the body.
  // Errors: kUnavailable when no response came, or the stream broke (the message says which);
  // *status_out is set when headers arrived.
  Status Stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                int* status_out, std::string* rest, const std::atomic<bool>* cancelled = nullptr);

  // Closes every stream in progress; later calls work. A stream whose `cancelled` flag is set
  // before it connects does not start (set the flag, then call this: no stream is missed).
  void CancelStreams();

  const Credentials& credentials() const { return credentials_; }
  // The bearer token the next request sends (re-read from Credentials::token_file when due).
  std::string token();

  // The message of a v1.Status body ("" when the body is not one).
  static std::string StatusMessage(const std::string& body);

 private:
  std::unique_ptr<httplib::ClientImpl> Connect(int read_timeout_s);

  Credentials credentials_;
  ClientOptions options_;
  std::string scheme_host_port_;
  std::mutex mu_;
  TokenFile token_;
  std::set<httplib::ClientImpl*> streams_;
};

}  // namespace seedance::kube

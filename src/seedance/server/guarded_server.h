#pragma once

// cpp-httplib servers (plain and TLS) whose connections are read by a stream of ours, so that the
// limits cpp-httplib 0.11 lacks hold before anything is parsed or stored:
//   - the request line and header fields of one request: at most header_bytes bytes and
//     header_count fields, else 431 (Request Header Fields Too Large) and the connection closes;
//   - a deadline for the whole header section of each request (header_timeout_ms from its first
//     byte's wait, keep-alive requests included; TLS: the handshake too), else 408 and close, so
//     a client that sends one header line every few seconds (slowloris) cannot hold a worker;
//   - open connections per client address: past connections_per_client the new connection gets
//     429 (plain HTTP; a TLS one is closed) and is closed at once, so one client cannot take all
//     the worker threads.
// How: httplib::Server's private virtual process_and_close_socket is overridden (a subclass may
// override a private virtual); it runs the keep-alive loop itself on the protected
// Server::process_request with a non-blocking socket (OpenSSL's SSL_read/SSL_write for TLS) and
// poll() against the deadline. Under mTLS the client certificate is requested but optional
// (SSL_VERIFY_PEER without SSL_VERIFY_FAIL_IF_NO_PEER_CERT), so bearer-token clients still
// connect; a presented certificate must verify against the client CA or the handshake fails.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace httplib {
class Server;
}

namespace seedance::server {

struct ConnectionLimits {
  std::size_t header_bytes = 64 << 10;
  std::size_t header_count = 100;
  std::int64_t header_timeout_ms = 10'000;
  std::size_t connections_per_client = 16;
};

// Called (on the connection's thread) for each refused request or connection, with the reason:
// "header_bytes", "header_count", "header_timeout", "connections_per_client".
using RefusalHook = std::function<void(std::string_view reason, const std::string& client)>;

// After bind_to_port / bind_to_any_port: raises the listen backlog from cpp-httplib's 5 to
// `backlog`, so a burst of connections waits in the kernel's queue instead of SYN retries of a
// second or more (which also let a few slow clients pace everyone's accepts). Only for servers
// made below; returns false for others or when listen() fails.
bool SetListenBacklog(httplib::Server& server, int backlog);

std::unique_ptr<httplib::Server> MakeGuardedServer(const ConnectionLimits& limits, RefusalHook on_refusal);
// `client_ca` empty: plain TLS. is_valid() is false when a file does not load.
std::unique_ptr<httplib::Server> MakeGuardedSslServer(const std::string& cert, const std::string& key,
                                                      const std::string& client_ca, const ConnectionLimits& limits,
                                                      RefusalHook on_refusal);

}  // namespace seedance::server

#pragma once

// cpp-httplib servers (plain and TLS) whose connections are read by an event-driven front end of
// ours (connection_reactor.h), so that the limits cpp-httplib 0.11 lacks hold before anything is
// parsed or stored, and no worker thread ever waits on a slow socket (issue 40):
//   - one reactor thread holds every connection while its request arrives and between requests
//     (idle keep-alive); a worker gets it only with the whole request (headers and a body of at
//     most the payload limit) in memory, and hands it back after the answer (waiting at most
//     1 ms, a round trip, for a keep-alive client's next request first);
//   - the request line and header fields of one request: at most header_bytes bytes and
//     header_count fields, else 431 (Request Header Fields Too Large) and the connection closes;
//   - deadlines per request from its first byte: the header section within header_timeout_ms
//     (TLS: the handshake too), headers and body within request_timeout_ms, else 408 and close (a
//     slowloris client, or a body at one byte every few seconds, is cut); an idle keep-alive
//     connection closes after the server's keep-alive timeout;
//   - open connections per client address: past connections_per_client the new connection gets
//     429 (plain HTTP; a TLS one is closed) and is closed at once.
// With workers only ever running complete requests, slow clients from any number of addresses
// cost the reactor a pollfd each, not a thread: a normal client is answered at once.
// How: httplib::Server's private virtual process_and_close_socket is overridden (a subclass may
// override a private virtual) to park the accepted socket in the reactor, and new_task_queue to
// a queue that owns the workers and the reactor; requests run on the protected
// Server::process_request with a stream over the gathered bytes (OpenSSL's SSL_read/SSL_write for
// TLS). Under mTLS the client certificate is requested but optional (SSL_VERIFY_PEER without
// SSL_VERIFY_FAIL_IF_NO_PEER_CERT), so bearer-token clients still connect; a presented
// certificate must verify against the client CA or the handshake fails.
// Do not set new_task_queue on these servers: ConnectionLimits::workers sizes the pool.

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
  std::int64_t request_timeout_ms = 30'000;  // headers and body of one request
  std::size_t workers = 32;                  // threads that run complete requests
};

// Called (on the connection's thread) for each refused request or connection, with the reason:
// "header_bytes", "header_count", "header_timeout", "request_timeout", "connections_per_client".
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

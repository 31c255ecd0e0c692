#pragma once

// The event-driven front end of the guarded servers (guarded_server.h, issue 40): one thread
// that owns every connection while its bytes are on the way, so that no worker thread waits on a
// socket. A connection is parked here between requests (idle keep-alive) and while a request's
// header section and body arrive; it goes to a worker only with the whole request in its buffer,
// and comes back after the answer. Deadlines are the reactor's: the header section within
// header_timeout_ms of the request's first byte, headers and body within request_timeout_ms,
// the next request's first byte within the keep-alive timeout; past one the client gets 408 (an
// idle connection is just closed). TLS connections do their handshake here too (non-blocking
// SSL_accept within the header deadline).

#include <openssl/ssl.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace seedance::server {

using ReactorClock = std::chrono::steady_clock;

struct ReactorLimits {
  std::size_t header_bytes = 64 << 10;
  std::size_t header_count = 100;
  std::int64_t header_timeout_ms = 10'000;
  std::int64_t request_timeout_ms = 30'000;
  std::int64_t keep_alive_timeout_ms = 5'000;
  std::size_t max_body = 64u << 20;  // a larger Content-Length goes to a worker at once (it answers 413)
};

// One client connection (non-blocking socket) and what has arrived of its next request.
struct Connection {
  Connection(int s, SSL* t, std::string c, std::function<void()> closed)
      : sock(s), ssl(t), client(std::move(c)), on_close(std::move(closed)) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();  // closes the socket (TLS: close_notify first), then on_close

  int sock;
  SSL* ssl;  // nullptr: plain HTTP
  std::string client;
  std::function<void()> on_close;
  bool handshaken = false;  // TLS: SSL_accept done
  std::string in;           // bytes read and not yet consumed by a worker, from `off`
  std::size_t off = 0;
  std::size_t requests = 0;  // answered so far

  // The request being gathered (reset by NextRequest).
  bool started = false;  // its first byte arrived
  ReactorClock::time_point header_deadline{}, request_deadline{};
  ReactorClock::time_point idle_deadline{};  // keep-alive: the next request must start by then
  std::size_t scanned = 0;                   // bytes of `in` (from off) the header scan has seen
  std::size_t line_length = 0, lines = 0;
  std::size_t header_end = 0;  // > 0: the header section is complete, this many bytes
  std::size_t body = 0;        // bytes of body to wait for after the header section

  std::size_t buffered() const { return in.size() - off; }
  // Drops consumed bytes and sets up the next request's deadlines (`now`: a worker just answered).
  void NextRequest(ReactorClock::time_point now, const ReactorLimits& limits);
};

// What the bytes so far make of the request: complete, incomplete, or over a header limit.
enum class RequestState { kIncomplete, kComplete, kHeaderBytes, kHeaderCount };
// Scans what arrived since the last call (header limits, the end of the header section, the
// body's Content-Length). `*send_continue` is set when the client waits for "100 Continue"
// (Expect: 100-continue, removed from the buffer so that the handler does not send it again).
RequestState Examine(Connection& c, const ReactorLimits& limits, bool* send_continue);

// An answer of the guard itself: a JSON {"error","field"} body and Connection: close.
std::string GuardAnswer(int status, std::string_view reason, std::string_view message, std::string_view field);

class Reactor {
 public:
  // `ready`: runs a connection whose request is complete (on a worker). `refused(reason, client)`:
  // a request cut by a limit ("header_timeout", "request_timeout", "header_bytes", "header_count").
  using Ready = std::function<void(std::shared_ptr<Connection>)>;
  using Refused = std::function<void(std::string_view reason, const std::string& client)>;
  Reactor(ReactorLimits limits, Ready ready, Refused refused);
  ~Reactor();

  // Takes a connection (new, or back from a worker between requests). Thread-safe; after Stop
  // the connection is closed at once.
  void Park(std::shared_ptr<Connection> c);
  // Closes every parked connection and joins the thread.
  void Stop();
  std::size_t parked() const;

 private:
  enum class Step { kKeep, kReady, kClose };
  struct Slot {
    std::shared_ptr<Connection> conn;
    short events = 0;
    bool draining = false;  // answered and half-closed: discarding input until EOF or the deadline
    ReactorClock::time_point drain_until{};
    std::size_t drained = 0;
  };

  void Run();
  Step Progress(Slot& s);
  Step Timeout(Slot& s, ReactorClock::time_point now);
  Step Refuse(Slot& s, const char* reason, std::string answer);
  ReactorClock::time_point Deadline(const Slot& s) const;

  ReactorLimits limits_;
  Ready ready_;
  Refused refused_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Connection>> incoming_;
  bool stopping_ = false;
  std::size_t parked_ = 0;
  int wake_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace seedance::server

#include "seedance/server/guarded_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

namespace seedance::server {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t MsUntil(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
}

// poll() for `events` up to `ms` (< 0: not at all). Returns whether the socket is ready.
bool PollFor(int sock, short events, std::int64_t ms) {
  if (ms < 0) return false;
  pollfd p{sock, events, 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(ms, 60'000)));
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

std::string AddressOf(const sockaddr_storage& a, int* port) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    *port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    *port = ntohs(v6.sin6_port);
  }
  return text;
}

std::string PeerAddress(int sock, int* port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return AddressOf(a, port);
}

// Open connections per client address.
class ConnectionTable {
 public:
  bool Enter(const std::string& client, std::size_t cap) {
    std::lock_guard lock(mu_);
    std::size_t& n = open_[client];
    if (n >= cap) {
      if (n == 0) open_.erase(client);
      return false;
    }
    ++n;
    return true;
  }
  void Leave(const std::string& client) {
    std::lock_guard lock(mu_);
    auto it = open_.find(client);
    if (it != open_.end() && --it->second == 0) open_.erase(it);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::size_t> open_;
};

// One connection's byte stream (plain or TLS, non-blocking socket) with the header-section
// limits of the request being read. After a limit is crossed it reads nothing more and swallows
// what cpp-httplib writes, so that the caller answers 431/408 itself.
class GuardedStream final : public httplib::Stream {
 public:
  GuardedStream(int sock, SSL* ssl, const ConnectionLimits& limits, std::int64_t read_timeout_ms,
                std::int64_t write_timeout_ms)
      : sock_(sock), ssl_(ssl), limits_(limits), read_timeout_ms_(read_timeout_ms),
        write_timeout_ms_(write_timeout_ms) {}

  // A new request begins: its header section must arrive by `deadline`.
  void BeginRequest(Clock::time_point deadline) {
    in_headers_ = true;
    deadline_ = deadline;
    header_bytes_ = 0;
    lines_ = 0;
    line_length_ = 0;
  }
  // "" while within the limits, else the limit crossed.
  const char* violation() const { return violation_; }
  bool has_buffered() const { return off_ < len_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0); }

  bool is_readable() const override {
    return has_buffered() || PollFor(sock_, POLLIN, ReadWaitMs());
  }
  bool is_writable() const override { return PollFor(sock_, POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (violation_ != nullptr) return -1;
    if (off_ >= len_ && !Fill()) return -1;
    const std::size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buf_ + off_, n);
    off_ += n;
    if (in_headers_ && !Scan(ptr, n)) return -1;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (violation_ != nullptr) return static_cast<ssize_t>(size);  // the caller answers instead
    return WriteRaw(ptr, size);
  }

  // Writes all of `data` (the guard's own answers). Returns false on error or timeout.
  bool WriteAll(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = WriteRaw(data.data(), data.size());
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = PeerAddress(sock_, &port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ip.clear();
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = AddressOf(a, &port);
  }
  socket_t socket() const override { return sock_; }

 private:
  std::int64_t ReadWaitMs() const {
    return in_headers_ ? std::min(read_timeout_ms_, std::max<std::int64_t>(0, MsUntil(deadline_))) : read_timeout_ms_;
  }

  // Reads what is there into buf_, waiting up to the read timeout (the header deadline first).
  bool Fill() {
    off_ = len_ = 0;
    for (;;) {
      if (in_headers_ && MsUntil(deadline_) <= 0) {
        violation_ = "header_timeout";
        return false;
      }
      ssize_t n = 0;
      short want = POLLIN;
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int r = SSL_read(ssl_, buf_, sizeof buf_);
        if (r > 0) {
          n = r;
        } else {
          const int e = SSL_get_error(ssl_, r);
          if (e == SSL_ERROR_WANT_WRITE) {
            want = POLLOUT;
          } else if (e != SSL_ERROR_WANT_READ) {
            return false;
          }
        }
      } else {
        n = ::recv(sock_, buf_, sizeof buf_, 0);
        if (n == 0) return false;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
      }
      if (n > 0) {
        len_ = static_cast<std::size_t>(n);
        return true;
      }
      if (!PollFor(sock_, want, ReadWaitMs())) {
        if (in_headers_ && MsUntil(deadline_) <= 0) violation_ = "header_timeout";
        return false;
      }
    }
  }

  ssize_t WriteRaw(const char* ptr, size_t size) {
    for (;;) {
      short want = POLLOUT;
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int r = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
        if (r > 0) return r;
        const int e = SSL_get_error(ssl_, r);
        if (e == SSL_ERROR_WANT_READ) {
          want = POLLIN;
        } else if (e != SSL_ERROR_WANT_WRITE) {
          return -1;
        }
      } else {
        const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
        if (n >= 0) return n;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
      }
      if (!PollFor(sock_, want, write_timeout_ms_)) return -1;
    }
  }

  // Counts the header section's bytes and lines; false (violation_ set) past a limit. The section
  // ends at the first empty line ("\r\n" or "\n").
  bool Scan(const char* p, std::size_t n) {
    for (std::size_t i = 0; i < n && in_headers_; ++i) {
      if (++header_bytes_ > limits_.header_bytes) {
        violation_ = "header_bytes";
        return false;
      }
      if (p[i] == '\n') {
        if (line_length_ == 0 && lines_ > 0) {
          in_headers_ = false;
          break;
        }
        // The request line is not a header field.
        if (++lines_ > limits_.header_count + 1) {
          violation_ = "header_count";
          return false;
        }
        line_length_ = 0;
      } else if (p[i] != '\r') {
        ++line_length_;
      }
    }
    return true;
  }

  int sock_;
  SSL* ssl_;
  ConnectionLimits limits_;
  std::int64_t read_timeout_ms_, write_timeout_ms_;
  char buf_[16 << 10];
  std::size_t off_ = 0, len_ = 0;
  bool in_headers_ = false;
  Clock::time_point deadline_{};
  std::size_t header_bytes_ = 0, lines_ = 0, line_length_ = 0;
  const char* violation_ = nullptr;
};

std::string Answer(int status, std::string_view reason, std::string_view message, std::string_view field) {
  std::string body = R"({"error":")";
  body += message;
  body += R"(","field":")";
  body += field;
  body += "\"}";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += reason;
  out += "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\n\r\n";
  out += body;
  return out;
}

std::string ViolationAnswer(std::string_view what, const ConnectionLimits& l) {
  if (what == "header_timeout") {
    return Answer(408, "Request Timeout",
                  "the request's header section did not arrive within " + std::to_string(l.header_timeout_ms) + " ms",
                  "");
  }
  if (what == "header_count") {
    return Answer(431, "Request Header Fields Too Large",
                  "more than " + std::to_string(l.header_count) + " header fields", "");
  }
  return Answer(431, "Request Header Fields Too Large",
                "the request line and headers are over " + std::to_string(l.header_bytes) + " bytes", "");
}

// What SetListenBacklog needs of a guarded server (the listening socket is protected).
class ListenSocketAccess {
 public:
  virtual ~ListenSocketAccess() = default;
  virtual int ListenSocket() const = 0;
};

template <class Base>
class Guarded final : public Base, public ListenSocketAccess {
 public:
  int ListenSocket() const override { return this->svr_sock_; }

  template <class... Args>
  Guarded(ConnectionLimits limits, RefusalHook hook, Args&&... args)
      : Base(std::forward<Args>(args)...), limits_(limits), hook_(std::move(hook)) {}

 private:
  static constexpr bool kTls = std::is_same_v<Base, httplib::SSLServer>;

  bool process_and_close_socket(socket_t sock) override {
    int port = 0;
    const std::string client = PeerAddress(sock, &port);
    const int flags = ::fcntl(sock, F_GETFL, 0);
    ::fcntl(sock, F_SETFL, flags | O_NONBLOCK);
    const std::int64_t read_ms = static_cast<std::int64_t>(this->read_timeout_sec_) * 1000 +
                                 static_cast<std::int64_t>(this->read_timeout_usec_) / 1000;
    const std::int64_t write_ms = static_cast<std::int64_t>(this->write_timeout_sec_) * 1000 +
                                  static_cast<std::int64_t>(this->write_timeout_usec_) / 1000;
    bool ret = false;
    if (!table_.Enter(client, limits_.connections_per_client)) {
      if (hook_) hook_("connections_per_client", client);
      if constexpr (!kTls) {
        GuardedStream s(sock, nullptr, limits_, read_ms, write_ms);
        s.WriteAll(Answer(429, "Too Many Requests",
                          "more than " + std::to_string(limits_.connections_per_client) +
                              " open connections from " + client,
                          ""));
        LingeringClose(sock, 0);  // no waiting: a flood of refused connections must stay cheap
      }
      Close(sock);
      return false;
    }
    SSL* ssl = nullptr;
    bool handshake_ok = true;
    bool linger = false;
    if constexpr (kTls) {
      ssl = SSL_new(this->ssl_context());
      handshake_ok = ssl != nullptr && SSL_set_fd(ssl, sock) == 1 && Handshake(ssl, sock, client);
    }
    if (handshake_ok) {
      GuardedStream strm(sock, ssl, limits_, read_ms, write_ms);
      for (std::size_t count = this->keep_alive_max_count_; count > 0; --count) {
        if (!AwaitRequest(strm, sock)) break;
        strm.BeginRequest(Clock::now() + std::chrono::milliseconds(limits_.header_timeout_ms));
        bool closed = false;
        ret = this->process_request(strm, count == 1, closed, [ssl](httplib::Request& req) {
          if constexpr (kTls) req.ssl = ssl;
        });
        if (const char* v = strm.violation(); v != nullptr) {
          if (hook_) hook_(v, client);
          strm.WriteAll(ViolationAnswer(v, limits_));
          linger = true;
          ret = false;
          break;
        }
        if (!ret || closed) break;
      }
      if (ssl != nullptr) SSL_shutdown(ssl);
    }
    if (ssl != nullptr) SSL_free(ssl);
    if (linger) LingeringClose(sock, 250);
    Close(sock);
    table_.Leave(client);
    return ret;
  }

  // After an early answer the client may still be sending: closing with unread input would reset
  // the connection and could destroy the answer in flight. Half-close, then drain what arrives
  // for a moment (at most `wait_ms` and 1 MiB) before the caller closes.
  static void LingeringClose(int sock, std::int64_t wait_ms) {
    ::shutdown(sock, SHUT_WR);
    const auto end = Clock::now() + std::chrono::milliseconds(wait_ms);
    char sink[16 << 10];
    std::size_t drained = 0;
    while (drained < (1u << 20) && PollFor(sock, POLLIN, MsUntil(end))) {
      const ssize_t n = ::recv(sock, sink, sizeof sink, 0);
      if (n <= 0) break;
      drained += static_cast<std::size_t>(n);
    }
  }

  // Waits for the next request's first byte for up to the keep-alive timeout, watching for Stop.
  bool AwaitRequest(GuardedStream& strm, int sock) {
    if (strm.has_buffered()) return true;
    const auto end = Clock::now() + std::chrono::seconds(this->keep_alive_timeout_sec_);
    while (this->svr_sock_ != INVALID_SOCKET) {
      const std::int64_t left = MsUntil(end);
      if (left <= 0) return false;
      if (PollFor(sock, POLLIN, std::min<std::int64_t>(left, 100))) return true;
    }
    return false;
  }

  // The TLS handshake, within the header deadline.
  bool Handshake(SSL* ssl, int sock, const std::string& client) {
    const auto end = Clock::now() + std::chrono::milliseconds(limits_.header_timeout_ms);
    for (;;) {
      ERR_clear_error();
      const int r = SSL_accept(ssl);
      if (r == 1) return true;
      const int e = SSL_get_error(ssl, r);
      short want = 0;
      if (e == SSL_ERROR_WANT_READ) {
        want = POLLIN;
      } else if (e == SSL_ERROR_WANT_WRITE) {
        want = POLLOUT;
      } else {
        return false;
      }
      if (!PollFor(sock, want, MsUntil(end))) {
        if (hook_) hook_("header_timeout", client);
        return false;
      }
    }
  }

  static void Close(int sock) {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }

  ConnectionLimits limits_;
  RefusalHook hook_;
  ConnectionTable table_;
};

}  // namespace

bool SetListenBacklog(httplib::Server& server, int backlog) {
  const auto* access = dynamic_cast<const ListenSocketAccess*>(&server);
  if (access == nullptr || access->ListenSocket() == INVALID_SOCKET) return false;
  return ::listen(access->ListenSocket(), backlog) == 0;
}

std::unique_ptr<httplib::Server> MakeGuardedServer(const ConnectionLimits& limits, RefusalHook on_refusal) {
  return std::make_unique<Guarded<httplib::Server>>(limits, std::move(on_refusal));
}

std::unique_ptr<httplib::Server> MakeGuardedSslServer(const std::string& cert, const std::string& key,
                                                      const std::string& client_ca, const ConnectionLimits& limits,
                                                      RefusalHook on_refusal) {
  auto server = std::make_unique<Guarded<httplib::SSLServer>>(limits, std::move(on_refusal), cert.c_str(), key.c_str(),
                                                              client_ca.empty() ? nullptr : client_ca.c_str());
  if (server->is_valid() && !client_ca.empty()) {
    // Ask for a client certificate but do not require one: token clients still connect, and a
    // certificate that is presented must verify.
    SSL_CTX_set_verify(server->ssl_context(), SSL_VERIFY_PEER, nullptr);
  }
  return server;
}

}  // namespace seedance::server

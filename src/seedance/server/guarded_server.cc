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
#include <atomic>
#include <memory>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

#include "seedance/server/connection_reactor.h"

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

// A worker's view of a connection: the request the reactor gathered is in its buffer; reading
// past it (a body handed over early: chunked, too long) waits on the socket up to the read timeout
// and the request's deadline. Writes wait up to the write timeout.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(Connection& c, std::int64_t read_timeout_ms, std::int64_t write_timeout_ms)
      : c_(c), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  bool is_readable() const override {
    return c_.buffered() > 0 || (c_.ssl != nullptr && SSL_pending(c_.ssl) > 0) ||
           PollFor(c_.sock, POLLIN, ReadWaitMs());
  }
  bool is_writable() const override { return PollFor(c_.sock, POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (c_.buffered() == 0 && !Fill()) return -1;
    const std::size_t n = std::min(size, c_.buffered());
    std::memcpy(ptr, c_.in.data() + c_.off, n);
    c_.off += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      short want = POLLOUT;
      if (c_.ssl != nullptr) {
        ERR_clear_error();
        const int r = SSL_write(c_.ssl, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
        if (r > 0) return r;
        const int e = SSL_get_error(c_.ssl, r);
        if (e == SSL_ERROR_WANT_READ) {
          want = POLLIN;
        } else if (e != SSL_ERROR_WANT_WRITE) {
          return -1;
        }
      } else {
        const ssize_t n = ::send(c_.sock, ptr, size, MSG_NOSIGNAL);
        if (n >= 0) return n;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
      }
      if (!PollFor(c_.sock, want, write_timeout_ms_)) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = PeerAddress(c_.sock, &port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ip.clear();
    if (::getsockname(c_.sock, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = AddressOf(a, &port);
  }
  socket_t socket() const override { return c_.sock; }

  // Reads what has arrived, without waiting; whether anything did.
  bool ReadNow() {
    char buf[16 << 10];
    ssize_t n = 0;
    if (c_.ssl != nullptr) {
      ERR_clear_error();
      n = SSL_read(c_.ssl, buf, sizeof buf);
    } else {
      n = ::recv(c_.sock, buf, sizeof buf, 0);
    }
    if (n <= 0) return false;
    c_.in.append(buf, static_cast<std::size_t>(n));
    TakePending();
    return true;
  }

  // TLS: moves what OpenSSL already decrypted into the buffer (poll() would not see it).
  void TakePending() {
    char buf[16 << 10];
    while (c_.ssl != nullptr && SSL_pending(c_.ssl) > 0) {
      const int r = SSL_read(c_.ssl, buf, sizeof buf);
      if (r <= 0) break;
      c_.in.append(buf, static_cast<std::size_t>(r));
    }
  }

 private:
  std::int64_t ReadWaitMs() const {
    return std::min(read_timeout_ms_, std::max<std::int64_t>(0, MsUntil(c_.request_deadline)));
  }

  bool Fill() {
    char buf[16 << 10];
    for (;;) {
      if (MsUntil(c_.request_deadline) <= 0) return false;
      ssize_t n = 0;
      short want = POLLIN;
      if (c_.ssl != nullptr) {
        ERR_clear_error();
        const int r = SSL_read(c_.ssl, buf, sizeof buf);
        if (r > 0) {
          n = r;
        } else {
          const int e = SSL_get_error(c_.ssl, r);
          if (e == SSL_ERROR_WANT_WRITE) {
            want = POLLOUT;
          } else if (e != SSL_ERROR_WANT_READ) {
            return false;
          }
        }
      } else {
        n = ::recv(c_.sock, buf, sizeof buf, 0);
        if (n == 0) return false;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
      }
      if (n > 0) {
        c_.in.append(buf, static_cast<std::size_t>(n));
        return true;
      }
      if (!PollFor(c_.sock, want, ReadWaitMs())) return false;
    }
  }

  Connection& c_;
  std::int64_t read_timeout_ms_, write_timeout_ms_;
};

// What SetListenBacklog needs of a guarded server (the listening socket is protected).
class ListenSocketAccess {
 public:
  virtual ~ListenSocketAccess() = default;
  virtual int ListenSocket() const = 0;
};

// The task queue cpp-httplib's accept loop hands each accepted socket to: the workers, and the
// reactor that holds connections between requests. Its shutdown (the end of listen) closes
// the parked connections and waits for the requests being answered.
class GuardedQueue final : public httplib::TaskQueue {
 public:
  GuardedQueue(std::size_t workers, ReactorLimits limits, Reactor::Ready ready, Reactor::Refused refused)
      : pool_(workers), reactor_(limits, std::move(ready), std::move(refused)) {}
  void enqueue(std::function<void()> fn) override { pool_.enqueue(std::move(fn)); }
  void shutdown() override {
    reactor_.Stop();
    pool_.shutdown();
  }
  Reactor& reactor() { return reactor_; }

 private:
  httplib::ThreadPool pool_;
  Reactor reactor_;
};

// How long a worker waits for a keep-alive connection's next request before parking it.
constexpr std::int64_t kNextRequestGraceMs = 1;

template <class Base>
class Guarded final : public Base, public ListenSocketAccess {
 public:
  int ListenSocket() const override { return this->svr_sock_; }

  template <class... Args>
  Guarded(ConnectionLimits limits, RefusalHook hook, Args&&... args)
      : Base(std::forward<Args>(args)...), limits_(limits), hook_(std::move(hook)) {
    // Made at listen time, after set_keep_alive_timeout / set_payload_max_length.
    this->new_task_queue = [this] {
      auto* q = new GuardedQueue(
          std::max<std::size_t>(1, limits_.workers), Limits(),
          [this](std::shared_ptr<Connection> c) {
            queue_.load()->enqueue([this, c = std::move(c)]() mutable { Serve(std::move(c)); });
          },
          [this](std::string_view reason, const std::string& client) {
            if (hook_) hook_(reason, client);
          });
      queue_ = q;
      return q;
    };
  }

 private:
  static constexpr bool kTls = std::is_same_v<Base, httplib::SSLServer>;

  ReactorLimits Limits() const {
    ReactorLimits r;
    r.header_bytes = limits_.header_bytes;
    r.header_count = limits_.header_count;
    r.header_timeout_ms = limits_.header_timeout_ms;
    r.request_timeout_ms = limits_.request_timeout_ms;
    r.keep_alive_timeout_ms = static_cast<std::int64_t>(this->keep_alive_timeout_sec_) * 1000;
    r.max_body = this->payload_max_length_;
    return r;
  }

  // On a worker, right after accept: the per-client bound, then the connection goes to the
  // reactor (a TLS one does its handshake there, within the header deadline).
  bool process_and_close_socket(socket_t sock) override {
    int port = 0;
    const std::string client = PeerAddress(sock, &port);
    const int flags = ::fcntl(sock, F_GETFL, 0);
    ::fcntl(sock, F_SETFL, flags | O_NONBLOCK);
    if (!table_.Enter(client, limits_.connections_per_client)) {
      if (hook_) hook_("connections_per_client", client);
      if constexpr (!kTls) {
        const std::string answer = GuardAnswer(429, "Too Many Requests",
                                               "more than " + std::to_string(limits_.connections_per_client) +
                                                   " open connections from " + client,
                                               "");
        [[maybe_unused]] const ssize_t n = ::send(sock, answer.data(), answer.size(), MSG_NOSIGNAL);
        ::shutdown(sock, SHUT_WR);  // no lingering: a flood of refused connections must stay cheap
      }
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
      return false;
    }
    SSL* ssl = nullptr;
    if constexpr (kTls) {
      ssl = SSL_new(this->ssl_context());
      if (ssl == nullptr || SSL_set_fd(ssl, sock) != 1) {
        if (ssl != nullptr) SSL_free(ssl);
        ::close(sock);
        table_.Leave(client);
        return false;
      }
    }
    auto c = std::make_shared<Connection>(sock, ssl, client, [this, client] { table_.Leave(client); });
    const ReactorLimits r = Limits();
    c->NextRequest(Clock::now(), r);
    if constexpr (kTls) c->started = true;  // the handshake is due within the header deadline
    queue_.load()->reactor().Park(std::move(c));
    return true;
  }

  // On a worker: answers the complete request(s) in the buffer, then parks the connection again
  // (or lets it close).
  void Serve(std::shared_ptr<Connection> c) {
    const std::int64_t read_ms = static_cast<std::int64_t>(this->read_timeout_sec_) * 1000 +
                                 static_cast<std::int64_t>(this->read_timeout_usec_) / 1000;
    const std::int64_t write_ms = static_cast<std::int64_t>(this->write_timeout_sec_) * 1000 +
                                  static_cast<std::int64_t>(this->write_timeout_usec_) / 1000;
    const ReactorLimits limits = Limits();
    ConnectionStream strm(*c, read_ms, write_ms);
    SSL* ssl = c->ssl;
    for (;;) {
      bool closed = false;
      ++c->requests;
      const bool last = c->requests >= this->keep_alive_max_count_;
      const bool ok = this->process_request(strm, last, closed, [ssl](httplib::Request& req) {
        if constexpr (kTls) req.ssl = ssl;
      });
      if (!ok || closed || last || this->svr_sock_ == INVALID_SOCKET) return;  // closes it
      strm.TakePending();
      c->NextRequest(Clock::now(), limits);
      // A keep-alive client (kube-scheduler: filter, then prioritize) usually sends its next
      // request within a round trip: wait that long (at most kNextRequestGraceMs, the cost of a
      // request, never a slow client's pace) rather than a hand-off to the reactor and back.
      if (!c->started && PollFor(c->sock, POLLIN, kNextRequestGraceMs)) c->started = strm.ReadNow();
      if (c->started) {
        bool send_continue = false;
        const RequestState st = Examine(*c, limits, &send_continue);
        if (st == RequestState::kComplete) continue;
        if (st != RequestState::kIncomplete) return;  // over a header limit: closed
        if (send_continue) (void)strm.write("HTTP/1.1 100 Continue\r\n\r\n", 25);
      }
      queue_.load()->reactor().Park(std::move(c));
      return;
    }
  }

  ConnectionLimits limits_;
  RefusalHook hook_;
  ConnectionTable table_;
  std::atomic<GuardedQueue*> queue_{nullptr};
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

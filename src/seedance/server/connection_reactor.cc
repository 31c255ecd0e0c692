#include "seedance/server/connection_reactor.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <utility>

namespace seedance::server {
namespace {

std::chrono::milliseconds Ms(std::int64_t ms) { return std::chrono::milliseconds(ms); }

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Writes what the socket takes now (the guard's own small answers); never waits.
void WriteNow(Connection& c, std::string_view data) {
  while (!data.empty()) {
    long n = 0;
    if (c.ssl != nullptr) {
      ERR_clear_error();
      n = SSL_write(c.ssl, data.data(), static_cast<int>(data.size()));
    } else {
      n = ::send(c.sock, data.data(), data.size(), MSG_NOSIGNAL);
    }
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Connection::~Connection() {
  if (ssl != nullptr) {
    if (handshaken) SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  if (on_close) on_close();
}

void Connection::NextRequest(ReactorClock::time_point now, const ReactorLimits& limits) {
  in.erase(0, off);
  off = 0;
  // An idle connection must not keep the last body's buffer (up to --max-body) while it waits.
  if (in.capacity() > (256u << 10)) in.shrink_to_fit();
  scanned = line_length = lines = header_end = body = 0;
  started = !in.empty();
  header_deadline = now + Ms(limits.header_timeout_ms);
  request_deadline = now + Ms(limits.request_timeout_ms);
  idle_deadline = now + Ms(limits.keep_alive_timeout_ms);
}

RequestState Examine(Connection& c, const ReactorLimits& limits, bool* send_continue) {
  *send_continue = false;
  if (c.header_end == 0) {
    const std::size_t size = c.buffered();
    const char* p = c.in.data() + c.off;
    for (; c.scanned < size; ++c.scanned) {
      if (c.scanned + 1 > limits.header_bytes) return RequestState::kHeaderBytes;
      const char ch = p[c.scanned];
      if (ch == '\n') {
        if (c.line_length == 0 && c.lines > 0) {
          c.header_end = c.scanned + 1;
          break;
        }
        // The request line is not a header field.
        if (++c.lines > limits.header_count + 1) return RequestState::kHeaderCount;
        c.line_length = 0;
      } else if (ch != '\r') {
        ++c.line_length;
      }
    }
    if (c.header_end == 0) return RequestState::kIncomplete;
    // The body: one plain Content-Length within the limit is waited for; anything else (chunked,
    // two lengths, too long, not a number) goes to a worker at once, whose handlers refuse it
    // without reading the body (http_server.cc).
    std::string_view head(c.in.data() + c.off, c.header_end);
    std::size_t lengths = 0, length = 0;
    bool plain_length = false, chunked = false;
    std::size_t expect_at = std::string_view::npos, expect_len = 0;
    std::size_t pos = head.find('\n') + 1;  // past the request line
    while (pos < head.size()) {
      std::size_t eol = head.find('\n', pos);
      if (eol == std::string_view::npos) eol = head.size();
      const std::string_view line = head.substr(pos, eol - pos);
      const std::size_t colon = line.find(':');
      if (colon != std::string_view::npos) {
        const std::string_view name = Trim(line.substr(0, colon));
        const std::string_view value = Trim(line.substr(colon + 1));
        if (IEquals(name, "Content-Length")) {
          ++lengths;
          plain_length = !value.empty() && value.size() <= 19 &&
                         std::all_of(value.begin(), value.end(), [](char d) { return d >= '0' && d <= '9'; });
          if (plain_length) length = std::stoull(std::string(value));
        } else if (IEquals(name, "Transfer-Encoding")) {
          chunked = true;
        } else if (IEquals(name, "Expect") && IEquals(value, "100-continue")) {
          expect_at = pos;
          expect_len = eol + 1 - pos;
        }
      }
      pos = eol + 1;
    }
    if (!chunked && lengths == 1 && plain_length && length <= limits.max_body) {
      c.body = length;
      c.in.reserve(c.off + c.header_end + c.body);  // one allocation, not a doubling per read
    }
    if (expect_at != std::string_view::npos && c.body > 0 && c.buffered() < c.header_end + c.body) {
      c.in.erase(c.off + expect_at, expect_len);
      c.header_end -= expect_len;
      c.scanned = c.header_end;
      *send_continue = true;
    }
  }
  return c.buffered() >= c.header_end + c.body ? RequestState::kComplete : RequestState::kIncomplete;
}

std::string GuardAnswer(int status, std::string_view reason, std::string_view message, std::string_view field) {
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

Reactor::Reactor(ReactorLimits limits, Ready ready, Refused refused)
    : limits_(limits), ready_(std::move(ready)), refused_(std::move(refused)) {
  if (::pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Run(); });
}

Reactor::~Reactor() {
  Stop();
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

void Reactor::Park(std::shared_ptr<Connection> c) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      incoming_.push_back(std::move(c));
      const char b = 1;
      [[maybe_unused]] const auto n = ::write(wake_[1], &b, 1);
      return;
    }
  }
  c.reset();  // closes it
}

void Reactor::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    const char b = 1;
    [[maybe_unused]] const auto n = ::write(wake_[1], &b, 1);
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  incoming_.clear();
}

std::size_t Reactor::parked() const {
  std::lock_guard lock(mu_);
  return parked_ + incoming_.size();
}

ReactorClock::time_point Reactor::Deadline(const Slot& s) const {
  const Connection& c = *s.conn;
  if (s.draining) return s.drain_until;
  if (!c.started) return c.idle_deadline;
  return c.header_end == 0 ? std::min(c.header_deadline, c.request_deadline) : c.request_deadline;
}

void Reactor::Run() {
  std::vector<Slot> slots;
  std::vector<pollfd> fds;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      for (auto& c : incoming_) {
        Slot s;
        s.conn = std::move(c);
        s.events = POLLIN;
        slots.push_back(std::move(s));
      }
      incoming_.clear();
      parked_ = slots.size();
    }
    auto now = ReactorClock::now();
    std::int64_t wait_ms = 1000;
    fds.assign(1, pollfd{wake_[0], POLLIN, 0});
    for (const Slot& s : slots) {
      fds.push_back(pollfd{s.conn->sock, s.events, 0});
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline(s) - now).count() + 1;
      wait_ms = std::clamp<std::int64_t>(left, 0, wait_ms);
    }
    int r = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
    if (r < 0 && errno != EINTR) r = 0;
    if (fds[0].revents != 0) {
      char sink[64];
      while (::read(wake_[0], sink, sizeof sink) > 0) {
      }
    }
    now = ReactorClock::now();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      Slot& s = slots[i];
      Step step = fds[i + 1].revents != 0 ? Progress(s) : Step::kKeep;
      if (step == Step::kKeep && now >= Deadline(s)) step = Timeout(s, now);
      if (step == Step::kReady) {
        ready_(std::move(s.conn));
      } else if (step == Step::kClose) {
        s.conn.reset();
      } else {
        if (kept != i) slots[kept] = std::move(s);
        ++kept;
      }
    }
    slots.resize(kept);
  }
  slots.clear();  // closes them
}

Reactor::Step Reactor::Progress(Slot& s) {
  Connection& c = *s.conn;
  char buf[64 << 10];
  if (s.draining) {
    for (;;) {
      const ssize_t n = ::recv(c.sock, buf, sizeof buf, 0);
      if (n > 0) {
        s.drained += static_cast<std::size_t>(n);
        if (s.drained > (1u << 20)) return Step::kClose;
        continue;
      }
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? Step::kKeep : Step::kClose;
    }
  }
  if (c.ssl != nullptr && !c.handshaken) {
    ERR_clear_error();
    const int r = SSL_accept(c.ssl);
    if (r != 1) {
      const int e = SSL_get_error(c.ssl, r);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        s.events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return Step::kKeep;
      }
      return Step::kClose;
    }
    c.handshaken = true;
    s.events = POLLIN;
  }
  for (;;) {
    long n = 0;
    if (c.ssl != nullptr) {
      ERR_clear_error();
      n = SSL_read(c.ssl, buf, sizeof buf);
      if (n <= 0) {
        const int e = SSL_get_error(c.ssl, static_cast<int>(n));
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
          s.events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
          return Step::kKeep;
        }
        return Step::kClose;
      }
    } else {
      n = ::recv(c.sock, buf, sizeof buf, 0);
      if (n == 0) return Step::kClose;
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Step::kKeep : Step::kClose;
    }
    if (!c.started) {
      const auto now = ReactorClock::now();
      c.started = true;
      c.header_deadline = now + Ms(limits_.header_timeout_ms);
      c.request_deadline = now + Ms(limits_.request_timeout_ms);
    }
    c.in.append(buf, static_cast<std::size_t>(n));
    bool send_continue = false;
    switch (Examine(c, limits_, &send_continue)) {
      case RequestState::kHeaderBytes:
        return Refuse(s, "header_bytes",
                      GuardAnswer(431, "Request Header Fields Too Large",
                                  "the request line and headers are over " + std::to_string(limits_.header_bytes) +
                                      " bytes",
                                  ""));
      case RequestState::kHeaderCount:
        return Refuse(s, "header_count",
                      GuardAnswer(431, "Request Header Fields Too Large",
                                  "more than " + std::to_string(limits_.header_count) + " header fields", ""));
      case RequestState::kComplete:
        return Step::kReady;
      case RequestState::kIncomplete:
        break;
    }
    if (send_continue) WriteNow(c, "HTTP/1.1 100 Continue\r\n\r\n");
  }
}

Reactor::Step Reactor::Timeout(Slot& s, ReactorClock::time_point now) {
  Connection& c = *s.conn;
  if (s.draining || !c.started) return Step::kClose;  // an idle keep-alive connection just closes
  if (c.ssl != nullptr && !c.handshaken) {
    refused_("header_timeout", c.client);
    return Step::kClose;
  }
  if (c.header_end == 0 && now >= c.header_deadline) {
    return Refuse(s, "header_timeout",
                  GuardAnswer(408, "Request Timeout",
                              "the request's header section did not arrive within " +
                                  std::to_string(limits_.header_timeout_ms) + " ms",
                              ""));
  }
  return Refuse(s, "request_timeout",
                GuardAnswer(408, "Request Timeout",
                            "the request (headers and body) did not arrive within " +
                                std::to_string(limits_.request_timeout_ms) + " ms",
                            ""));
}

// Answers, half-closes and drains for a moment: closing with unread input would reset the
// connection and could destroy the answer in flight.
Reactor::Step Reactor::Refuse(Slot& s, const char* reason, std::string answer) {
  Connection& c = *s.conn;
  refused_(reason, c.client);
  WriteNow(c, answer);
  if (c.ssl != nullptr && c.handshaken) {
    SSL_shutdown(c.ssl);
    c.handshaken = false;  // close_notify sent
  }
  ::shutdown(c.sock, SHUT_WR);
  s.draining = true;
  s.drain_until = ReactorClock::now() + Ms(250);
  s.events = POLLIN;
  return Step::kKeep;
}

}  // namespace seedance::server

#pragma once

// Raw loopback sockets for HTTP tests that control every byte (slow clients, limits): a client
// socket bound to a chosen source address (127.0.0.1, 127.0.0.2, ...: several "clients").

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace seedance::server::testing {

// A connected socket from `from` to 127.0.0.1:port, or -1.
inline int Connect(int port, const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &local.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool SendAll(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads until `done(what arrived)`, the peer closes or `wait_ms` passes.
inline std::string ReadUntil(int fd, int wait_ms, const std::function<bool(const std::string&)>& done) {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  char buf[4096];
  while (!done(out)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Reads until the peer closes or `wait_ms` passes.
inline std::string ReadAll(int fd, int wait_ms) {
  return ReadUntil(fd, wait_ms, [](const std::string&) { return false; });
}

// Reads one HTTP response (its header section and Content-Length bytes of body), waiting at most
// `wait_ms`; the connection stays open for keep-alive.
inline std::string ReadResponse(int fd, int wait_ms) {
  return ReadUntil(fd, wait_ms, [](const std::string& out) {
    const std::size_t head = out.find("\r\n\r\n");
    if (head == std::string::npos) return false;
    std::size_t length = 0;
    const std::size_t cl = out.find("Content-Length: ");
    if (cl != std::string::npos && cl < head) length = std::stoul(out.substr(cl + 16));
    return out.size() >= head + 4 + length;
  });
}

inline std::string Exchange(int port, const std::string& request, const char* from = "127.0.0.1", int wait_ms = 5000) {
  const int fd = Connect(port, from);
  if (fd < 0) return "<no connection>";
  SendAll(fd, request);
  std::string out = ReadAll(fd, wait_ms);
  ::close(fd);
  return out;
}

}  // namespace seedance::server::testing

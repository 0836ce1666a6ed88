// Blocking socket I/O with a deadline (see socket_io.hpp).
#include "core/socket_io.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>

namespace spindle::core {

int remaining_ms(SocketClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SocketClock::now());
  return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

bool read_exact(int fd, std::byte* out, std::size_t n, SocketClock::time_point deadline,
                bool* closed) {
  std::size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const auto r = ::read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      // An orderly close, or a reset (a listener closed with our connection still in its
      // accept queue): either way the other side is gone.
      if (closed != nullptr && (r == 0 || errno == ECONNRESET)) *closed = true;
      return false;
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const auto w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

int connect_to(const transport::NodeAddress& a, SocketClock::time_point deadline,
               const std::string& source) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(a.host.c_str(), std::to_string(a.port).c_str(), &hints, &res) != 0 ||
      res == nullptr)
    return -1;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int ok = -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  const bool bind_source = !source.empty() &&
                           ::inet_pton(AF_INET, source.c_str(), &from.sin_addr) == 1 &&
                           from.sin_addr.s_addr != htonl(INADDR_ANY);
  if (fd >= 0 &&
      (!bind_source || ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0)) {
    ok = ::connect(fd, res->ai_addr, res->ai_addrlen);
    if (ok != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, remaining_ms(deadline)) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
        ok = 0;
    }
  }
  ::freeaddrinfo(res);
  if (ok != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  // Requests and answers of a few lines (a TLS handshake's flights among them): each goes at
  // once, not after the peer's delayed acknowledgment of the one before (Nagle).
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace spindle::core

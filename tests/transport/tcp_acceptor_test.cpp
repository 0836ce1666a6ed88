// TCP acceptor under a burst of strangers: connections that never say HELLO are closed after
// hello_timeout, and running out of descriptors (EMFILE) pauses accepting instead of
// stopping it, so a real member still joins afterwards.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

#include "../smc/die_with_parent.hpp"
#include "../smc/loopback.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPINDLE_TEST_ASAN 1
#endif
#endif
#ifndef SPINDLE_TEST_ASAN
#define SPINDLE_TEST_ASAN 0
#endif

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A connected socket to 127.0.0.1:port that sends nothing; -1 if connect() failed.
int silent_connection(std::uint16_t port) {
  const int fd = spindle::testing::connect_loopback(port);
  if (fd < 0) return -1;
  timeval tv{0, 100'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Waits until the other side closed each socket (EOF or reset); how many it closed.
std::size_t closed_by_peer(const std::vector<int>& fds, Clock::duration within) {
  const auto deadline = Clock::now() + within;
  std::vector<bool> closed(fds.size(), false);
  std::size_t n = 0;
  while (n < fds.size() && Clock::now() < deadline) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (closed[i]) continue;
      char b[64];
      const ssize_t r = ::recv(fds[i], b, sizeof b, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        closed[i] = true;
        ++n;
      }
    }
    std::this_thread::sleep_for(10ms);
  }
  return n;
}

}  // namespace

TEST_CASE("tcp: connections that never say HELLO are closed after the HELLO timeout",
          "[tcp][acceptor]") {
  st::TcpConfig cfg{st::NodeAddress{1, "127.0.0.1", 0}};
  cfg.hello_timeout = 300ms;
  st::TcpTransport t(cfg);
  std::vector<int> fds;
  for (int i = 0; i < 50; ++i) {
    const int fd = silent_connection(t.port());
    REQUIRE(fd >= 0);
    fds.push_back(fd);
  }
  const auto start = Clock::now();
  CHECK(closed_by_peer(fds, 100ms) == 0);  // not before the timeout
  CHECK(closed_by_peer(fds, 3s) == fds.size());
  CHECK(Clock::now() - start >= 250ms);
  for (int fd : fds)
    ::close(fd);
}

TEST_CASE("tcp: a burst that exhausts descriptors does not stop the acceptor", "[tcp][acceptor]") {
  // Node 1 runs in a child limited to 64 descriptors; we (node 2) open 300 silent
  // connections to it at once, then join as a real member.
#if defined(__SANITIZE_ADDRESS__) || SPINDLE_TEST_ASAN
  // The sanitizer runtime checks a vptr by probing memory through a pipe; with no
  // descriptor left it takes every object for invalid and aborts. Only builds without it
  // can run out of descriptors on purpose.
  WARN("skipped under AddressSanitizer: its runtime needs descriptors of its own");
  return;
#endif
  int up[2], down[2];  // child -> parent, parent -> child
  REQUIRE(::pipe(up) == 0);
  REQUIRE(::pipe(down) == 0);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
    ::close(up[0]);
    ::close(down[1]);
    const rlimit lim{64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) ::_exit(3);
    int code = 1;
    {
      st::TcpConfig cfg{st::NodeAddress{1, "127.0.0.1", 0}};
      cfg.hello_timeout = 500ms;
      st::TcpTransport t(cfg);
      (void)t.create_region(1, 4096);
      const std::uint16_t port = t.port();
      if (::write(up[1], &port, sizeof port) != sizeof port) ::_exit(4);
      std::uint16_t peer_port = 0;
      if (::read(down[0], &peer_port, sizeof peer_port) != sizeof peer_port) ::_exit(5);
      const std::vector<st::NodeAddress> members{{1, "127.0.0.1", port},
                                                 {2, "127.0.0.1", peer_port}};
      code = t.connect(members, 1, 30s) == st::Status::ok ? 0 : 1;
      const char result = static_cast<char>(code);
      if (::write(up[1], &result, 1) != 1) ::_exit(6);
      char bye = 0;
      (void)::read(down[0], &bye, 1);  // stay alive until the parent has looked
      t.disconnect();
    }
    ::_exit(code);
  }
  ::close(up[1]);
  ::close(down[0]);
  std::uint16_t port = 0;
  REQUIRE(::read(up[0], &port, sizeof port) == sizeof port);

  std::vector<int> fds;
  for (int i = 0; i < 300; ++i) {
    const int fd = silent_connection(port);
    if (fd >= 0) fds.push_back(fd);
  }
  CHECK(fds.size() == 300);  // the kernel's backlog took them all

  {
    st::TcpTransport t{st::TcpConfig{st::NodeAddress{2, "127.0.0.1", 0}}};
    (void)t.create_region(1, 4096);
    const std::uint16_t mine = t.port();
    REQUIRE(::write(down[1], &mine, sizeof mine) == sizeof mine);
    const std::vector<st::NodeAddress> members{{1, "127.0.0.1", port}, {2, "127.0.0.1", mine}};
    CHECK(t.connect(members, 1, 30s) == st::Status::ok);
    char result = 1;
    CHECK(::read(up[0], &result, 1) == 1);
    CHECK(result == 0);
    // While the member lives: every silent stranger was closed by its HELLO timeout.
    CHECK(closed_by_peer(fds, 10s) == fds.size());
    const char bye = 1;
    (void)::write(down[1], &bye, 1);
    t.disconnect();
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO("member exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << ", signal "
                             << (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (int fd : fds)
    ::close(fd);
  ::close(up[0]);
  ::close(down[1]);
}

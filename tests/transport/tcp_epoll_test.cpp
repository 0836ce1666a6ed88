// The tcp transport when epoll_ctl fails (ENOSPC: fs.epoll.max_user_watches reached; ENOMEM).
// This test defines epoll_ctl itself, which fails the calls a case asks for and hands the rest
// to the C library's: the transport linked into this program calls it (a real failure cannot
// be provoked here without changing a sysctl).
//   - A stream the transport cannot watch ends at once, its peer suspected with a reason that
//     names epoll_ctl and the error, rather than falling silent until a heartbeat timeout.
//   - Streams read in place that cannot go back to the I/O thread's wake-ups (the poller
//     stopped spinning) are still read, by the I/O thread's watchdog: late, none lost.
#include <dlfcn.h>
#include <sys/epoll.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// What epoll_ctl fails: nothing, ADDs of sockets watched level-triggered (the transport's
// streams read in place; Boost.Asio's own are edge-triggered), or ADDs of an epoll set into
// another (the transport's streams into the I/O thread's wake-ups).
enum class Fail { none, stream_watch, set_into_io };
std::atomic<Fail> g_fail{Fail::none};
std::atomic<int> g_failed{0};

}  // namespace

extern "C" int epoll_ctl(int epfd, int op, int fd, struct epoll_event* ev) {
  using Fn = int (*)(int, int, int, struct epoll_event*);
  static const Fn real = [] {
    Fn f = nullptr;
    void* sym = ::dlsym(RTLD_NEXT, "epoll_ctl");
    std::memcpy(&f, &sym, sizeof f);
    return f;
  }();
  const Fail mode = g_fail.load();
  if (mode != Fail::none && op == EPOLL_CTL_ADD && ev != nullptr && (ev->events & EPOLLET) == 0) {
    struct stat s {};
    const bool socket = ::fstat(fd, &s) == 0 && S_ISSOCK(s.st_mode);
    char link[64] = {};
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    const auto n = ::readlink(path.c_str(), link, sizeof link - 1);
    const bool epoll_set =
        n > 0 && std::string(link, static_cast<std::size_t>(n)) == "anon_inode:[eventpoll]";
    if ((mode == Fail::stream_watch && socket) || (mode == Fail::set_into_io && epoll_set)) {
      ++g_failed;
      errno = ENOSPC;
      return -1;
    }
  }
  return real(epfd, op, fd, ev);
}

namespace {

struct Pair {
  Pair() {
    st::TcpConfig a, b;
    a.self = st::NodeAddress{1, "127.0.0.1", 0};
    b.self = st::NodeAddress{2, "127.0.0.1", 0};
    ta = std::make_unique<st::TcpTransport>(a);
    tb = std::make_unique<st::TcpTransport>(b);
    ra = ta->create_region(1, 4096).bytes;
    rb = tb->create_region(1, 4096).bytes;
  }
  std::pair<st::Status, st::Status> connect() {
    const std::vector<st::NodeAddress> members{{1, "127.0.0.1", ta->port()},
                                               {2, "127.0.0.1", tb->port()}};
    auto fa = std::async(std::launch::async, [&] { return ta->connect(members, 1, 5s); });
    auto fb = std::async(std::launch::async, [&] { return tb->connect(members, 1, 5s); });
    return {fa.get(), fb.get()};
  }
  ~Pair() {
    g_fail = Fail::none;
    ta->disconnect();
    tb->disconnect();
  }
  std::unique_ptr<st::TcpTransport> ta, tb;
  std::span<std::byte> ra, rb;
};

// Polls `t` for up to `within`; the suspicions it reported.
std::vector<st::Suspicion> suspicions(st::Transport& t, Clock::duration within) {
  std::vector<st::Suspicion> out;
  const auto deadline = Clock::now() + within;
  while (out.empty() && Clock::now() < deadline) {
    std::vector<st::Event> events;
    t.poll(events);
    for (const auto& e : events)
      if (const auto* s = std::get_if<st::Suspicion>(&e)) out.push_back(*s);
    std::this_thread::sleep_for(1ms);
  }
  return out;
}

}  // namespace

TEST_CASE("tcp: a stream the transport cannot watch ends, naming epoll_ctl and the error",
          "[tcp][epoll]") {
  Pair p;
  g_failed = 0;
  g_fail = Fail::stream_watch;  // each stream's move to the set read in place fails
  (void)p.connect();
  // Each side suspects the other at once: the one whose watch failed first says why; the
  // other may see the stream end before its own watch fails.
  int named = 0;
  for (auto* t : {p.ta.get(), p.tb.get()}) {
    const auto s = suspicions(*t, 5s);
    REQUIRE(!s.empty());
    INFO(s[0].detail);
    CHECK(s[0].peer == (t == p.ta.get() ? 2u : 1u));
    CHECK(s[0].reason == st::SuspicionReason::connection_lost);
    if (s[0].detail.find("epoll_ctl(ADD) to watch it failed: " +
                         std::string(std::strerror(ENOSPC))) != std::string::npos)
      ++named;
  }
  CHECK(named >= 1);
  CHECK(g_failed.load() > 0);
}

TEST_CASE("tcp: streams that cannot go back to the I/O thread's wake-ups are still read",
          "[tcp][epoll]") {
  Pair p;
  REQUIRE(p.connect() == std::pair(st::Status::ok, st::Status::ok));
  // Node 2 spins a while (it reads its streams itself), then stops: handing them back to the
  // I/O thread fails.
  const auto until = Clock::now() + 50ms;
  while (Clock::now() < until)
    p.tb->receive();
  g_failed = 0;
  g_fail = Fail::set_into_io;
  // It says so once, on stderr, in the call that failed (the watchdog's retries say nothing).
  std::ostringstream said;
  auto* const was = std::cerr.rdbuf(said.rdbuf());
  p.tb->stop_polling();
  std::cerr.rdbuf(was);
  CHECK(g_failed.load() == 1);
  CHECK_THAT(said.str(), Catch::Contains("node 2: epoll_ctl(ADD) of the streams read in place "
                                         "failed") &&
                             Catch::Contains("the I/O thread reads them every 20 ms"));
  // Node 1 writes; node 2 neither polls nor spins, and still gets the bytes (the watchdog
  // reads every 20 ms).
  for (std::size_t k = 0; k < 64; ++k)
    p.ra[k] = std::byte{0x5c};
  REQUIRE(p.ta->write(2, 1, 0, 1, 0, 64) == st::Status::ok);
  const auto deadline = Clock::now() + 2s;
  while (p.rb[63] != std::byte{0x5c} && Clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  CHECK(p.rb[0] == std::byte{0x5c});
  CHECK(p.rb[63] == std::byte{0x5c});
  // Once epoll_ctl works again, the watchdog puts the set back and nothing is reported.
  g_fail = Fail::none;
  std::this_thread::sleep_for(100ms);
  CHECK(suspicions(*p.tb, 100ms).empty());
}

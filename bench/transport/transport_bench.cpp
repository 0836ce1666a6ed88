// spindle_transport_bench: the raw transport figures every protocol benchmark is measured
// against (STYLE 15). Two processes on this host (the tool forks its peer):
//   throughput  the driver streams messages of <size> bytes, each a one-sided data write
//               into the peer's region plus a guard write (what SMC does), for a fixed time;
//               the peer only watches the guard; CPU use of both sides is measured.
//   latency     round trip: driver writes data + guard, the peer sees the guard and writes
//               the same back, the driver sees it. latency_us_* is this round trip.
// Output, one line per figure, in the format of the peer DDS benchmarks (/work/shared/peers):
//   peer=spindle-raw transport=<t> size=<bytes> subs=1 metric=<m> value=<x>
//
//   socket      the physical reference of the tcp figures (--transport socket): a bare
//               loopback TCP ping-pong between the same two processes, blocking send() and
//               recv() of <size> bytes with TCP_NODELAY, nothing else; its lines say
//               peer=bare-socket transport=tcp.
//
//   --restrict  both sides restrict the regions to what the other writes (restrict_writes:
//               the data region to each, the control words to their writer), so every
//               write is checked against the writer's ranges (tcp: on receipt; shm: before
//               it leaves); compare with a run without it for the cost of the check.
//
// usage: spindle_transport_bench [--transport tcp,shm,rdma,socket] [--sizes 64,...] (--help)
//                                [--duration-ms 1000] [--iterations 2000] [--smoke]
//                                [--restrict]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spindle/transport/idle_waiter.hpp>
#include <spindle/transport/rdma.hpp>
#include <spindle/transport/shm.hpp>
#include <spindle/transport/tcp.hpp>

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr st::RegionId kData = 1, kControl = 2;
constexpr std::size_t kDataBytes = std::size_t{8} << 20;
// Control region words (u64): the driver writes kGuard, kMode; the peer writes kEcho,
// kPeerCpu. Mode: 0 sink, 1 echo, 2 quit; size in the upper bits.
constexpr std::size_t kGuard = 0, kEcho = 64, kPeerCpu = 128, kMode = 192, kStage = 256;
constexpr std::uint64_t kFinal = std::uint64_t{1} << 63;
constexpr std::uint64_t kSink = 0, kEchoMode = 1, kQuit = 2;

std::uint64_t load(std::byte* p) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .load(std::memory_order_acquire);
}
void store(std::byte* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .store(v, std::memory_order_relaxed);
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

[[noreturn]] void die(const std::string& why) {
  std::cerr << "spindle_transport_bench: " << why << std::endl;
  std::exit(1);
}

struct Endpoint {
  std::unique_ptr<st::Transport> t;
  st::NodeAddress addr;
  std::byte* data = nullptr;
  std::byte* control = nullptr;
  st::NodeId peer = 0;

  void write(st::RegionId local, std::uint64_t loff, st::RegionId remote, std::uint64_t roff,
             std::size_t len) {
    while (true) {
      const auto ticket = t->activity();
      const auto s = t->write(peer, local, loff, remote, roff, len);
      if (s == st::Status::ok) return;
      if (s != st::Status::retry) die("write: " + std::string(st::to_string(s)));
      t->wait(ticket, 1ms);
    }
  }
  void guard(std::size_t word, std::uint64_t v) {
    store(control + kStage + word, v);
    write(kControl, kStage + word, kControl, word, 8);
  }
  // Spins up to 1 ms (the paper's idle spin), then sleeps on the wake-up source.
  template <class Pred>
  void await(Pred pred, std::chrono::seconds limit = 30s) {
    st::IdleWaiter waiter(*t, st::IdlePolicy{1ms, 10ms});
    const auto deadline = Clock::now() + limit;
    while (!waiter.step(pred)) {
      if (Clock::now() > deadline) die("peer stopped answering");
    }
  }
};

Endpoint make(const std::string& kind, st::NodeId id, const std::string& ns, bool restrict) {
  Endpoint e;
  if (kind == "tcp") {
    st::TcpConfig cfg;
    cfg.self = st::NodeAddress{id, "127.0.0.1", 0};
    auto t = std::make_unique<st::TcpTransport>(cfg);
    e.addr = st::NodeAddress{id, "127.0.0.1", t->port()};
    e.t = std::move(t);
  } else if (kind == "shm") {
    st::ShmConfig cfg;
    cfg.self = id;
    cfg.name_prefix = ns;
    e.t = std::make_unique<st::ShmTransport>(cfg);
    e.addr = st::NodeAddress{id, "", 0};
  } else if (kind == "rdma") {
    st::RdmaConfig cfg;
    cfg.self = st::NodeAddress{id, "127.0.0.1", 0};
    auto t = std::make_unique<st::RdmaTransport>(cfg);
    e.addr = st::NodeAddress{id, "127.0.0.1", t->port()};
    e.t = std::move(t);
  } else {
    die("unknown transport " + kind);
  }
  e.data = e.t->create_region(kData, kDataBytes).bytes.data();
  e.control = e.t->create_region(kControl, 4096).bytes.data();
  e.peer = 1 - id;
  if (restrict) {
    // Node 0 drives (guard, mode), node 1 answers (echo, CPU); both write the data region.
    const std::vector<st::WriteGrant> data{{0, {{0, kDataBytes}}}, {1, {{0, kDataBytes}}}};
    const std::vector<st::WriteGrant> control{{0, {{kGuard, 8}, {kMode, 8}}},
                                              {1, {{kEcho, 8}, {kPeerCpu, 8}}}};
    e.t->restrict_writes(kData, data);
    e.t->restrict_writes(kControl, control);
  }
  return e;
}

// Pipe helpers for the port exchange between driver and peer.
void put_line(int fd, const std::string& s) {
  const std::string l = s + "\n";
  if (::write(fd, l.data(), l.size()) != static_cast<ssize_t>(l.size())) die("pipe write");
}
std::string get_line(int fd) {
  std::string s;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n')
    s.push_back(c);
  return s;
}
std::string encode(const st::NodeAddress& a) {
  return std::to_string(a.id) + " " + (a.host.empty() ? "-" : a.host) + " " +
         std::to_string(a.port);
}
st::NodeAddress decode(const std::string& s) {
  std::istringstream in(s);
  st::NodeAddress a;
  in >> a.id >> a.host >> a.port;
  if (a.host == "-") a.host.clear();
  return a;
}

// The peer: reflects guards (echo) or counts them (sink) until told to quit.
void run_peer(Endpoint& e) {
  std::uint64_t seen = 0;
  double cpu0 = 0;
  Clock::time_point wall0{};
  while (true) {
    std::uint64_t g = 0;
    e.await([&] { return (g = load(e.control + kGuard)) != seen; }, 600s);
    seen = g;
    const std::uint64_t mode = load(e.control + kMode);
    const std::uint64_t what = mode & 0xff, size = mode >> 8;
    if (what == kQuit) return;
    if (what == kEchoMode) {
      e.write(kData, 0, kData, 0, size);
      e.guard(kEcho, g);
      continue;
    }
    if ((g & kFinal) == 0) {
      if (wall0 == Clock::time_point{}) {  // the driver's start marker: measure from here
        wall0 = Clock::now();
        cpu0 = cpu_seconds();
        e.guard(kEcho, g);
      }
      continue;
    }
    const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
    const double pct = wall > 0 ? 100.0 * (cpu_seconds() - cpu0) / wall : 0;
    wall0 = Clock::time_point{};
    store(e.control + kStage + kPeerCpu, static_cast<std::uint64_t>(pct * 1000));
    e.write(kControl, kStage + kPeerCpu, kControl, kPeerCpu, 8);
    e.guard(kEcho, g);
  }
}

struct Options {
  std::vector<std::string> transports{"socket", "tcp", "shm", "rdma"};
  std::vector<std::size_t> sizes{64, 1024, 10240, 65536, 1048576};
  std::chrono::milliseconds duration{1000};
  int iterations = 2000;
  bool restrict = false;
};

void line(const std::string& kind, std::size_t size, const char* metric, double value,
          const char* peer = "spindle-raw") {
  std::printf("peer=%s transport=%s size=%zu subs=1 metric=%s value=%.3f\n", peer, kind.c_str(),
              size, metric, value);
  std::fflush(stdout);
}

// p50 and p99 of `rtt` (microseconds), printed for `peer`.
void latency_lines(std::vector<double>& rtt, const std::string& kind, std::size_t size,
                   const char* peer) {
  std::sort(rtt.begin(), rtt.end());
  line(kind, size, "latency_us_p50", rtt[rtt.size() / 2], peer);
  line(kind, size, "latency_us_p99", rtt[std::min(rtt.size() - 1, rtt.size() * 99 / 100)], peer);
}

// Moves exactly `len` bytes over a blocking socket; false if the stream ended.
bool send_all(int fd, const std::byte* p, std::size_t len) {
  while (len > 0) {
    const ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}
bool recv_all(int fd, std::byte* p, std::size_t len) {
  while (len > 0) {
    const ssize_t n = ::recv(fd, p, len, 0);
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

// The physical reference: a bare loopback TCP ping-pong of `size` bytes between this
// process and a forked echo, blocking calls and TCP_NODELAY, as any two programs would.
int bench_socket(const Options& o) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    die("socket: cannot listen on 127.0.0.1");
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it dies with its parent, killed or not
  const int one = 1;
  std::vector<std::byte> buf(*std::max_element(o.sizes.begin(), o.sizes.end()));
  if (child == 0) {
    ::close(listener);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::_Exit(1);
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (std::size_t size : o.sizes)
      for (int i = 0; i < o.iterations; ++i)
        if (!recv_all(fd, buf.data(), size) || !send_all(fd, buf.data(), size)) std::_Exit(1);
    ::close(fd);
    std::_Exit(0);
  }
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(listener);
  if (fd < 0) die("socket: accept");
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  for (std::size_t size : o.sizes) {
    std::vector<double> rtt;
    rtt.reserve(static_cast<std::size_t>(o.iterations));
    for (int i = 0; i < o.iterations; ++i) {
      const auto t0 = Clock::now();
      if (!send_all(fd, buf.data(), size) || !recv_all(fd, buf.data(), size))
        die("socket: the echo stopped");
      rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    latency_lines(rtt, "tcp", size, "bare-socket");
  }
  ::close(fd);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

void run_driver(Endpoint& e, const std::string& kind, const Options& o) {
  std::uint64_t g = 0;
  for (std::size_t size : o.sizes) {
    // Throughput: data write + guard write per message, for the configured time.
    store(e.control + kStage + kMode, kSink | (size << 8));
    e.write(kControl, kStage + kMode, kControl, kMode, 8);
    const std::size_t slots = std::max<std::size_t>(1, kDataBytes / size);
    e.guard(kGuard, ++g);  // start marker; the peer starts its CPU clock and answers
    const std::uint64_t start_guard = g;
    e.await([&] { return load(e.control + kEcho) == start_guard; });
    std::uint64_t messages = 0;
    const double cpu0 = cpu_seconds();
    const auto start = Clock::now();
    while (true) {
      e.write(kData, 0, kData, (messages % slots) * size, size);
      e.guard(kGuard, ++g);
      ++messages;
      if ((messages & 15) == 0 && Clock::now() - start >= o.duration) break;
    }
    const std::uint64_t final_guard = ++g | kFinal;  // g itself never carries the bit
    e.guard(kGuard, final_guard);
    e.await([&] { return load(e.control + kEcho) == final_guard; });
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu = 100.0 * (cpu_seconds() - cpu0) / secs;
    const double rate = static_cast<double>(messages) / secs;
    line(kind, size, "throughput_msgs_s", rate);
    line(kind, size, "throughput_MBps", rate * static_cast<double>(size) / 1e6);
    line(kind, size, "cpu_pct_writer", cpu);
    line(kind, size, "cpu_pct_reader", static_cast<double>(load(e.control + kPeerCpu)) / 1000.0);

    // Latency: round trips.
    store(e.control + kStage + kMode, kEchoMode | (size << 8));
    e.write(kControl, kStage + kMode, kControl, kMode, 8);
    std::vector<double> rtt;
    rtt.reserve(static_cast<std::size_t>(o.iterations));
    for (int i = 0; i < o.iterations; ++i) {
      const auto t0 = Clock::now();
      e.write(kData, 0, kData, 0, size);
      e.guard(kGuard, ++g);
      const std::uint64_t want = g;
      e.await([&] { return load(e.control + kEcho) == want; });
      rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    latency_lines(rtt, kind, size, "spindle-raw");
  }
  store(e.control + kStage + kMode, kQuit);
  e.write(kControl, kStage + kMode, kControl, kMode, 8);
  e.guard(kGuard, ++g);
}

int bench_one(const std::string& kind, const Options& o) {
  if (kind == "socket") return bench_socket(o);
  if (kind == "rdma") {
    std::string why;
    if (!st::rdma_device_available(why)) {
      std::cerr << "spindle_transport_bench: skipping rdma: " << why << std::endl;
      return 0;
    }
  }
  const std::string ns = "spindle-bench-" + std::to_string(::getpid());
  int up[2], down[2];
  if (::pipe(up) != 0 || ::pipe(down) != 0) die("pipe");
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it dies with its parent, killed or not
  const st::NodeId id = child == 0 ? 1 : 0;
  Endpoint e = make(kind, id, ns, o.restrict);
  const int out = child == 0 ? up[1] : down[1];
  const int in = child == 0 ? down[0] : up[0];
  put_line(out, encode(e.addr));
  const st::NodeAddress other = decode(get_line(in));
  std::vector<st::NodeAddress> members{e.addr, other};
  if (id == 1) std::swap(members[0], members[1]);
  if (e.t->connect(members, 1, 10s) != st::Status::ok) die(kind + ": connect failed");
  if (child == 0) {
    run_peer(e);
    e.t->disconnect();
    e.t.reset();
    std::_Exit(0);
  }
  run_driver(e, kind, o);
  int status = 0;
  ::waitpid(child, &status, 0);
  e.t->disconnect();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "spindle_transport_bench: raw transport throughput, CPU and round trip (two\n"
      "processes on this host), one line per figure in the format of\n"
      "/work/shared/peers."};
  app.add_option("--transport", o.transports,
                 "Transports to measure (rdma skips without a device; socket: the bare loopback "
                 "TCP ping-pong the tcp round trip is judged against)")
      ->delimiter(',')
      ->check(CLI::IsMember({"tcp", "shm", "rdma", "socket"}))
      ->capture_default_str();
  const auto* sizes = app.add_option("--sizes", o.sizes, "Message sizes in bytes")
                          ->delimiter(',')
                          ->check(CLI::Range(std::size_t{1}, kDataBytes))
                          ->capture_default_str();
  std::uint32_t duration_ms = static_cast<std::uint32_t>(o.duration.count());
  const auto* duration =
      app.add_option("--duration-ms", duration_ms, "Length of each throughput run")
          ->check(CLI::Range(1u, 3'600'000u))
          ->capture_default_str();
  const auto* iterations =
      app.add_option("--iterations", o.iterations, "Round trips per latency figure")
          ->check(CLI::Range(1, 100'000'000))
          ->capture_default_str();
  bool smoke = false;
  app.add_flag("--smoke", smoke,
               "Defaults for the CTest smoke test: sizes 64,65536, 100 ms, 50 round trips");
  app.add_flag("--restrict", o.restrict,
               "Restrict each region to what the other side writes (the per-write check)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.duration = std::chrono::milliseconds(duration_ms);
  if (smoke && sizes->count() == 0) o.sizes = {64, 65536};
  if (smoke && duration->count() == 0) o.duration = 100ms;
  if (smoke && iterations->count() == 0) o.iterations = 50;
  int rc = 0;
  for (const auto& kind : o.transports)
    rc |= bench_one(kind, o);
  return rc;
}

// Secured tcp streams (docs/transport-tcp.md, "Secured streams"): with credentials of the
// domain's CA, writes and blocks cross as on a plain stream; a stream is bound to a member
// only if the peer's certificate is that member's (the subject in its NodeAddress); a
// certificate of another CA is refused; nothing of the frames travels in clear; a record
// altered on the way closes the stream with a suspicion.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

#include "pki.hpp"
#include "security/credentials.hpp"

namespace st = spindle::transport;
namespace sec = spindle::security;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr st::RegionId kRegion = 1;
constexpr std::size_t kRegionSize = 64 << 10;

// A throwaway PKI: CA "ca" issues node1, node2 and impostor; CA "other" issues another
// CN=node2.
struct Domain {
  std::filesystem::path dir;
  std::filesystem::path perms;
  std::unique_ptr<spindle::test::Pki> pki;
  Domain() {
    char tmpl[] = "/tmp/spindle-tcp-secure-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    pki = std::make_unique<spindle::test::Pki>(dir);
    pki->make_ca("ca");
    pki->make_ca("other");
    (void)pki->issue("ca", "CN=node1", "node1");
    (void)pki->issue("ca", "CN=node2", "node2");
    (void)pki->issue("ca", "CN=impostor", "impostor");
    (void)pki->issue("other", "CN=node2", "other-node2");
    perms = dir / "perms.yaml";
    std::ofstream(perms) << spindle::test::kIssuePermissions;
  }
  ~Domain() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::shared_ptr<const sec::Credentials> credentials(const std::string& ca,
                                                      const std::string& who) const {
    return sec::Credentials::load(sec::Settings{pki->pem(ca).string(), pki->pem(who).string(),
                                                pki->key(who).string(), perms.string(), ""});
  }
};

st::TcpConfig config(st::NodeId id, std::shared_ptr<const sec::Credentials> creds) {
  st::TcpConfig c;
  c.self = st::NodeAddress{id, "127.0.0.1", 0};
  c.security = std::move(creds);
  return c;
}

st::NodeAddress member(st::NodeId id, std::uint16_t port, const std::string& subject) {
  st::NodeAddress a{id, "127.0.0.1", port};
  a.subject = subject;
  return a;
}

std::vector<st::Suspicion> suspicions(st::Transport& t) {
  std::vector<st::Event> ev;
  t.poll(ev);
  std::vector<st::Suspicion> out;
  for (auto& e : ev) {
    if (auto* s = std::get_if<st::Suspicion>(&e)) out.push_back(*s);
  }
  return out;
}

// Polls until a suspicion arrives or the deadline passes.
std::vector<st::Suspicion> await_suspicion(st::Transport& t, std::chrono::milliseconds within) {
  const auto until = Clock::now() + within;
  std::vector<st::Suspicion> all;
  while (all.empty() && Clock::now() < until) {
    auto s = suspicions(t);
    all.insert(all.end(), s.begin(), s.end());
    if (all.empty()) std::this_thread::sleep_for(2ms);
  }
  return all;
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds within = 3s) {
  const auto until = Clock::now() + within;
  while (!done()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Nodes 1 and 2 with these credentials (null: plain), each with the region, and the view that
// names them CN=node1 and CN=node2 at their ports.
struct Nodes {
  Nodes(std::shared_ptr<const sec::Credentials> one, std::shared_ptr<const sec::Credentials> two)
      : t1(config(1, std::move(one))),
        t2(config(2, std::move(two))),
        r1(t1.create_region(kRegion, kRegionSize)),
        r2(t2.create_region(kRegion, kRegionSize)),
        view{member(1, t1.port(), "CN=node1"), member(2, t2.port(), "CN=node2")} {}
  // The view node 2 connects with when node 1 is reached through `port` (a proxy).
  [[nodiscard]] std::vector<st::NodeAddress> via(std::uint16_t port) const {
    auto v = view;
    v[0].port = port;
    return v;
  }
  st::TcpTransport t1, t2;
  st::LocalRegion r1, r2;
  std::vector<st::NodeAddress> view;
};

// Node 1 and node 2 connect for view 1. `view1` and `view2` are the member lists each one
// connects with (node 2 may be given a proxy's port for node 1).
std::pair<st::Status, st::Status> connect_both(st::TcpTransport& t1, st::TcpTransport& t2,
                                               const std::vector<st::NodeAddress>& view1,
                                               const std::vector<st::NodeAddress>& view2,
                                               std::chrono::milliseconds timeout = 3s) {
  auto f1 = std::async(std::launch::async, [&] { return t1.connect(view1, 1, timeout); });
  auto f2 = std::async(std::launch::async, [&] { return t2.connect(view2, 1, timeout); });
  return {f1.get(), f2.get()};
}

// A TCP forwarder between a dialer and `target`: copies bytes both ways and records them.
// tamper() flips the last byte of the next chunk from the dialer.
class Proxy {
 public:
  explicit Proxy(std::uint16_t target) : target_(target) {
    lfd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(lfd_, 4) == 0);
    REQUIRE(::getsockname(lfd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~Proxy() {
    stop_ = true;
    thread_.join();
    ::close(lfd_);
  }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  void tamper() { tamper_ = true; }
  [[nodiscard]] std::string captured() {
    std::lock_guard lock(mu_);
    return captured_;
  }
  // What the dialer sent, alone.
  [[nodiscard]] std::string dialed() {
    std::lock_guard lock(mu_);
    return dialed_;
  }

 private:
  void run() {
    int in = -1;
    while (!stop_ && in < 0) {
      pollfd p{lfd_, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) in = ::accept(lfd_, nullptr, nullptr);
    }
    if (in < 0) return;
    const int out = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(target_);
    if (::connect(out, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(in);
      ::close(out);
      return;
    }
    char buf[65536];
    while (!stop_) {
      pollfd p[2] = {{in, POLLIN, 0}, {out, POLLIN, 0}};
      if (::poll(p, 2, 20) <= 0) continue;
      bool eof = false;
      for (int i = 0; i < 2; ++i) {
        if (p[i].revents == 0) continue;
        const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
        if (n <= 0) {
          eof = true;
          break;
        }
        if (i == 0 && tamper_.exchange(false)) buf[n - 1] = static_cast<char>(buf[n - 1] ^ 0x01);
        {
          std::lock_guard lock(mu_);
          captured_.append(buf, static_cast<std::size_t>(n));
          if (i == 0) dialed_.append(buf, static_cast<std::size_t>(n));
        }
        for (ssize_t done = 0; done < n;) {
          const ssize_t w =
              ::send(p[1 - i].fd, buf + done, static_cast<std::size_t>(n - done), MSG_NOSIGNAL);
          if (w <= 0) break;
          done += w;
        }
      }
      if (eof) break;
    }
    ::close(in);
    ::close(out);
  }

  std::uint16_t target_;
  int lfd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> tamper_{false};
  std::mutex mu_;
  std::string captured_;
  std::string dialed_;
  std::thread thread_;
};

const std::string kSecret = "SPINDLE-SECRET-PLAINTEXT-0123456789";

void fill(std::span<std::byte> mem, const std::string& text) {
  for (std::size_t i = 0; i < mem.size(); ++i)
    mem[i] = static_cast<std::byte>(text[i % text.size()]);
}

bool holds(std::span<const std::byte> mem, const std::string& text) {
  for (std::size_t i = 0; i < mem.size(); ++i) {
    if (mem[i] != static_cast<std::byte>(text[i % text.size()])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("tcp secure: writes and blocks cross secured streams", "[tcp][secure]") {
  const Domain d;
  Nodes n(d.credentials("ca", "node1"), d.credentials("ca", "node2"));
  const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, n.view);
  REQUIRE(s1 == st::Status::ok);
  REQUIRE(s2 == st::Status::ok);

  // Each way, a write longer than one record (16 KiB) and a small one.
  fill(n.r2.bytes.subspan(0, 40000), kSecret);
  fill(n.r1.bytes.subspan(40000, 64), "node1->node2");
  REQUIRE(n.t2.write(1, kRegion, 0, kRegion, 0, 40000) == st::Status::ok);
  REQUIRE(n.t1.write(2, kRegion, 40000, kRegion, 40000, 64) == st::Status::ok);
  CHECK(eventually([&] { return holds(n.r1.bytes.subspan(0, 40000), kSecret); }));
  CHECK(eventually([&] { return holds(n.r2.bytes.subspan(40000, 64), "node1->node2"); }));

  // A block into a posted receive.
  REQUIRE(n.t1.post_receive(2, kRegion, 50000, 4096) == st::Status::ok);
  fill(n.r2.bytes.subspan(45000, 3000), "block!");
  REQUIRE(n.t2.send_block(1, kRegion, 45000, 3000, 77) == st::Status::ok);
  std::optional<st::BlockReceived> got;
  CHECK(eventually([&] {
    std::vector<st::Event> ev;
    n.t1.poll(ev);
    for (auto& e : ev) {
      if (auto* b = std::get_if<st::BlockReceived>(&e)) got = *b;
      if (auto* s = std::get_if<st::Suspicion>(&e)) FAIL_CHECK(s->detail);
    }
    return got.has_value();
  }));
  REQUIRE(got);
  CHECK(got->peer == 2);
  CHECK(got->immediate == 77);
  CHECK(got->length == 3000);
  CHECK(holds(n.r1.bytes.subspan(50000, 3000), "block!"));
  CHECK(suspicions(n.t2).empty());
}

TEST_CASE("tcp secure: a peer whose certificate subject is not the member's is never bound",
          "[tcp][secure]") {
  const Domain d;
  SECTION("the dialer presents another subject: the listener never binds it") {
    Nodes n(d.credentials("ca", "node1"), d.credentials("ca", "impostor"));
    const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, n.view, 1500ms);
    CHECK(s1 == st::Status::peer_suspected);
    const auto sus = suspicions(n.t1);
    REQUIRE(sus.size() == 1);
    CHECK(sus[0].peer == 2);
    CHECK_THAT(sus[0].detail, Catch::Contains("CN=impostor") && Catch::Contains("CN=node2"));
    CHECK(n.t1.write(2, kRegion, 0, kRegion, 0, 8) == st::Status::peer_suspected);
  }
  SECTION("the listener presents another subject: the dialer suspects it, naming both") {
    Nodes n(d.credentials("ca", "impostor"), d.credentials("ca", "node2"));
    const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, n.view, 1500ms);
    CHECK(s2 == st::Status::peer_suspected);
    const auto sus = suspicions(n.t2);
    REQUIRE(sus.size() == 1);
    CHECK(sus[0].peer == 1);
    CHECK(sus[0].reason == st::SuspicionReason::malformed_frame);
    CHECK_THAT(sus[0].detail, Catch::Contains("subject CN=impostor where the view has CN=node1"));
    CHECK(n.t2.write(1, kRegion, 0, kRegion, 0, 8) == st::Status::peer_suspected);
    CHECK(s1 == st::Status::peer_suspected);
  }
}

TEST_CASE("tcp secure: a certificate of another CA is refused", "[tcp][secure]") {
  const Domain d;
  Nodes n(d.credentials("ca", "node1"), d.credentials("other", "other-node2"));
  const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, n.view, 1500ms);
  CHECK(s1 == st::Status::peer_suspected);
  CHECK(s2 == st::Status::peer_suspected);
  // Node 2 (the dialer) judges node 1's certificate against its own CA, "other".
  const auto sus = suspicions(n.t2);
  REQUIRE(sus.size() == 1);
  CHECK(sus[0].reason == st::SuspicionReason::mismatch);
  CHECK_THAT(sus[0].detail,
             Catch::Contains("certificate CN=node1") && Catch::Contains("does not check out"));
  CHECK(n.t1.write(2, kRegion, 0, kRegion, 0, 8) == st::Status::peer_suspected);
}

TEST_CASE("tcp secure: nothing of the frames travels in clear", "[tcp][secure]") {
  const Domain d;
  for (const bool secured : {false, true}) {
    CAPTURE(secured);
    Nodes n(secured ? d.credentials("ca", "node1") : nullptr,
            secured ? d.credentials("ca", "node2") : nullptr);
    Proxy proxy(n.t1.port());
    const auto view2 = n.via(proxy.port());
    const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, view2);
    REQUIRE(s1 == st::Status::ok);
    REQUIRE(s2 == st::Status::ok);
    fill(n.r2.bytes.subspan(0, 4096), kSecret);
    fill(n.r1.bytes.subspan(8192, 4096), kSecret);
    REQUIRE(n.t2.write(1, kRegion, 0, kRegion, 0, 4096) == st::Status::ok);
    REQUIRE(n.t1.write(2, kRegion, 8192, kRegion, 8192, 4096) == st::Status::ok);
    REQUIRE(eventually([&] { return holds(n.r1.bytes.subspan(0, 4096), kSecret); }));
    REQUIRE(eventually([&] { return holds(n.r2.bytes.subspan(8192, 4096), kSecret); }));
    const std::string wire = proxy.captured();
    // The control run shows the capture sees the frames; the secured run must not.
    CHECK((wire.find(kSecret) != std::string::npos) == !secured);
    CHECK((wire.find("SPNDLTCP") != std::string::npos) == !secured);
  }
}

TEST_CASE("tcp secure: an altered record closes the stream with a suspicion", "[tcp][secure]") {
  const Domain d;
  Nodes n(d.credentials("ca", "node1"), d.credentials("ca", "node2"));
  Proxy proxy(n.t1.port());
  const auto view2 = n.via(proxy.port());
  const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, view2);
  REQUIRE(s1 == st::Status::ok);
  REQUIRE(s2 == st::Status::ok);
  fill(n.r2.bytes.subspan(0, 1024), kSecret);
  proxy.tamper();
  REQUIRE(n.t2.write(1, kRegion, 0, kRegion, 0, 1024) == st::Status::ok);
  const auto sus = await_suspicion(n.t1, 3s);
  REQUIRE(sus.size() == 1);
  CHECK(sus[0].peer == 2);
  CHECK(sus[0].reason == st::SuspicionReason::malformed_frame);
  CHECK_THAT(sus[0].detail, Catch::Contains("does not authenticate"));
  // Nothing of the altered record was applied.
  CHECK_FALSE(holds(n.r1.bytes.subspan(0, 1024), kSecret));
  CHECK(n.t1.write(2, kRegion, 0, kRegion, 0, 8) == st::Status::peer_suspected);
}

TEST_CASE("tcp secure: a recorded stream replayed to a member binds nothing", "[tcp][secure]") {
  const Domain d;
  // Node 2's side of a whole stream, through a proxy that records it: its handshake units,
  // then a write of the secret in sealed records.
  std::string recorded;
  {
    Nodes n(d.credentials("ca", "node1"), d.credentials("ca", "node2"));
    Proxy proxy(n.t1.port());
    const auto [s1, s2] = connect_both(n.t1, n.t2, n.view, n.via(proxy.port()));
    REQUIRE(s1 == st::Status::ok);
    REQUIRE(s2 == st::Status::ok);
    fill(n.r2.bytes.subspan(0, 1024), kSecret);
    REQUIRE(n.t2.write(1, kRegion, 0, kRegion, 0, 1024) == st::Status::ok);
    REQUIRE(eventually([&] { return holds(n.r1.bytes.subspan(0, 1024), kSecret); }));
    recorded = proxy.dialed();
  }
  REQUIRE(recorded.size() > 1024);
  // Sent again, as it was, to a node 1 of the same certificate that waits for node 2: the
  // handshake cannot finish (its randoms and key shares are new), so the stream is bound to
  // nobody and nothing of it is applied.
  Nodes n(d.credentials("ca", "node1"), d.credentials("ca", "node2"));
  auto waiting = std::async(std::launch::async, [&] { return n.t1.connect(n.view, 1, 2s); });
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(n.t1.port());
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  (void)::send(fd, recorded.data(), recorded.size(), MSG_NOSIGNAL);
  // Node 1 answers with a handshake of its own, then closes: read to the end (bounded).
  const timeval tv{3, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  bool closed = false;
  bool timed_out = false;
  for (int i = 0; i < 1000 && !closed && !timed_out; ++i) {
    const auto got = ::recv(fd, buf, sizeof buf, 0);
    timed_out = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    closed = got == 0 || (got < 0 && !timed_out);
  }
  ::close(fd);
  CHECK(closed);  // by node 1, not by our wait running out
  CHECK(waiting.get() != st::Status::ok);
  CHECK_FALSE(holds(n.r1.bytes.subspan(0, 1024), kSecret));
}

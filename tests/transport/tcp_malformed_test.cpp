// TCP: malformed input from a peer closes that connection and raises a suspicion naming
// the reason; nothing is written outside a region, nor outside what the peer may write
// (rows belong to their owners). A raw socket plays node 2 against a real TcpTransport as
// node 1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <future>
#include <thread>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

#include "frame.hpp"

namespace st = spindle::transport;
namespace tf = spindle::transport::tcp_frames;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr st::RegionId kRegion = 7;
constexpr std::size_t kSize = 4096;

class RawPeer {
 public:
  explicit RawPeer(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    timeval tv{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawPeer() {
    if (fd_ >= 0) ::close(fd_);
  }
  void send(const std::vector<std::byte>& b) {
    REQUIRE(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
  }
  void close() {
    ::close(fd_);
    fd_ = -1;
  }
  // Reads the transport's HELLO (header + payload).
  void read_hello() {
    std::byte h[tf::kHeaderSize];
    read_exact(h, sizeof h);
    std::uint32_t len = 0;
    std::memcpy(&len, h + 16, 4);
    std::vector<std::byte> payload(len);
    read_exact(payload.data(), len);
  }
  // True once the other side closed the stream (EOF or reset).
  bool closed_by_peer() {
    std::byte b[4096];
    const auto deadline = Clock::now() + 3s;
    while (Clock::now() < deadline) {
      const ssize_t n = ::recv(fd_, b, sizeof b, 0);
      if (n == 0) return true;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return true;
    }
    return false;
  }

 private:
  void read_exact(std::byte* p, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::recv(fd_, p + got, n - got, 0);
      REQUIRE(r > 0);
      got += static_cast<std::size_t>(r);
    }
  }
  int fd_ = -1;
};

std::vector<std::byte> header(tf::FrameType type, std::uint32_t arg, std::uint64_t offset,
                              std::uint32_t length) {
  std::vector<std::byte> out;
  tf::encode_header(out, tf::FrameHeader{type, arg, offset, length});
  return out;
}

std::vector<std::byte> write_frame(std::uint32_t region, std::uint64_t offset,
                                   std::uint32_t length) {
  auto out = header(tf::FrameType::write, region, offset, length);
  out.insert(out.end(), length, std::byte{0xAB});
  return out;
}

// Node 1 (a real transport) and node 2 (raw) handshake; returns the transport.
struct Rig {
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  std::unique_ptr<RawPeer> raw;
  std::span<std::byte> region;

  // `grants`: restrict writes into the region before connecting (none: open to the peer).
  explicit Rig(std::vector<st::WriteGrant> grants = {}) {
    region = t.create_region(kRegion, kSize).bytes;
    if (!grants.empty()) t.restrict_writes(kRegion, grants);
    const std::vector<st::NodeAddress> members{{1, "127.0.0.1", t.port()}, {2, "127.0.0.1", 1}};
    auto connected = std::async(std::launch::async, [&] { return t.connect(members, 5, 5s); });
    raw = std::make_unique<RawPeer>(t.port());
    std::vector<std::byte> hello;
    const st::RegionDescriptor mine{3, 64, 0, 0};
    tf::encode_hello(hello, 2, 5, std::span(&mine, 1));
    raw->send(hello);
    raw->read_hello();
    REQUIRE(connected.get() == st::Status::ok);
    REQUIRE(t.remote_region(2, 3)->size == 64);
  }

  st::Suspicion suspicion() {
    const auto deadline = Clock::now() + 3s;
    std::vector<st::Event> ev;
    while (Clock::now() < deadline) {
      const auto ticket = t.activity();
      t.poll(ev);
      for (auto& e : ev) {
        if (auto* s = std::get_if<st::Suspicion>(&e)) return *s;
      }
      t.wait(ticket, 50ms);
    }
    FAIL("no suspicion raised");
    return {};
  }

  void expect(st::SuspicionReason reason) {
    auto s = suspicion();
    INFO(s.detail);
    CHECK(s.peer == 2);
    CHECK(s.reason == reason);
    CHECK(raw->closed_by_peer());
    for (auto b : region) {
      if (b != std::byte{0} && b != std::byte{0xAB}) FAIL("region corrupted");
    }
  }
};

}  // namespace

TEST_CASE("tcp: a valid write lands, then a write to an unknown region is a suspicion",
          "[tcp][malformed]") {
  Rig rig;
  rig.raw->send(write_frame(kRegion, 100, 8));
  rig.raw->send(write_frame(99, 0, 8));
  rig.expect(st::SuspicionReason::unknown_region);
  CHECK(rig.region[100] == std::byte{0xAB});
  CHECK(rig.t.write(2, kRegion, 0, 3, 0, 8) == st::Status::peer_suspected);
}

TEST_CASE("tcp: a write past the region's end is refused and nothing is written",
          "[tcp][malformed]") {
  Rig rig;
  rig.raw->send(write_frame(kRegion, kSize - 4, 8));
  rig.expect(st::SuspicionReason::out_of_bounds);
  for (auto b : rig.region)
    CHECK(b == std::byte{0});
}

TEST_CASE("tcp: an offset that overflows 64 bits is out of bounds", "[tcp][malformed]") {
  Rig rig;
  rig.raw->send(header(tf::FrameType::write, kRegion, ~std::uint64_t{0} - 2, 8));
  rig.expect(st::SuspicionReason::out_of_bounds);
}

TEST_CASE("tcp: a corrupted header check word is a malformed frame", "[tcp][malformed]") {
  Rig rig;
  auto f = write_frame(kRegion, 0, 8);
  f[20] ^= std::byte{1};
  rig.raw->send(f);
  rig.expect(st::SuspicionReason::malformed_frame);
}

TEST_CASE("tcp: an unknown frame type is a malformed frame", "[tcp][malformed]") {
  Rig rig;
  auto f = header(tf::FrameType::heartbeat, 0, 0, 0);
  f[0] = std::byte{42};
  // Recompute the check so only the type is wrong.
  std::uint32_t h = 2166136261u;
  for (int i = 0; i < 20; ++i) {
    h ^= static_cast<std::uint32_t>(f[static_cast<std::size_t>(i)]);
    h *= 16777619u;
  }
  std::memcpy(f.data() + 20, &h, 4);
  rig.raw->send(f);
  rig.expect(st::SuspicionReason::malformed_frame);
}

TEST_CASE("tcp: a stream ending inside a frame is a truncated frame", "[tcp][malformed]") {
  Rig rig;
  auto f = write_frame(kRegion, 0, 100);
  f.resize(tf::kHeaderSize + 10);
  rig.raw->send(f);
  std::this_thread::sleep_for(50ms);
  rig.raw->close();
  auto s = rig.suspicion();
  CHECK(s.reason == st::SuspicionReason::truncated_frame);
}

TEST_CASE("tcp: a block larger than the posted receive is a block overflow", "[tcp][malformed]") {
  Rig rig;
  REQUIRE(rig.t.post_receive(2, kRegion, 0, 16) == st::Status::ok);
  auto f = header(tf::FrameType::block, 9, 0, 32);
  f.insert(f.end(), 32, std::byte{0xAB});
  rig.raw->send(f);
  rig.expect(st::SuspicionReason::block_overflow);
}

TEST_CASE("tcp: garbage bytes are a malformed frame", "[tcp][malformed]") {
  Rig rig;
  std::vector<std::byte> junk(200);
  for (std::size_t i = 0; i < junk.size(); ++i)
    junk[i] = static_cast<std::byte>(i * 37 + 11);
  rig.raw->send(junk);
  rig.expect(st::SuspicionReason::malformed_frame);
}

TEST_CASE("tcp: a second HELLO is a malformed frame", "[tcp][malformed]") {
  Rig rig;
  std::vector<std::byte> hello;
  tf::encode_hello(hello, 2, 5, {});
  rig.raw->send(hello);
  rig.expect(st::SuspicionReason::malformed_frame);
}

TEST_CASE("tcp: a peer that sends no HELLO is reported as a connect timeout", "[tcp][malformed]") {
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  const std::vector<st::NodeAddress> members{{1, "127.0.0.1", t.port()}, {2, "127.0.0.1", 1}};
  auto connected = std::async(std::launch::async, [&] { return t.connect(members, 1, 500ms); });
  RawPeer raw(t.port());
  raw.send(write_frame(kRegion, 0, 8));
  CHECK(connected.get() == st::Status::peer_suspected);
  std::vector<st::Event> ev;
  t.poll(ev);
  REQUIRE(ev.size() == 1);
  CHECK(std::get<st::Suspicion>(ev[0]).reason == st::SuspicionReason::connect_timeout);
}

TEST_CASE("tcp: a silent peer is suspected after the heartbeat timeout", "[tcp][heartbeat]") {
  st::TcpConfig cfg{st::NodeAddress{1, "127.0.0.1", 0}};
  cfg.heartbeat_interval = 20ms;
  cfg.suspicion_timeout = 200ms;
  st::TcpTransport t{cfg};
  (void)t.create_region(kRegion, kSize);
  const std::vector<st::NodeAddress> members{{1, "127.0.0.1", t.port()}, {2, "127.0.0.1", 1}};
  auto connected = std::async(std::launch::async, [&] { return t.connect(members, 5, 5s); });
  RawPeer raw(t.port());
  std::vector<std::byte> hello;
  tf::encode_hello(hello, 2, 5, {});
  raw.send(hello);
  REQUIRE(connected.get() == st::Status::ok);
  const auto start = Clock::now();
  std::vector<st::Event> ev;
  while (ev.empty() && Clock::now() - start < 3s) {
    const auto ticket = t.activity();
    t.poll(ev);
    if (ev.empty()) t.wait(ticket, 50ms);
  }
  REQUIRE(ev.size() == 1);
  CHECK(std::get<st::Suspicion>(ev[0]).reason == st::SuspicionReason::heartbeat_timeout);
  CHECK(Clock::now() - start < 1s);
}

namespace {

// The decoder alone, with one 4 KiB region: what a reader of region memory sees between
// two reads of a stream.
struct OneRegion final : tf::FrameSink {
  std::vector<std::byte> mem = std::vector<std::byte>(kSize);
  std::span<std::byte> region(st::RegionId id) override {
    return id == kRegion ? std::span<std::byte>(mem) : std::span<std::byte>{};
  }
  void on_hello(const tf::Hello&) override {}
  BlockTarget on_block_begin(std::uint32_t, std::uint32_t) override { return {}; }
  void on_block_end() override {}
  void on_goodbye() override {}
  std::uint64_t word(std::size_t off) const {
    std::uint64_t v = 0;
    std::memcpy(&v, mem.data() + off, 8);
    return v;
  }
};

std::vector<std::byte> write_frame(std::uint64_t offset, std::span<const std::byte> payload) {
  std::vector<std::byte> f;
  tf::encode_header(
      f, {tf::FrameType::write, kRegion, offset, static_cast<std::uint32_t>(payload.size())});
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

}  // namespace

TEST_CASE("tcp: a counter split across reads is never seen torn", "[tcp][frames]") {
  // 0x00000000000108ff -> 0x0000000000010900: a reader of the half-applied bytes would see
  // 0x10800, a value the writer never wrote (far behind, or ahead, of the real one).
  constexpr std::uint64_t kOld = 0x108ff, kNew = 0x10900;
  std::array<std::byte, 8> bytes{};
  std::memcpy(bytes.data(), &kNew, 8);
  const auto frame = write_frame(64, bytes);
  for (std::size_t cut = tf::kHeaderSize + 1; cut < frame.size(); ++cut) {
    OneRegion sink;
    std::memcpy(sink.mem.data() + 64, &kOld, 8);
    std::vector<std::byte> stream;
    tf::encode_hello(stream, 2, 1, {});
    const std::size_t hello = stream.size();
    stream.insert(stream.end(), frame.begin(), frame.end());
    tf::FrameDecoder dec(1u << 16);
    const auto first = std::span<const std::byte>(stream).first(hello + cut);
    auto r = dec.feed(first, sink);
    REQUIRE(r.state == tf::DecodeState::ok);
    INFO("split after byte " << cut << " of the frame");
    CHECK(sink.word(64) == kOld);
    CHECK(dec.mid_frame());
    r = dec.feed(std::span<const std::byte>(stream).subspan(hello + cut), sink);
    REQUIRE(r.state == tf::DecodeState::ok);
    CHECK(sink.word(64) == kNew);
    CHECK_FALSE(dec.mid_frame());
  }
}

TEST_CASE("tcp: a large write split across reads lands whole once complete", "[tcp][frames]") {
  std::vector<std::byte> payload(1000);
  for (std::size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<std::byte>(i * 7 + 1);
  const auto frame = write_frame(100, payload);
  OneRegion sink;
  std::vector<std::byte> stream;
  tf::encode_hello(stream, 2, 1, {});
  stream.insert(stream.end(), frame.begin(), frame.end());
  tf::FrameDecoder dec(1u << 16);
  // Fed 37 bytes at a time, as a slow stream would deliver it.
  for (std::size_t pos = 0; pos < stream.size(); pos += 37) {
    const auto n = std::min<std::size_t>(37, stream.size() - pos);
    REQUIRE(dec.feed(std::span<const std::byte>(stream).subspan(pos, n), sink).state ==
            tf::DecodeState::ok);
  }
  CHECK(std::memcmp(sink.mem.data() + 100, payload.data(), payload.size()) == 0);
  CHECK_FALSE(dec.mid_frame());
}

// Rows belong to their owners: node 1 (the transport) owns [0, 1024) of the region, node 2
// (the raw peer) [1024, 2048); the rest is nobody's.
namespace {
std::vector<st::WriteGrant> rows() {
  return {st::WriteGrant{1, {{0, 1024}}}, st::WriteGrant{2, {{1024, 1024}}}};
}
}  // namespace

TEST_CASE("tcp: a write into another member's row is refused and suspects the writer",
          "[tcp][malformed][rows]") {
  Rig rig(rows());
  rig.raw->send(write_frame(kRegion, 1024, 8));  // its own row: lands
  rig.raw->send(write_frame(kRegion, 512, 8));   // node 1's row ("B suspects C")
  const auto s = rig.suspicion();
  INFO(s.detail);
  CHECK(s.peer == 2);
  CHECK(s.reason == st::SuspicionReason::foreign_write);
  CHECK_THAT(s.detail, Catch::Contains("node 2") && Catch::Contains("region 7") &&
                           Catch::Contains("[512, +8)") && Catch::Contains("[1024, +1024)"));
  CHECK(rig.raw->closed_by_peer());
  CHECK(rig.region[1024] == std::byte{0xAB});
  for (std::size_t i = 0; i < 1024; ++i)
    if (rig.region[i] != std::byte{0}) FAIL("node 1's row written at " << i);
  CHECK(rig.t.write(2, kRegion, 0, 3, 0, 8) == st::Status::peer_suspected);
}

TEST_CASE("tcp: a write that runs past the end of the writer's row is refused whole",
          "[tcp][malformed][rows]") {
  Rig rig(rows());
  rig.raw->send(write_frame(kRegion, 2040, 16));
  rig.expect(st::SuspicionReason::foreign_write);
  for (auto b : rig.region)
    CHECK(b == std::byte{0});
}

TEST_CASE("tcp: a peer without a grant may write nothing into a restricted region",
          "[tcp][malformed][rows]") {
  Rig rig({st::WriteGrant{1, {{0, kSize}}}});
  rig.raw->send(write_frame(kRegion, 3000, 8));
  const auto s = rig.suspicion();
  CHECK(s.reason == st::SuspicionReason::foreign_write);
  CHECK_THAT(s.detail, Catch::Contains("may write nothing"));
  for (auto b : rig.region)
    CHECK(b == std::byte{0});
}

TEST_CASE("tcp: grants are checked when made and only while disconnected", "[tcp][rows]") {
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  (void)t.create_region(kRegion, kSize);
  CHECK_THROWS_AS(t.restrict_writes(kRegion, std::vector{st::WriteGrant{2, {{kSize - 8, 16}}}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(t.restrict_writes(99, std::vector{st::WriteGrant{2, {{0, 8}}}}),
                  std::invalid_argument);
}

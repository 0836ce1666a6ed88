// TCP handshake: HELLO carries the domain and the settings every member must share; peers
// that differ refuse each other with both values named, on both sides. Hosts may be names
// (localhost); a name that does not resolve is a suspicion naming it. A HELLO of another
// format version is refused naming both versions.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

#include "../smc/loopback.hpp"
#include "frame.hpp"

namespace st = spindle::transport;
namespace tf = spindle::transport::tcp_frames;
using namespace std::chrono_literals;

namespace {

struct Outcome {
  st::Status status = st::Status::ok;
  std::vector<st::Suspicion> suspicions;
};

Outcome outcome(st::TcpTransport& t, st::Status s) {
  Outcome o{s, {}};
  std::vector<st::Event> ev;
  t.poll(ev);
  for (auto& e : ev) {
    if (auto* sp = std::get_if<st::Suspicion>(&e)) o.suspicions.push_back(*sp);
  }
  return o;
}

// Node 1 and node 2 (which dials node 1) connect for view 1 with these configurations.
std::pair<Outcome, Outcome> connect_pair(st::TcpConfig a, st::TcpConfig b,
                                         const std::string& host = "127.0.0.1") {
  a.self = st::NodeAddress{1, host, 0};
  b.self = st::NodeAddress{2, host, 0};
  st::TcpTransport ta(std::move(a)), tb(std::move(b));
  (void)ta.create_region(1, 4096);
  (void)tb.create_region(1, 4096);
  const std::vector<st::NodeAddress> members{{1, host, ta.port()}, {2, host, tb.port()}};
  auto fa = std::async(std::launch::async, [&] { return ta.connect(members, 1, 2s); });
  auto fb = std::async(std::launch::async, [&] { return tb.connect(members, 1, 2s); });
  const auto sa = fa.get();
  const auto sb = fb.get();
  return {outcome(ta, sa), outcome(tb, sb)};
}

void expect_refused(const Outcome& o, const std::string& detail) {
  CHECK(o.status == st::Status::peer_suspected);
  REQUIRE(o.suspicions.size() == 1);
  CHECK(o.suspicions[0].reason == st::SuspicionReason::mismatch);
  CHECK(o.suspicions[0].detail == detail);
}

}  // namespace

TEST_CASE("tcp: peers of different domains refuse each other, naming both", "[tcp][handshake]") {
  st::TcpConfig a, b;
  b.domain_id = 3;
  const auto [oa, ob] = connect_pair(a, b);
  expect_refused(oa, "node 2 is in domain 3, this node in domain 0");
  expect_refused(ob, "node 1 is in domain 0, this node in domain 3");
}

TEST_CASE("tcp: a must-agree setting that differs is refused, naming both values",
          "[tcp][handshake]") {
  st::TcpConfig a, b;
  a.must_agree = {{"protocol", "1"}, {"engine.slot_size", "1024"}};
  b.must_agree = {{"protocol", "1"}, {"engine.slot_size", "2048"}};
  {
    const auto [oa, ob] = connect_pair(a, b);
    expect_refused(oa, "engine.slot_size: node 2 has 2048, this node 1024");
    expect_refused(ob, "engine.slot_size: node 1 has 1024, this node 2048");
  }
  b.must_agree = {{"protocol", "1"}};
  {
    const auto [oa, ob] = connect_pair(a, b);
    expect_refused(oa, "engine.slot_size: node 2 does not state it, this node has 1024");
    expect_refused(ob, "engine.slot_size: node 1 has 1024, this node does not state it");
  }
  b.must_agree = a.must_agree;
  b.domain_id = a.domain_id = 4;
  {
    const auto [oa, ob] = connect_pair(a, b);
    CHECK(oa.status == st::Status::ok);
    CHECK(ob.status == st::Status::ok);
  }
}

TEST_CASE("tcp: must-agree settings that cannot travel in a HELLO are refused at start",
          "[tcp][handshake]") {
  st::TcpConfig a;
  a.self = st::NodeAddress{1, "127.0.0.1", 0};
  a.must_agree = {{"x", "1"}, {"x", "2"}};
  CHECK_THROWS_WITH(st::TcpTransport(a), "tcp: must_agree: setting 'x' appears twice");
}

TEST_CASE("tcp: a HELLO of format version 1 is refused, naming both versions", "[tcp][handshake]") {
  // A listener of the old format, as node 1; our node 2 dials it.
  const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(lfd, 4) == 0);
  REQUIRE(::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{2, "127.0.0.1", 0}}};
  const std::vector<st::NodeAddress> members{{1, "127.0.0.1", ntohs(a.sin_port)},
                                             {2, "127.0.0.1", t.port()}};
  auto connected = std::async(std::launch::async, [&] { return t.connect(members, 1, 2s); });
  const int fd = ::accept(lfd, nullptr, nullptr);
  REQUIRE(fd >= 0);
  // Version 1: "SPNDLTCP", version, count = 0.
  std::vector<std::byte> old;
  tf::encode_header(old, tf::FrameHeader{tf::FrameType::hello, 1, 1, 16});
  const char magic[8] = {'S', 'P', 'N', 'D', 'L', 'T', 'C', 'P'};
  for (char c : magic)
    old.push_back(static_cast<std::byte>(c));
  const std::byte rest[8] = {std::byte{1}, {}, {}, {}, {}, {}, {}, {}};
  old.insert(old.end(), rest, rest + 8);
  REQUIRE(::send(fd, old.data(), old.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(old.size()));
  const auto o = outcome(t, connected.get());
  ::close(fd);
  ::close(lfd);
  CHECK(o.status == st::Status::peer_suspected);
  REQUIRE(o.suspicions.size() == 1);
  CHECK(o.suspicions[0].reason == st::SuspicionReason::malformed_frame);
  CHECK(o.suspicions[0].detail == "node 1: HELLO version 1 (we speak 3)");
}

TEST_CASE("tcp: a member dialing with a HELLO of format version 1 is refused by name",
          "[tcp][handshake]") {
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  const std::vector<st::NodeAddress> members{{1, "127.0.0.1", t.port()}, {2, "127.0.0.1", 1}};
  auto connected = std::async(std::launch::async, [&] { return t.connect(members, 1, 2s); });
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(t.port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  // Version 1 from node 2: "SPNDLTCP", version, count = 0.
  std::vector<std::byte> old;
  tf::encode_header(old, tf::FrameHeader{tf::FrameType::hello, 2, 1, 16});
  for (char c : std::string("SPNDLTCP"))
    old.push_back(static_cast<std::byte>(c));
  const std::byte rest[8] = {std::byte{1}, {}, {}, {}, {}, {}, {}, {}};
  old.insert(old.end(), rest, rest + 8);
  REQUIRE(::send(fd, old.data(), old.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(old.size()));
  const auto o = outcome(t, connected.get());
  ::close(fd);
  CHECK(o.status == st::Status::peer_suspected);
  REQUIRE(o.suspicions.size() == 1);
  CHECK(o.suspicions[0].reason == st::SuspicionReason::malformed_frame);
  CHECK(o.suspicions[0].detail == "node 2: HELLO version 1 (we speak 3)");
}

TEST_CASE("tcp: members named by host name (localhost) connect", "[tcp][hostname]") {
  st::TcpConfig a, b;
  const auto [oa, ob] = connect_pair(a, b, "localhost");
  CHECK(oa.status == st::Status::ok);
  CHECK(ob.status == st::Status::ok);
}

TEST_CASE("tcp: a member whose host name does not resolve is suspected, naming it",
          "[tcp][hostname]") {
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{2, "localhost", 0}}};
  const std::vector<st::NodeAddress> members{{1, "no-such-host.invalid", 7400},
                                             {2, "localhost", t.port()}};
  const auto o = outcome(t, t.connect(members, 1, 1s));
  CHECK(o.status == st::Status::peer_suspected);
  REQUIRE(o.suspicions.size() == 1);
  CHECK(o.suspicions[0].reason == st::SuspicionReason::connect_timeout);
  CHECK_THAT(o.suspicions[0].detail,
             Catch::StartsWith("cannot resolve host 'no-such-host.invalid' of node 1: "));
}

TEST_CASE("tcp: a host name of this node that does not resolve is refused at start",
          "[tcp][hostname]") {
  try {
    st::TcpTransport t{st::TcpConfig{st::NodeAddress{1, "no-such-host.invalid", 0}}};
    FAIL("an unresolvable host was bound");
  } catch (const std::system_error& e) {
    CHECK_THAT(e.what(),
               Catch::StartsWith("tcp: cannot resolve this node's host 'no-such-host.invalid': "));
  }
}

namespace {

// The decoder alone: what it makes of one HELLO whose payload is `payload`.
struct HelloSink final : tf::FrameSink {
  std::vector<tf::Hello> hellos;
  std::span<std::byte> region(st::RegionId) override { return {}; }
  void on_hello(const tf::Hello& h) override { hellos.push_back(h); }
  BlockTarget on_block_begin(std::uint32_t, std::uint32_t) override { return {}; }
  void on_block_end() override {}
  void on_goodbye() override {}
};

std::vector<std::byte> le32(std::uint32_t v) {
  std::vector<std::byte> b(4);
  for (int i = 0; i < 4; ++i)
    b[static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
  return b;
}

// A version-2 HELLO payload: fixed part with these counts, then `rest`.
std::vector<std::byte> payload(std::uint32_t count, std::uint32_t settings_bytes,
                               const std::string& rest) {
  std::vector<std::byte> p;
  for (char c : std::string("SPNDLTCP"))
    p.push_back(static_cast<std::byte>(c));
  for (std::uint32_t v : {tf::kVersion, count, 0u, settings_bytes, 0u, 0u}) {  // nonce: 0
    const auto b = le32(v);
    p.insert(p.end(), b.begin(), b.end());
  }
  for (char c : rest)
    p.push_back(static_cast<std::byte>(c));
  return p;
}

std::string decode_error(const std::vector<std::byte>& body) {
  std::vector<std::byte> frame;
  tf::encode_header(
      frame, tf::FrameHeader{tf::FrameType::hello, 2, 1, static_cast<std::uint32_t>(body.size())});
  frame.insert(frame.end(), body.begin(), body.end());
  tf::FrameDecoder dec(1 << 16);
  HelloSink sink;
  const auto r = dec.feed(frame, sink);
  if (r.state != tf::DecodeState::error) return "";
  CHECK(r.reason == st::SuspicionReason::malformed_frame);
  CHECK(sink.hellos.empty());
  return r.detail;
}

}  // namespace

TEST_CASE("tcp: a HELLO's settings round-trip, and every malformed one is named",
          "[tcp][handshake][frames]") {
  tf::Hello h;
  h.node = 2;
  h.epoch = 9;
  h.domain = 3;
  h.regions = {st::RegionDescriptor{7, 4096}};
  h.settings = {{"protocol", "1"}, {"engine.slot_size", "1024"}, {"empty", ""}};
  std::vector<std::byte> frame;
  tf::encode_hello(frame, h);
  tf::FrameDecoder dec(1 << 16);
  HelloSink sink;
  for (const auto b : frame)  // one byte at a time: the HELLO is collected across reads
    REQUIRE(dec.feed(std::span(&b, 1), sink).state == tf::DecodeState::ok);
  REQUIRE(sink.hellos.size() == 1);
  CHECK(sink.hellos[0].domain == 3);
  CHECK(sink.hellos[0].epoch == 9);
  CHECK(sink.hellos[0].regions.size() == 1);
  CHECK(sink.hellos[0].settings == h.settings);

  CHECK_THAT(decode_error(std::vector<std::byte>(8, std::byte{'S'})),
             Catch::StartsWith("HELLO length 8 outside 12.."));
  CHECK(decode_error(std::vector<std::byte>(70000)).rfind("HELLO length 70000 outside 12..", 0) ==
        0);
  auto short_fixed = payload(0, 0, "");
  short_fixed.resize(20);
  CHECK(decode_error(short_fixed) == "HELLO length 20 shorter than its 32 fixed bytes");
  CHECK(decode_error(payload(1, 0, "")) ==
        "HELLO length 32 is not 32 + 16 * 1 regions + 0 settings bytes");
  CHECK(decode_error(payload(0, 1, "\x05")) == "HELLO setting entry cut short at byte 0");
  CHECK(decode_error(payload(0, 3, std::string("\x00\x01x", 3))) ==
        "HELLO setting with an empty name");
  CHECK(decode_error(payload(0, 4, "\x03\x01xy")) ==
        "HELLO setting entry runs past the settings' 4 bytes");
  CHECK(decode_error(payload(0, 3, std::string("\x01\x00\x07", 3))) ==
        "HELLO setting with a non-printable name or value");
  CHECK(decode_error(payload(0, 6, std::string("\x01\x00x\x01\x00x", 6))) ==
        "HELLO setting 'x' appears twice");
  auto bad_magic = payload(0, 0, "");
  bad_magic[0] = std::byte{'X'};
  CHECK(decode_error(bad_magic) == "HELLO magic is not SPNDLTCP");

  CHECK(tf::check_settings(std::vector<st::AgreedSetting>{{std::string(256, 'n'), "v"}}) ==
        "setting '" + std::string(256, 'n') + "': name must be 1..255 bytes and value at most 255");
  std::vector<st::AgreedSetting> many;
  for (int i = 0; i < 20; ++i)
    many.push_back({std::to_string(i) + "s", std::string(250, 'v')});
  CHECK_THAT(tf::check_settings(many), Catch::StartsWith("settings take "));
  CHECK_THAT(tf::check_settings(many), Catch::EndsWith(" bytes, more than 4096"));
}

namespace {

// A connection to 127.0.0.1:port that says a HELLO claiming `node` for `epoch`, with
// `nonce`; returns the descriptor (kept open by the caller).
int forged_hello(std::uint16_t port, st::NodeId node, std::uint64_t epoch, std::uint64_t nonce) {
  const int fd = spindle::testing::connect_loopback(port);
  REQUIRE(fd >= 0);
  tf::Hello h;
  h.node = node;
  h.epoch = epoch;
  h.nonce = nonce;
  h.regions = {st::RegionDescriptor{1, 4096, 0, 0}};
  std::vector<std::byte> frame;
  tf::encode_hello(frame, h);
  REQUIRE(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(frame.size()));
  return fd;
}

// a and b connect view 1 of `members` at once; both must succeed.
void both_connect(st::TcpTransport& a, st::TcpTransport& b,
                  const std::vector<st::NodeAddress>& members) {
  auto fa = std::async(std::launch::async, [&] { return a.connect(members, 1, 2s); });
  auto fb = std::async(std::launch::async, [&] { return b.connect(members, 1, 2s); });
  CHECK(fa.get() == st::Status::ok);
  CHECK(fb.get() == st::Status::ok);
}

}  // namespace

TEST_CASE("tcp: HELLOs parked ahead of a joined member without its nonce never bind",
          "[tcp][handshake][nonce]") {
  // Node 2 joined with nonce 77. Before node 1 connects view 1, strangers claim node 2 for
  // it: parked, then refused, and the real node 2 connects. Once, 21 of them took node 2's
  // place and stopped every member.
  st::TcpTransport a{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  st::TcpTransport b{st::TcpConfig{st::NodeAddress{2, "127.0.0.1", 0}}};
  (void)a.create_region(1, 4096);
  (void)b.create_region(1, 4096);
  std::vector<int> forged;
  for (int i = 0; i < 21; ++i)
    forged.push_back(forged_hello(a.port(), 2, 1, i == 0 ? 0 : 78));
  std::this_thread::sleep_for(100ms);  // they are parked
  std::vector<st::NodeAddress> members{{1, "127.0.0.1", a.port()}, {2, "127.0.0.1", b.port()}};
  members[1].nonce = 77;
  both_connect(a, b, members);
  // The link is node 2's own: a write arrives.
  auto mine = b.local_region(1);
  REQUIRE(mine);
  std::memset(mine->bytes.data(), 0x2a, 8);
  REQUIRE(b.write(1, 1, 0, 1, 0, 8) == st::Status::ok);
  const auto theirs = a.local_region(1);
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (static_cast<int>(theirs->bytes[0]) != 0x2a && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(1ms);
  CHECK(static_cast<int>(theirs->bytes[0]) == 0x2a);
  for (int fd : forged)
    ::close(fd);
}

TEST_CASE("tcp: what strangers can make a member park is bounded", "[tcp][handshake][nonce]") {
  // 300 HELLOs for a view to come: at most 64 are held (the oldest go first), and the real
  // member still connects.
  st::TcpTransport a{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  st::TcpTransport b{st::TcpConfig{st::NodeAddress{2, "127.0.0.1", 0}}};
  (void)a.create_region(1, 4096);
  (void)b.create_region(1, 4096);
  std::vector<int> forged;
  for (int i = 0; i < 300; ++i)
    forged.push_back(forged_hello(a.port(), 1000 + static_cast<st::NodeId>(i), 9, 0));
  // The oldest were closed: reading one ends at once.
  std::this_thread::sleep_for(200ms);
  char c = 0;
  CHECK(::recv(forged.front(), &c, 1, MSG_DONTWAIT) == 0);
  both_connect(a, b, {{1, "127.0.0.1", a.port()}, {2, "127.0.0.1", b.port()}});
  for (int fd : forged)
    ::close(fd);
}

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
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

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
  CHECK(o.suspicions[0].detail == "node 1: HELLO version 1 (we speak 2)");
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

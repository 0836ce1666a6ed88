// External clients below the API: the frames of the client link (relay_wire.hpp) round-trip
// and refuse what is cut or out of range, naming the field; a member serving clients refuses a
// client of another domain or with a node id taken, and cuts off one that sends what it may
// not (a guid that is not its own, a goodbye or a detach in the member's name, an absurd
// frame) and goes on serving the next; a
// client with no relay to reach fails with every relay it tried named, and one whose relay
// closed its connection unanswered tries again. Every member's Router
// takes a client's messages from its current relay only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "ShapeType.hpp"
#include "client/relay_wire.hpp"
#include "core/socket_io.hpp"
#include "dcps/entities.hpp"
#include "dcps/le.hpp"
#include "dcps/router.hpp"
#include "dcps/wire.hpp"
#include "loopback.hpp"
#include "scoped_config.hpp"
#include "transports.hpp"

namespace sc = spindle::client;
namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::span<const std::byte> body_of(const std::vector<std::byte>& frame) {
  return std::span<const std::byte>(frame).subspan(sc::kFrameHead);
}

// A frame's bytes read from a raw socket: its type and body; nullopt at EOF or timeout.
std::optional<std::pair<sc::FrameType, std::vector<std::byte>>> read_frame(int fd) {
  std::byte head[sc::kFrameHead];
  const auto deadline = Clock::now() + 5s;
  if (!spindle::core::read_exact(fd, head, sc::kFrameHead, deadline)) return std::nullopt;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<std::uint32_t>(head[i]) << (8 * i);
  std::vector<std::byte> body(n - 1);
  if (!spindle::core::read_exact(fd, body.data(), body.size(), deadline)) return std::nullopt;
  return std::pair{static_cast<sc::FrameType>(head[4]), std::move(body)};
}

// True once the peer closed the connection (within a few seconds).
bool closed_by_peer(int fd) {
  std::byte b[4096];
  const auto deadline = Clock::now() + 5s;
  bool closed = false;
  while (Clock::now() < deadline) {
    if (!spindle::core::read_exact(fd, b, 1, deadline, &closed)) return closed;
  }
  return false;
}

int connect_raw(std::uint16_t port) {
  const int fd = tst::connect_loopback(port);
  REQUIRE(fd >= 0);
  return fd;
}

void send_frame(int fd, const std::vector<std::byte>& frame) {
  REQUIRE(spindle::core::write_all(fd, frame.data(), frame.size()));
}

std::vector<std::byte> publish_frame(const spindle::dcps::SampleHeader& h,
                                     std::span<const std::byte> payload = {}) {
  std::vector<std::byte> message(sizeof h);
  std::memcpy(message.data(), &h, sizeof h);
  message.insert(message.end(), payload.begin(), payload.end());
  auto frame = sc::encode_publish_head(spindle::group::Channel{h.topic, {}, 0}, message.size());
  frame.insert(frame.end(), message.begin(), message.end());
  return frame;
}

sc::Hello hello(std::uint32_t domain, std::uint32_t node = 4242) {
  sc::Hello h;
  h.domain_id = domain;
  h.node = node;
  h.settings = {{"protocol", "4"}};
  return h;
}

}  // namespace

TEST_CASE("client link: every frame round-trips", "[wire]") {
  std::string error;
  const auto h = sc::decode_hello(body_of(sc::encode(hello(7))), error);
  REQUIRE(h);
  CHECK(h->domain_id == 7);
  CHECK(h->node == 4242);
  CHECK(h->settings == std::vector<std::pair<std::string, std::string>>{{"protocol", "4"}});

  sc::Welcome w;
  w.relay = 3;
  w.max_large_message = 1 << 20;
  w.view_yaml = "epoch: 1";
  w.state = {std::byte{1}, std::byte{2}};
  const auto back = sc::decode_welcome(body_of(sc::encode(w)), error);
  REQUIRE(back);
  CHECK(back->relay == 3);
  CHECK(back->max_large_message == w.max_large_message);
  CHECK(back->view_yaml == w.view_yaml);
  CHECK(back->state == w.state);

  const auto lost = sc::decode_lost(body_of(sc::encode(sc::Lost{9, true, "gone"})), error);
  REQUIRE(lost);
  CHECK((lost->node == 9 && lost->left && lost->why == "gone"));
  const auto acked = sc::decode_acked(body_of(sc::encode(sc::Acked{42, 5})), error);
  REQUIRE(acked);
  CHECK((acked->writer == 42 && acked->count == 5));
  const auto want = sc::decode_want(body_of(sc::encode_want(11, spindle::group::Want::all)), error);
  REQUIRE(want);
  CHECK((want->first == 11 && want->second == spindle::group::Want::all));
  const auto own = sc::decode_want(body_of(sc::encode_want(12, spindle::group::Want::own)), error);
  REQUIRE(own);
  CHECK((own->first == 12 && own->second == spindle::group::Want::own));
  CHECK(sc::decode_text(sc::FrameType::halt, body_of(sc::encode_halt("stop")), error) == "stop");

  spindle::dcps::SampleHeader sh;
  sh.topic = 5;
  sh.writer = 77;
  const auto pub = publish_frame(sh);
  const auto p = sc::decode_publish(body_of(pub), error);
  REQUIRE(p);
  CHECK(p->channel.topic == 5);
  CHECK(p->message.size() == sizeof sh);

  std::vector<std::byte> payload{std::byte{9}, std::byte{8}};
  spindle::group::Message m;
  m.subgroup = 2;
  m.sender = 4;
  m.sender_rank = 1;
  m.index = 17;
  m.seq = -1;
  m.flags = 3;
  m.lost_before = 6;
  m.listened = true;
  m.payload = payload;
  sc::FrameWriter fw(sc::FrameType::deliver);
  sc::begin_deliver(fw, 2);
  sc::add_delivered(fw, m);
  sc::add_delivered(fw, m);
  const auto frame = fw.finish();
  std::vector<spindle::group::Message> out;
  REQUIRE(sc::decode_deliver(body_of(frame), out, error));
  REQUIRE(out.size() == 2);
  CHECK((out[1].subgroup == 2 && out[1].sender == 4 && out[1].sender_rank == 1 &&
         out[1].index == 17 && out[1].seq == -1 && out[1].flags == 3 && out[1].lost_before == 6 &&
         out[1].listened));
  CHECK(std::vector<std::byte>(out[1].payload.begin(), out[1].payload.end()) == payload);
}

TEST_CASE("client link: cut and out-of-range frames are refused, naming the field", "[wire]") {
  std::string error;
  auto frame = sc::encode(hello(7));
  auto cut = body_of(frame).first(body_of(frame).size() - 3);
  CHECK_FALSE(sc::decode_hello(cut, error));
  CHECK(error.find("HELLO: setting value at offset") != std::string::npos);

  sc::FrameWriter other(sc::FrameType::hello);
  other.str("SPINDLE-JOIN 2");
  CHECK_FALSE(sc::decode_hello(body_of(other.finish()), error));
  CHECK(error.find("magic 'SPINDLE-JOIN 2'") != std::string::npos);

  auto welcome = sc::encode(sc::Welcome{});
  welcome.erase(welcome.end() - 2, welcome.end());
  CHECK_FALSE(sc::decode_welcome(body_of(welcome), error));
  CHECK(error.find("WELCOME: state at offset") != std::string::npos);

  sc::FrameWriter many(sc::FrameType::deliver);
  sc::begin_deliver(many, 1'000'000);
  std::vector<spindle::group::Message> out;
  CHECK_FALSE(sc::decode_deliver(body_of(many.finish()), out, error));
  CHECK(error.find("DELIVER: 1000000 messages cannot fit") != std::string::npos);

  sc::FrameWriter huge(sc::FrameType::deliver);
  sc::begin_deliver(huge, 1);
  for (int i = 0; i < 6; ++i)
    huge.u64(0);
  huge.u64(~0ull);  // a payload length past the frame
  CHECK_FALSE(sc::decode_deliver(body_of(huge.finish()), out, error));
  CHECK(error.find("DELIVER: payload at offset") != std::string::npos);

  auto want = sc::encode_want(1, spindle::group::Want::all);
  want.back() = std::byte{7};
  CHECK_FALSE(sc::decode_want(body_of(want), error));
  CHECK(error == "WANT: want is 7, not 0 (none), 1 (all) or 2 (own)");

  auto lost = sc::encode(sc::Lost{9, true, "gone"});
  lost[sc::kFrameHead + 4] = std::byte{9};
  CHECK_FALSE(sc::decode_lost(body_of(lost), error));
  CHECK(error == "LOST: left is 9, not 0 or 1");

  auto extra = sc::encode(sc::Acked{1, 2});
  extra.push_back(std::byte{0});
  CHECK_FALSE(sc::decode_acked(body_of(extra), error));
  CHECK(error == "ACKED: 1 bytes past its end at offset 16");
}

TEST_CASE("relay: a member whose node.host is a host name serves clients at its address",
          "[relay]") {
  // docs/qos.md: host names are fine wherever an address is; the client port listens at the
  // name's first IPv4 address, as the join port does.
  const auto port = tst::free_loopback_port();
  const tst::ScopedDomainConfig config("transport: tcp, node: {host: localhost}, client_port: " +
                                       std::to_string(port));
  dds::domain::DomainParticipant member(0);
  auto core = std::static_pointer_cast<spindle::dcps::Participant>(member.core_ptr());
  REQUIRE(core->client_port() == port);
  const int fd = connect_raw(port);
  send_frame(fd, sc::encode(hello(0)));
  const auto f = read_frame(fd);
  REQUIRE(f);
  CHECK(f->first == sc::FrameType::welcome);
  ::close(fd);
}

TEST_CASE("relay: another domain is refused; a client that forges is cut off; the member goes on",
          "[relay]") {
  const auto port = tst::free_loopback_port();
  // On loopback, where the raw connections below go.
  const tst::ScopedDomainConfig config("transport: tcp, node: {host: 127.0.0.1}, client_port: " +
                                       std::to_string(port));
  dds::domain::DomainParticipant member(0);
  auto core = std::static_pointer_cast<spindle::dcps::Participant>(member.core_ptr());
  REQUIRE(core->client_port() == port);
  std::string error;

  SECTION("a client of another domain is refused, both named") {
    const int fd = connect_raw(port);
    send_frame(fd, sc::encode(hello(5)));
    const auto f = read_frame(fd);
    REQUIRE(f);
    CHECK(f->first == sc::FrameType::refused);
    CHECK(sc::decode_text(f->first, f->second, error) == "this member serves domain 0, not 5");
    CHECK(closed_by_peer(fd));
    ::close(fd);
  }
  SECTION("a client of another protocol version is refused, both named") {
    const int fd = connect_raw(port);
    auto h = hello(0);
    h.settings = {{"protocol", "1"}};
    send_frame(fd, sc::encode(h));
    const auto f = read_frame(fd);
    REQUIRE(f);
    CHECK(f->first == sc::FrameType::refused);
    CHECK(sc::decode_text(f->first, f->second, error) == "protocol is 1 at the client and 4 here");
    ::close(fd);
  }
  SECTION("a stranger that does not say HELLO first is dropped") {
    const int fd = connect_raw(port);
    send_frame(fd, sc::encode_want(1, spindle::group::Want::all));
    CHECK(closed_by_peer(fd));
    ::close(fd);
  }
  SECTION("an absurd frame length is dropped") {
    const int fd = connect_raw(port);
    send_frame(fd, sc::encode(hello(0)));
    REQUIRE(read_frame(fd)->first == sc::FrameType::welcome);
    const std::vector<std::byte> absurd{std::byte{0xff}, std::byte{0xff}, std::byte{0xff},
                                        std::byte{0x7f}, std::byte{16}};
    send_frame(fd, absurd);
    CHECK(closed_by_peer(fd));
    ::close(fd);
  }
  SECTION("a node id of a member, or of a client here already, is refused") {
    const bool twice = GENERATE(false, true);
    const int first = connect_raw(port);
    std::optional<int> second;
    if (twice) {
      send_frame(first, sc::encode(hello(0, 77)));
      REQUIRE(read_frame(first)->first == sc::FrameType::welcome);
      second = connect_raw(port);
    }
    const int fd = twice ? *second : first;
    send_frame(fd, sc::encode(hello(0, twice ? 77 : core->node_id())));
    const auto f = read_frame(fd);
    REQUIRE(f);
    CHECK(f->first == sc::FrameType::refused);
    CHECK(sc::decode_text(f->first, f->second, error) ==
          (twice ? "node 77 is a client here already"
                 : "node " + std::to_string(core->node_id()) +
                       " is a member of this domain, not a client"));
    ::close(first);
    if (second) ::close(*second);
  }
  SECTION(
      "another node's guid, a goodbye or a detach in the member's name, or a repair in another's, "
      "cuts it off") {
    const int kind = GENERATE(0, 1, 2, 3);
    const int fd = connect_raw(port);
    send_frame(fd, sc::encode(hello(0, 4242)));
    const auto f = read_frame(fd);
    REQUIRE(f);
    REQUIRE(f->first == sc::FrameType::welcome);
    const auto w = sc::decode_welcome(f->second, error);
    REQUIRE(w);
    CHECK(w->relay == core->node_id());
    spindle::dcps::SampleHeader h;
    std::string refusal;
    if (kind == 0) {
      h.topic = spindle::dcps::topic_id("Stolen");
      h.writer = spindle::dcps::make_guid(w->relay, 2);  // the member's own entity
      refusal = "is not one of its entities' (node 4242)";
    } else if (kind == 3) {
      h.kind = spindle::dcps::SampleKind::repair;
      h.writer = spindle::dcps::make_guid(w->relay, 0);  // the member's participant
      refusal = "a repair not in its own name";
    } else {
      h.kind = kind == 1 ? spindle::dcps::SampleKind::participant_left
                         : spindle::dcps::SampleKind::client_detached;
      h.writer = spindle::dcps::make_guid(4242, 1);
      refusal = kind == 1 ? "a participant_left message (clients may not send those)"
                          : "a client_detached message (clients may not send those)";
    }
    send_frame(fd, publish_frame(h));
    CHECK(closed_by_peer(fd));
    ::close(fd);
    const auto stats = core->relay_stats();
    CHECK(stats.refused == 1);
    CHECK(stats.published == 0);
    CHECK(stats.last_refusal.find(refusal) != std::string::npos);
  }
  // Whatever came before, the next client is welcomed.
  const int fd = connect_raw(port);
  send_frame(fd, sc::encode(hello(0)));
  const auto f = read_frame(fd);
  REQUIRE(f);
  CHECK(f->first == sc::FrameType::welcome);
  ::close(fd);
}

// A member's requests and pieces of histories, and the pieces of repairs (docs/storage.md,
// "Refresh"; docs/dcps.md, "Repair"), stay among the members: a client is never left behind,
// and they can be large. A repair's request goes to clients too: a client keeps its own
// writers' changes and answers it through its relay, with pieces in its participant's name.
TEST_CASE("relay: a repair's request reaches clients; pieces stay among the members", "[relay]") {
  const auto port = tst::free_loopback_port();
  // On loopback, where the raw connections below go.
  const tst::ScopedDomainConfig config("transport: tcp, node: {host: 127.0.0.1}, client_port: " +
                                       std::to_string(port));
  dds::domain::DomainParticipant member(0);
  auto core = std::static_pointer_cast<spindle::dcps::Participant>(member.core_ptr());
  dds::topic::Topic<ShapeType> topic(member, "Gap");
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable();
  dds::sub::DataReader<ShapeType> reader(dds::sub::Subscriber(member), topic, rq);
  const int fd = connect_raw(port);
  send_frame(fd, sc::encode(hello(0, 4242)));
  auto f = read_frame(fd);
  REQUIRE(f);
  REQUIRE(f->first == sc::FrameType::welcome);
  std::string error;
  const auto welcome = sc::decode_welcome(f->second, error);
  REQUIRE(welcome);
  // The member's reliable reader of "Gap" missed messages: it asks for a repair, in the
  // builtin subgroup.
  const std::uint64_t gap = spindle::dcps::topic_id("Gap");
  core->router().on_gaps(std::span<const std::uint64_t>(&gap, 1));
  // The client answers with an (empty) repair for the member, in its participant's name:
  // published, and not handed back to it. Then a new Topic's record follows both.
  std::vector<std::byte> piece;
  spindle::dcps::put_le(piece, 1, 8);  // epoch
  spindle::dcps::put_le(piece, gap, 8);
  spindle::dcps::put_le(piece, 0, 4);  // piece 0 of 1
  spindle::dcps::put_le(piece, 1, 4);
  spindle::dcps::put_le(piece, 1, 4);  // for one member: the relay
  spindle::dcps::put_le(piece, welcome->relay, 4);
  spindle::dcps::put_le(piece, 0, 4);  // no floors, no messages
  spindle::dcps::SampleHeader h;
  h.kind = spindle::dcps::SampleKind::repair;
  h.writer = spindle::dcps::make_guid(4242, 0);
  std::vector<spindle::dcps::SampleKind> kinds;
  std::vector<spindle::group::Message> messages;
  auto read_until = [&](spindle::dcps::SampleKind last) {
    for (;;) {
      f = read_frame(fd);
      REQUIRE(f);
      if (f->first != sc::FrameType::deliver) continue;
      REQUIRE(sc::decode_deliver(f->second, messages, error));
      for (const auto& m : messages) {
        const auto p = spindle::dcps::parse(m.payload, error);
        if (!p || p->header.topic != 0) continue;
        kinds.push_back(p->header.kind);
        if (p->header.kind == last) return;
      }
    }
  };
  read_until(spindle::dcps::SampleKind::repair_request);
  send_frame(fd, publish_frame(h, piece));
  const auto published = Clock::now() + 5s;
  while (core->relay_stats().published == 0 && Clock::now() < published)
    std::this_thread::sleep_for(10ms);
  CHECK(core->relay_stats().published == 1);
  CHECK(core->relay_stats().refused == 0);
  dds::topic::Topic<ShapeType> marker(member, "Marker");
  read_until(spindle::dcps::SampleKind::announce_topic);
  ::close(fd);
  CHECK(std::count(kinds.begin(), kinds.end(), spindle::dcps::SampleKind::repair_request) == 1);
  CHECK(std::find(kinds.begin(), kinds.end(), spindle::dcps::SampleKind::repair) == kinds.end());
  // Its reader had nothing to take from it.
  CHECK(core->repairs() == 0);
}

// A client that does not read holds nobody: past its queue its relay drops its topic
// messages (its readers count them lost); a retained topic's message there cuts it off
// instead, so that its copy of the history never keeps a hole (it connects again, and the
// welcome brings the whole history).
TEST_CASE("relay: past its queue a client loses topic messages; a retained one cuts it off",
          "[relay]") {
  const auto port = tst::free_loopback_port();
  const tst::ScopedDomainConfig config("transport: tcp");
  dds::domain::DomainParticipant member(0);
  auto core = std::static_pointer_cast<spindle::dcps::Participant>(member.core_ptr());
  spindle::client::RelaySettings rs;
  rs.port = port;
  rs.must_agree = {{"protocol", "4"}};
  rs.queue_bytes = 64 << 10;
  core->serve_clients(rs);
  dds::topic::Topic<ShapeType> plain(member, "Plain");
  dds::sub::DataReader<ShapeType> reader(dds::sub::Subscriber(member), plain);
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(member), plain);
  const int fd = connect_raw(port);
  send_frame(fd, sc::encode(hello(0)));
  const auto f = read_frame(fd);
  REQUIRE(f);
  REQUIRE(f->first == sc::FrameType::welcome);
  send_frame(fd, sc::encode_want(spindle::dcps::topic_id("Plain"), spindle::group::Want::all));
  // It reads nothing more: the socket's buffers fill, then its queue at the relay.
  const std::string color(120, 'x');  // near its bound (128)
  const auto deadline = Clock::now() + 30s;
  for (int i = 0; core->relay_stats().dropped == 0 && Clock::now() < deadline; ++i) {
    writer.write(ShapeType(color, i, 0, 1));
    (void)reader.take();
  }
  REQUIRE(core->relay_stats().dropped > 0);
  CHECK(core->relay_stats().clients == 1);  // a topic message dropped, the client served on
  dds::topic::Topic<ShapeType> kept(member, "Kept");
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Durability::TransientLocal();
  dds::pub::DataWriter<ShapeType> keeper(dds::pub::Publisher(member), kept, wq);
  keeper.write(ShapeType("RED", 1, 1, 1));
  const auto cut = Clock::now() + 10s;
  while (core->relay_stats().clients != 0 && Clock::now() < cut)
    std::this_thread::sleep_for(10ms);
  CHECK(core->relay_stats().clients == 0);
  ::close(fd);
}

TEST_CASE("client: no relay to reach: the error names every relay tried", "[connect]") {
  const auto a = tst::free_loopback_port();
  const auto b = tst::free_loopback_port();
  const tst::ScopedDomainConfig config(
      "role: client, engine: {connect_timeout: 300ms}, relays: [{host: 127.0.0.1, port: " +
      std::to_string(a) + "}, {host: 127.0.0.1, port: " + std::to_string(b) + "}]");
  try {
    dds::domain::DomainParticipant p(0);
    FAIL("a client with no relay was created");
  } catch (const dds::core::Error& e) {
    const std::string what = e.what();
    CHECK(what.find("no relay took this client") != std::string::npos);
    CHECK(what.find("127.0.0.1:" + std::to_string(a) + ": no connection") != std::string::npos);
    CHECK(what.find("127.0.0.1:" + std::to_string(b) + ": no connection") != std::string::npos);
  }
}

TEST_CASE("client: a relay that closes the connection unanswered is tried again", "[connect]") {
  // A member's join port is open a moment before the member serves clients there, and closes
  // a client's connection meanwhile: the client tries again until its connect timeout, as
  // it does where nothing listens yet. Here a bare socket closes the first connection and
  // goes; then a member serves clients on that port.
  const auto port = tst::free_loopback_port();
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  const int one = 1;
  (void)::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(listener, 4) == 0);

  std::optional<tst::ScopedDomainConfig> config;
  const auto relay = "{host: 127.0.0.1, port: " + std::to_string(port) + "}";
  config.emplace("role: client, engine: {connect_timeout: 20s}, relays: [" + relay + "]");
  std::optional<dds::domain::DomainParticipant> client;
  std::string failed;
  std::thread joining([&] {
    try {
      client.emplace(0);
    } catch (const std::exception& e) {
      failed = e.what();
    }
  });
  // The client has read its configuration once it connects.
  const int first = ::accept(listener, nullptr, nullptr);
  REQUIRE(first >= 0);
  ::close(first);
  ::close(listener);
  config.emplace("transport: tcp, node: {host: 127.0.0.1}, client_port: " + std::to_string(port));
  dds::domain::DomainParticipant member(0);
  joining.join();
  INFO(failed);
  CHECK(failed.empty());
  CHECK(client.has_value());
  client.reset();  // before its relay goes
  config.reset();
}

namespace {

// The Router's delivery side needs no bus: a bus that cannot send (reaching it is a test bug).
class NoBus final : public spindle::group::Bus {
 public:
  void start(spindle::group::EngineClient&) override {}
  void stop() override {}
  void leave() override {}
  void closing() override {}
  void demand_changed() override {}
  void hold_sends(spindle::group::Channel) override {}
  void release_sends(spindle::group::Channel) override {}
  void shutdown() override {}
  [[nodiscard]] std::string halted() const override { return {}; }
  [[nodiscard]] spindle::transport::NodeId node() const noexcept override { return 1; }
  [[nodiscard]] spindle::group::View view() const override { return {}; }
  [[nodiscard]] spindle::group::Runtime& runtime() noexcept override { std::abort(); }
  [[nodiscard]] std::string_view transport_kind() const noexcept override { return "none"; }
  bool drive(spindle::group::TimePoint, spindle::core::FunctionRef<bool()>) override {
    return false;
  }
  [[nodiscard]] std::uint32_t max_message(spindle::group::Channel) const override { return 0; }
  [[nodiscard]] std::uint64_t max_large_message() const override { return 0; }
  [[nodiscard]] std::uint64_t in_flight(spindle::group::Channel) const override { return 0; }
  [[nodiscard]] spindle::group::Loan reserve(spindle::group::Channel, std::size_t,
                                             Clock::time_point) override {
    throw std::logic_error("NoBus sends nothing");
  }
  void commit(spindle::group::Loan&, std::size_t, Clock::time_point) override {
    throw std::logic_error("NoBus sends nothing");
  }
};

// One delivered message of `sender`: a header of `kind` by `writer`, `payload` after it.
struct Delivered {
  std::vector<std::byte> bytes;
  spindle::group::Message message;
  Delivered(spindle::transport::NodeId sender, spindle::dcps::SampleKind kind, std::uint64_t writer,
            std::uint64_t topic, std::vector<std::byte> payload = {}) {
    spindle::dcps::SampleHeader h;
    h.kind = kind;
    h.writer = writer;
    h.topic = topic;
    const auto* head = reinterpret_cast<const std::byte*>(&h);
    for (std::size_t i = 0; i < sizeof h; ++i)
      bytes.push_back(head[i]);
    for (const auto b : payload)
      bytes.push_back(b);
    message.sender = sender;
    message.payload = bytes;
  }
};

std::vector<std::byte> node_bytes(std::uint32_t node) {
  std::vector<std::byte> out;
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<std::byte>((node >> (8 * i)) & 0xff));
  return out;
}

}  // namespace

TEST_CASE("router: a client's messages come from its current relay only", "[router]") {
  namespace dcps = spindle::dcps;
  NoBus bus;
  dcps::Router router(bus);
  std::vector<dcps::SampleKind> builtin;
  router.set_builtin_handler([&](const dcps::ParsedSample& s, spindle::transport::NodeId) {
    builtin.push_back(s.header.kind);
  });
  const auto deliver = [&](const Delivered& d) { router.on_deliver(std::span(&d.message, 1)); };
  const std::uint64_t topic = dcps::topic_id("T");
  const auto sample = [&](spindle::transport::NodeId sender) {
    return Delivered(sender, dcps::SampleKind::data, dcps::make_guid(9, 3), topic);
  };
  const auto attach = [&](spindle::transport::NodeId relay, dcps::SampleKind kind) {
    return Delivered(relay, kind, dcps::make_guid(relay, 0), 0, node_bytes(9));
  };

  deliver(sample(5));  // node 9 is nobody's client yet
  CHECK(router.stats().malformed == 1);
  CHECK(router.stats().last_malformed.find("does not belong to node 5") != std::string::npos);

  deliver(attach(5, dcps::SampleKind::client_attached));
  CHECK(router.node_of(dcps::make_guid(9, 3)) == 5);
  deliver(sample(5));
  CHECK(router.stats().malformed == 1);  // from its relay: taken
  deliver(sample(6));
  CHECK(router.stats().malformed == 2);  // from another member: refused

  // It moved to relay 6: a detach from 5 that comes after is stale and changes nothing.
  deliver(attach(6, dcps::SampleKind::client_attached));
  deliver(attach(5, dcps::SampleKind::client_detached));
  CHECK(router.node_of(dcps::make_guid(9, 3)) == 6);
  CHECK(builtin.empty());
  deliver(attach(6, dcps::SampleKind::client_detached));
  CHECK(router.node_of(dcps::make_guid(9, 3)) == 9);
  CHECK(builtin == std::vector<dcps::SampleKind>{dcps::SampleKind::client_detached});

  // A relay removed from the view takes its clients with it.
  deliver(attach(6, dcps::SampleKind::client_attached));
  router.on_member_lost(6, false, "test");
  CHECK(router.node_of(dcps::make_guid(9, 3)) == 9);
  CHECK(router.relayed().empty());
}

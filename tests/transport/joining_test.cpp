// A member joining with a view holds nobody (transport.hpp, connect(); issue 32): on tcp
// and shm, connect() returns without a member whose NodeAddress::connect_within is set,
// connecting() says so, writes to it are refused with retry until it came, and once it
// connected a PeerConnected event says so and writes land, both ways. A joiner that never
// comes holds connect() no longer than one that came.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/shm.hpp>
#include <spindle/transport/tcp.hpp>

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Node {
  std::unique_ptr<st::Transport> t;
  st::NodeAddress address;
};
using Make = std::function<Node(st::NodeId)>;

Node tcp_node(st::NodeId id) {
  auto t = std::make_unique<st::TcpTransport>(st::TcpConfig{st::NodeAddress{id, "127.0.0.1", 0}});
  const st::NodeAddress a{id, "127.0.0.1", t->port()};
  return Node{std::move(t), a};
}

Make shm_nodes() {
  static int serial = 0;
  const std::string prefix =
      "spindle-jointest-" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
  return [prefix](st::NodeId id) {
    return Node{std::make_unique<st::ShmTransport>(st::ShmConfig{id, prefix}), {id, "", 0}};
  };
}

// Polls `t` until a PeerConnected for `peer` arrives (true) or 3 s pass (false).
bool connected_event(st::Transport& t, st::NodeId peer) {
  const auto until = Clock::now() + 3s;
  std::vector<st::Event> events;
  while (Clock::now() < until) {
    events.clear();
    t.poll(events);
    for (const auto& e : events)
      if (const auto* c = std::get_if<st::PeerConnected>(&e); c != nullptr && c->peer == peer)
        return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// `from` writes 8 bytes of `value` to `to`; true once they arrived within 2 s.
bool lands(st::Transport& from, st::Transport& to, st::NodeId to_id, std::uint64_t value) {
  std::memcpy(from.local_region(1)->bytes.data(), &value, sizeof value);
  if (from.write(to_id, 1, 0, 1, 0, sizeof value) != st::Status::ok) return false;
  const auto until = Clock::now() + 2s;
  while (Clock::now() < until) {
    std::uint64_t got = 0;
    std::memcpy(&got, to.local_region(1)->bytes.data(), sizeof got);
    if (got == value) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// Node `member` is in the view; node `joiner` joins with it and starts connecting 300 ms
// after the member's connect() returned.
void joiner_holds_nobody(const Make& make, st::NodeId member, st::NodeId joiner) {
  Node m = make(member);
  Node j = make(joiner);
  (void)m.t->create_region(1, 4096);
  (void)j.t->create_region(1, 4096);
  std::vector<st::NodeAddress> view{m.address, j.address};
  view[1].connect_within = 5s;
  const auto start = Clock::now();
  REQUIRE(m.t->connect(view, 1, 10s) == st::Status::ok);
  CHECK(Clock::now() - start < 1s);  // before: the joiner's wait (5 s here)
  CHECK(m.t->connecting(joiner));
  CHECK_FALSE(m.t->connecting(member));
  CHECK_FALSE(m.t->remote_region(joiner, 1));
  CHECK(m.t->write(joiner, 1, 0, 1, 0, 8) == st::Status::retry);
  std::this_thread::sleep_for(300ms);
  REQUIRE(j.t->connect(view, 1, 10s) == st::Status::ok);  // the joiner waits for the member
  CHECK(connected_event(*m.t, joiner));
  CHECK_FALSE(m.t->connecting(joiner));
  CHECK(m.t->remote_region(joiner, 1));
  CHECK(lands(*m.t, *j.t, joiner, 0x1111));
  CHECK(lands(*j.t, *m.t, member, 0x2222));
  j.t->disconnect();
  m.t->disconnect();
}

// A joiner that never comes: connect() returns at once all the same.
void absent_joiner_holds_nobody(const Make& make) {
  Node a = make(1);
  Node b = make(2);
  (void)a.t->create_region(1, 4096);
  (void)b.t->create_region(1, 4096);
  std::vector<st::NodeAddress> view{a.address, b.address, st::NodeAddress{3, "127.0.0.1", 1}};
  view[2].connect_within = 5s;
  const auto start = Clock::now();
  std::thread other([&] { CHECK(b.t->connect(view, 1, 10s) == st::Status::ok); });
  CHECK(a.t->connect(view, 1, 10s) == st::Status::ok);
  other.join();
  CHECK(Clock::now() - start < 2s);
  CHECK(a.t->connecting(3));
  CHECK(lands(*a.t, *b.t, 2, 0x3333));
  b.t->disconnect();
  a.t->disconnect();
}

}  // namespace

TEST_CASE("tcp: a joiner holds nobody, and connects in the background", "[tcp][joining]") {
  SECTION("the joiner dials") {
    joiner_holds_nobody(tcp_node, 1, 2);
  }
  SECTION("the member dials") {
    joiner_holds_nobody(tcp_node, 2, 1);
  }
  SECTION("a joiner that never comes") {
    absent_joiner_holds_nobody(tcp_node);
  }
}

TEST_CASE("shm: a joiner holds nobody, and connects in the background", "[shm][joining]") {
  SECTION("a joiner that comes") {
    joiner_holds_nobody(shm_nodes(), 1, 2);
  }
  SECTION("a joiner that never comes") {
    absent_joiner_holds_nobody(shm_nodes());
  }
}

// RDMC transfers (rdmc/rdmc.hpp) over the real transports — tcp on loopback and shared
// memory — with three nodes in threads of this process: two of them each send a stream of
// messages from 1 byte to 4 MiB (block size 64 KiB, so from one block to 64) to the other
// two, by the binomial pipeline and the chain. Every receiver must take every message of
// both senders, in order, byte for byte (a checksum of each is compared with the sender's),
// with nothing reported failed. Every wait is bounded. Over shared memory no block moves:
// each receiver reads the sender's buffer where it lies; with that off (Settings::in_place),
// every block lands in its message where it comes (no staging copy).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "rdmc/rdmc.hpp"
#include "transports.hpp"

namespace rdmc = spindle::rdmc;
namespace tst = spindle::testing;
using namespace std::chrono_literals;
using spindle::transport::NodeId;

namespace {

constexpr std::size_t kSizes[] = {1, 1000, 65536, 65537, 300'000, 4u << 20, 17, 2u << 20};

std::vector<std::byte> content(NodeId sender, std::size_t seq) {
  std::vector<std::byte> out(kSizes[seq]);
  std::uint64_t x = 0x9e3779b97f4a7c15ULL * (sender + 1) + seq;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return out;
}

// Connects every transport to the view of all of them, side by side (as members do); how
// many connected.
int connect_all(std::vector<tst::Made>& made,
                const std::vector<spindle::transport::NodeAddress>& members) {
  std::vector<std::thread> connecting;
  std::atomic<int> ok{0};
  for (auto& m : made)
    connecting.emplace_back([&, t = m.transport.get()] {
      if (t->connect(members, 1, 10s) == spindle::transport::Status::ok) ++ok;
    });
  for (auto& th : connecting)
    th.join();
  return ok.load();
}

}  // namespace

TEST_CASE("transfers over tcp and shm: two senders, 1 B to 4 MiB, every byte in order",
          "[transfer_threads]") {
  for (const auto& kind : tst::available_transports()) {
    for (const bool in_place : {true, false}) {
      if (kind == "tcp" && !in_place) continue;  // the same run: tcp keeps no rows in place
      for (auto algorithm : {rdmc::Algorithm::binomial_pipeline, rdmc::Algorithm::chain}) {
        INFO("transport " << kind << ", " << rdmc::to_string(algorithm)
                          << (in_place ? "" : ", in place off"));
        const std::string ns = "rdmc" + std::to_string(::getpid()) + kind;
        const std::vector<NodeId> ids{1, 2, 3};
        std::vector<tst::Made> made;
        std::vector<spindle::transport::NodeAddress> members;
        for (auto id : ids) {
          made.push_back(tst::make_transport(kind, id, ns));
          members.push_back({id, "127.0.0.1", made.back().port});
        }
        // Group 0: node 1 sends to 2 and 3; group 1: node 2 sends to 3 and 1.
        const std::vector<std::vector<NodeId>> groups{{1, 2, 3}, {2, 3, 1}};
        rdmc::Settings settings;
        settings.algorithm = algorithm;
        settings.block_size = 64 * 1024;
        settings.group_bytes = 8u << 20;
        settings.in_place = in_place;
        struct Node {
          std::unique_ptr<rdmc::Rdmc> r;
          std::map<rdmc::GroupId, std::vector<std::size_t>> got;
          std::vector<std::string> problems;
          std::size_t next = 0;
          std::atomic<std::size_t> taken{0};  // messages delivered (read by the test's thread)
        };
        std::vector<Node> nodes(ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) {
          rdmc::Callbacks cb;
          cb.delivered = [&, i](rdmc::GroupId g, std::uint64_t seq,
                                std::span<const std::byte> bytes) {
            auto& node = nodes[i];
            if (g == i) {  // our own: every receiver has it
              node.r->release(g, seq);
              return;
            }
            const auto want = content(groups[g][0], seq);
            if (!std::equal(bytes.begin(), bytes.end(), want.begin(), want.end()))
              node.problems.push_back("message " + std::to_string(seq) + " of group " +
                                      std::to_string(g) + " differs");
            node.got[g].push_back(seq);
            node.r->release(g, seq);
            ++node.taken;
          };
          cb.failed = [&, i](NodeId peer, const std::string& why) {
            nodes[i].problems.push_back("failed " + std::to_string(peer) + ": " + why);
          };
          nodes[i].r = std::make_unique<rdmc::Rdmc>(*made[i].transport, 1, groups, settings, cb);
        }
        REQUIRE(connect_all(made, members) == 3);
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        std::atomic<bool> stop{false};
        auto complete = [&](std::size_t i) {
          const std::size_t from = i < groups.size() ? groups.size() - 1 : groups.size();
          return nodes[i].taken.load() == from * std::size(kSizes);
        };
        std::vector<std::thread> loops;
        for (std::size_t i = 0; i < ids.size(); ++i) {
          loops.emplace_back([&, i] {
            auto& node = nodes[i];
            auto& t = *made[i].transport;
            node.r->start();
            std::vector<spindle::transport::Event> events;
            while (!stop && std::chrono::steady_clock::now() < deadline) {
              events.clear();
              t.poll(events);
              for (const auto& e : events)
                node.r->on_event(e);
              bool did = !events.empty();
              if (i < groups.size() && node.next < std::size(kSizes) &&
                  node.r->send(static_cast<rdmc::GroupId>(i), content(ids[i], node.next))) {
                ++node.next;
                did = true;
              }
              did = node.r->poll() || did;
              if (!did) std::this_thread::sleep_for(20us);
            }
          });
        }
        while (std::chrono::steady_clock::now() < deadline &&
               !(complete(0) && complete(1) && complete(2)))
          std::this_thread::sleep_for(5ms);
        // Senders finish their last relays before the transports go.
        std::this_thread::sleep_for(50ms);
        stop = true;
        for (auto& th : loops)
          th.join();
        for (auto& m : made)
          m.transport->disconnect();
        for (std::size_t i = 0; i < ids.size(); ++i) {
          INFO("node " << ids[i]);
          for (const auto& p : nodes[i].problems)
            UNSCOPED_INFO(p);
          CHECK(nodes[i].problems.empty());
          for (rdmc::GroupId g = 0; g < groups.size(); ++g) {
            if (g == i) continue;
            std::vector<std::size_t> in_order(std::size(kSizes));
            for (std::size_t k = 0; k < in_order.size(); ++k)
              in_order[k] = k;
            CHECK(nodes[i].got[g] == in_order);
          }
          // Over shared memory every receiver reads each message in its sender's buffer (no
          // block moves); without that, each block lands straight in its message (the ring's
          // record names it: Transport::place_blocks); tcp matches blocks to staging receives.
          const auto& st = nodes[i].r->stats();
          CHECK(st.messages_delivered == (i < groups.size() ? 1 : 2) * std::size(kSizes));
          if (kind == "tcp") {
            CHECK(st.blocks_received > 0);
            CHECK(st.blocks_placed == 0);
            CHECK(st.messages_in_place == 0);
          } else if (in_place) {
            CHECK(st.blocks_received == 0);
            CHECK(st.blocks_sent == 0);
            CHECK(st.messages_in_place == st.messages_delivered);
          } else {
            CHECK(st.blocks_received > 0);
            CHECK(st.blocks_placed == st.blocks_received);
            CHECK(st.messages_in_place == 0);
          }
        }
      }
    }
  }
}

namespace {

// Nodes over shared memory, each with its Rdmc, driven in turn by the test's own thread.
struct ShmNodes {
  std::vector<tst::Made> made;
  std::vector<std::unique_ptr<rdmc::Rdmc>> r;
  std::vector<std::string> failures;

  ShmNodes(const std::vector<NodeId>& ids, const std::vector<std::vector<NodeId>>& groups,
           const rdmc::Settings& settings, std::vector<rdmc::Callbacks> cbs) {
    const std::string ns = "rdmcp" + std::to_string(::getpid());
    std::vector<spindle::transport::NodeAddress> members;
    for (auto id : ids) {
      made.push_back(tst::make_transport("shm", id, ns));
      members.push_back({id, "127.0.0.1", 0});
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      cbs[i].failed = [this, i](NodeId peer, const std::string& why) {
        failures.push_back(std::to_string(i) + " suspects " + std::to_string(peer) + ": " + why);
      };
      r.push_back(std::make_unique<rdmc::Rdmc>(*made[i].transport, 1, groups, settings, cbs[i]));
    }
    REQUIRE(connect_all(made, members) == static_cast<int>(ids.size()));
    for (auto& x : r)
      x->start();
  }
  ~ShmNodes() {
    for (auto& m : made)
      m.transport->disconnect();
  }
  // Polls every node (and calls `step` before each round) until `done` or `within`.
  template <class Step, class Done>
  bool run(Step step, Done done, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    std::vector<spindle::transport::Event> events;
    while (std::chrono::steady_clock::now() < deadline) {
      step();
      for (std::size_t i = 0; i < r.size(); ++i) {
        events.clear();
        made[i].transport->poll(events);
        for (const auto& e : events)
          r[i]->on_event(e);
        (void)r[i]->poll();
      }
      if (done()) return true;
      std::this_thread::sleep_for(20us);
    }
    return false;
  }
};

std::vector<std::byte> block_of(std::uint64_t seq) {
  std::vector<std::byte> out(64 * 1024);
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = static_cast<std::byte>(seq * 31 + k * 7);
  return out;
}

// 64 KiB blocks and room for 4 messages of one block each.
rdmc::Settings room_for_four() {
  rdmc::Settings settings;
  settings.block_size = 64 * 1024;
  settings.group_bytes = 4 * 64 * 1024;
  return settings;
}

bool have_shm() {
  const auto kinds = tst::available_transports();
  return std::find(kinds.begin(), kinds.end(), "shm") != kinds.end();
}

}  // namespace

// A receiver on the sender's host reads the message in the sender's buffer, and the sender
// keeps that buffer until the receiver is done with it: with room for 4 messages and the
// first one held, the sender starts exactly 4 (a sender that freed its buffer once it had
// released its own copy, as it does where blocks move, starts all 12, over the held one).
TEST_CASE("transfers in place over shm: a receiver reads the sender's buffer until it releases it",
          "[transfer_threads]") {
  if (!have_shm()) {
    WARN("skipped: the shm transport is not built here");
    return;
  }
  const rdmc::Settings settings = room_for_four();
  std::vector<std::pair<std::uint64_t, std::span<const std::byte>>> got;
  std::vector<rdmc::Callbacks> cbs(2);
  ShmNodes* nodes = nullptr;
  // The sender has no delivered callback: its own copies are released at once.
  cbs[1].delivered = [&](rdmc::GroupId g, std::uint64_t seq, std::span<const std::byte> bytes) {
    got.emplace_back(seq, bytes);
    if (seq != 0) nodes->r[1]->release(g, seq);  // message 0 is held
  };
  ShmNodes n({1, 2}, {{1, 2}}, settings, cbs);
  nodes = &n;
  std::uint64_t sent = 0;
  const auto send = [&] {
    if (sent < 12 && n.r[0]->send(0, block_of(sent))) ++sent;
  };
  (void)n.run(
      send, [] { return false; }, 300ms);
  INFO(n.failures.size() << " failures");
  REQUIRE(n.failures.empty());
  CHECK(sent == 4);
  REQUIRE(got.size() == 4);
  // The bytes lie in the receiver's mapping of the sender's row, not in its pool.
  const auto sends = n.made[1].transport->local_region(rdmc::Rdmc::sends_region(1));
  REQUIRE(sends);
  for (const auto& [seq, bytes] : got) {
    CHECK(bytes.data() >= sends->bytes.data());
    CHECK(bytes.data() + bytes.size() <= sends->bytes.data() + sends->bytes.size());
  }
  const auto held = block_of(0);
  CHECK(std::equal(got[0].second.begin(), got[0].second.end(), held.begin(), held.end()));
  CHECK(n.r[1]->stats().messages_in_place == 4);
  CHECK(n.r[0]->stats().blocks_sent == 0);
  // Released: the sender goes on, every message intact where the receiver read it.
  n.r[1]->release(0, 0);
  std::size_t checked = 1;
  bool intact = true;
  REQUIRE(n.run(
      [&] {
        send();
        for (; checked < got.size(); ++checked) {
          const auto want = block_of(got[checked].first);
          intact = intact && std::equal(got[checked].second.begin(), got[checked].second.end(),
                                        want.begin(), want.end());
        }
      },
      [&] { return got.size() == 12; }, 5000ms));
  CHECK(intact);
  CHECK(n.failures.empty());
}

// A header in place names bytes of the sender's own space for the group: any other offset (a
// neighbour's row, past its space) is a suspicion of the sender, and the other groups go on.
TEST_CASE(
    "transfers in place over shm: a header naming bytes outside its sender's space is a "
    "suspicion of the sender",
    "[transfer_threads]") {
  if (!have_shm()) {
    WARN("skipped: the shm transport is not built here");
    return;
  }
  const rdmc::Settings settings = room_for_four();
  std::vector<std::uint64_t> got;
  std::vector<rdmc::Callbacks> cbs(3);
  ShmNodes* nodes = nullptr;
  // The sender has no delivered callback: its own copies are released at once.
  cbs[1].delivered = [&](rdmc::GroupId g, std::uint64_t seq, std::span<const std::byte>) {
    if (g == 0) got.push_back(seq);
    nodes->r[1]->release(g, seq);
  };
  // Node 1 sends to node 2 (group 0); node 3 is group 1's sender, and forges its header.
  ShmNodes n({1, 2, 3}, {{1, 2}, {3, 2}}, settings, cbs);
  nodes = &n;
  auto& rogue = *n.made[2].transport;
  const auto control = rdmc::Rdmc::control_region(1);
  const auto local = rogue.local_region(control);
  REQUIRE(local);
  // Message 0 of group 1 at offset 0 of the sends region: node 1's row.
  const std::size_t h = n.r[2]->header_offset(1);
  const std::uint64_t header[3] = {1000, std::uint64_t{1} << 63, 1};
  std::memcpy(local->bytes.data() + h, header, sizeof header);
  REQUIRE(rogue.write(2, control, h, control, h, sizeof header) == spindle::transport::Status::ok);
  REQUIRE(n.run([] {}, [&] { return !n.failures.empty(); }, 2000ms));
  REQUIRE(n.failures.size() == 1);
  CHECK(n.failures[0].rfind("1 suspects 3: rdmc: node 3 announced message 0", 0) == 0);
  CHECK_THAT(n.failures[0], Catch::Contains("outside its buffer space"));
  // Node 1's stream goes on.
  bool sent = false;
  CHECK(n.run([&] { sent = sent || n.r[0]->send(0, block_of(7)); }, [&] { return got.size() == 1; },
              2000ms));
}

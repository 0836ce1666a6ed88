// RDMC transfers (rdmc/rdmc.hpp) over the real transports — tcp on loopback and shared
// memory — with three nodes in threads of this process: two of them each send a stream of
// messages from 1 byte to 4 MiB (block size 64 KiB, so from one block to 64) to the other
// two, by the binomial pipeline and the chain. Every receiver must take every message of
// both senders, in order, byte for byte (a checksum of each is compared with the sender's),
// with nothing reported failed. Every wait is bounded. Over shared memory, every block lands
// in its message where it comes (no staging copy).
#include <atomic>
#include <chrono>
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

}  // namespace

TEST_CASE("transfers over tcp and shm: two senders, 1 B to 4 MiB, every byte in order",
          "[transfer_threads]") {
  for (const auto& kind : tst::available_transports()) {
    for (auto algorithm : {rdmc::Algorithm::binomial_pipeline, rdmc::Algorithm::chain}) {
      INFO("transport " << kind << ", " << rdmc::to_string(algorithm));
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
      {
        std::vector<std::thread> connecting;
        std::atomic<int> ok{0};
        for (auto& m : made)
          connecting.emplace_back([&, t = m.transport.get()] {
            if (t->connect(members, 1, 10s) == spindle::transport::Status::ok) ++ok;
          });
        for (auto& th : connecting)
          th.join();
        REQUIRE(ok == 3);
      }
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
        // Over shared memory each block lands straight in its message (the ring's record
        // names it: Transport::place_blocks); tcp matches blocks to staging receives.
        const auto& st = nodes[i].r->stats();
        CHECK(st.blocks_received > 0);
        if (kind == "tcp") {
          CHECK(st.blocks_placed == 0);
        } else {
          CHECK(st.blocks_placed == st.blocks_received);
        }
      }
    }
  }
}

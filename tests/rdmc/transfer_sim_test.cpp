// RDMC transfers (rdmc/rdmc.hpp) in the deterministic simulator, over many seeds: 2-6
// nodes, each the sender of a group of a random subset of the others, every algorithm,
// random block sizes, pools small enough that receivers wait for room (readers release
// messages late), random latencies and slow nodes. After each seed every receiver
// delivered every message of its groups once, in order, byte for byte. With a node
// crashing mid-transfer, every survivor reports it (a suspicion for the membership layer),
// nothing delivered is corrupt, each group's deliveries are a prefix of its messages, and
// the run ends: no transfer hangs. A failing seed prints the command that replays it.
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include "transport/sim.hpp"

#include "rdmc/rdmc.hpp"

namespace sim = spindle::transport::sim;
namespace rdmc = spindle::rdmc;
using namespace std::chrono_literals;

namespace {

// Message `seq` of the sender of group g: a length and bytes that follow from them.
std::vector<std::byte> content(std::uint64_t seed, std::uint32_t g, std::uint64_t seq,
                               std::size_t size) {
  std::vector<std::byte> out(size);
  sim::Rng rng(seed * 1'000'003 + g * 7919 + seq);
  for (auto& b : out)
    b = static_cast<std::byte>(rng.next());
  return out;
}

struct Outcome {
  std::string problem;
  std::uint64_t delivered = 0;
  std::uint64_t pool_waits = 0;
};

Outcome run_seed(std::uint64_t seed, bool crash) {
  Outcome out;
  sim::Rng rng(seed);
  sim::Config config;
  config.seed = seed;
  config.max_latency = std::chrono::microseconds(rng.uniform(2, 100));
  config.spike_per_million = static_cast<std::uint32_t>(rng.uniform(0, 100'000));
  const auto n = static_cast<std::uint32_t>(rng.uniform(crash ? 3 : 2, 6));
  sim::Network net(config);
  for (std::uint32_t i = 0; i < n; ++i)
    (void)net.add_node(i);
  if (rng.chance(300'000))
    net.slow(static_cast<std::uint32_t>(rng.uniform(0, n - 1)),
             std::chrono::microseconds(rng.uniform(1, 50)));
  // Group g: node g sends to a random non-empty subset of the others (random order).
  std::vector<std::vector<spindle::transport::NodeId>> groups(n);
  for (std::uint32_t g = 0; g < n; ++g) {
    groups[g].push_back(g);
    for (std::uint32_t o = 0; o < n; ++o)
      if (o != g && (rng.chance(700'000) || (o == (g + 1) % n))) groups[g].push_back(o);
    for (std::size_t i = groups[g].size() - 1; i > 1; --i)
      std::swap(groups[g][i], groups[g][1 + rng.uniform(0, i - 1)]);
  }
  rdmc::Settings settings;
  settings.algorithm = static_cast<rdmc::Algorithm>(rng.uniform(0, 3));
  settings.block_size = static_cast<std::uint32_t>(64 * rng.uniform(4, 64));
  settings.staging_per_peer = static_cast<std::uint32_t>(rng.uniform(1, 3));
  settings.group_bytes = 20'000 + 8 * 1024 * rng.uniform(0, 4);
  // What each sender sends.
  std::vector<std::vector<std::size_t>> sizes(n);
  for (auto& s : sizes) {
    const auto count = rng.uniform(1, 6);
    for (std::uint64_t k = 0; k < count; ++k)
      s.push_back(static_cast<std::size_t>(rng.uniform(1, 20'000)));
  }
  struct Node {
    std::unique_ptr<rdmc::Rdmc> r;
    std::size_t next = 0;                                         // its next message to send
    std::map<std::uint32_t, std::vector<std::uint64_t>> got;      // group -> seqs delivered
    std::vector<std::pair<std::uint32_t, std::uint64_t>> unread;  // delivered, not released
    std::set<spindle::transport::NodeId> failed;
    std::vector<spindle::transport::Event> events;
  };
  std::vector<Node> nodes(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    rdmc::Callbacks cb;
    cb.delivered = [&, i](rdmc::GroupId g, std::uint64_t seq, std::span<const std::byte> bytes) {
      auto& node = nodes[i];
      if (g == i) {  // the sender's own: every receiver has it
        node.unread.emplace_back(g, seq);
        return;
      }
      const auto& want = sizes[g];
      if (seq >= want.size() || bytes.size() != want[seq] ||
          !std::equal(bytes.begin(), bytes.end(), content(seed, g, seq, want[seq]).begin()))
        out.problem = "node " + std::to_string(i) + " delivered a wrong message " +
                      std::to_string(seq) + " of group " + std::to_string(g);
      node.got[g].push_back(seq);
      node.unread.emplace_back(g, seq);
      ++out.delivered;
    };
    cb.failed = [&, i](spindle::transport::NodeId peer, const std::string&) {
      nodes[i].failed.insert(peer);
    };
    nodes[i].r = std::make_unique<rdmc::Rdmc>(net.node(i), 1, groups, settings, cb);
  }
  const auto view = net.addresses();
  for (std::uint32_t i = 0; i < n; ++i)
    if (net.node(i).connect(view, 1, 10ms) != spindle::transport::Status::ok)
      return Outcome{"node " + std::to_string(i) + " did not connect"};
  for (auto& node : nodes)
    node.r->start();
  for (std::uint32_t i = 0; i < n; ++i) {
    net.set_actor(i, [&, i] {
      auto& node = nodes[i];
      bool did = false;
      node.events.clear();
      net.node(i).poll(node.events);
      for (const auto& e : node.events)
        node.r->on_event(e);
      did = !node.events.empty();
      // Readers release late: one message per step, so the pools fill.
      if (!node.unread.empty()) {
        node.r->release(node.unread.front().first, node.unread.front().second);
        node.unread.erase(node.unread.begin());
        did = true;
      }
      if (node.next < sizes[i].size() &&
          node.r->send(i, content(seed, i, node.next, sizes[i][node.next]))) {
        ++node.next;
        did = true;
      }
      return node.r->poll() || did;
    });
    net.node(i).notify();  // its first step: the first send
  }
  const std::uint32_t victim = crash ? static_cast<std::uint32_t>(rng.uniform(0, n - 1)) : n;
  auto complete = [&] {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i == victim) continue;
      for (std::uint32_t g = 0; g < n; ++g) {
        if (g == i || g == victim ||
            std::find(groups[g].begin(), groups[g].end(), i) == groups[g].end())
          continue;
        if (nodes[i].got[g].size() != sizes[g].size()) return false;
      }
    }
    return true;
  };
  if (crash) {
    const auto at = sim::Duration(static_cast<std::int64_t>(rng.uniform(1'000, 200'000)));
    (void)net.run_until([&] { return net.now() >= at || complete(); }, at);
    net.crash(victim);
  }
  const bool done = net.run_until(complete, net.now() + 10s);
  // Anything still moving lands (and a crash is suspected) before the checks.
  (void)net.run_until([] { return false; }, net.now() + 50ms);
  if (!out.problem.empty()) return out;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i == victim) continue;
    for (const auto& [g, seqs] : nodes[i].got) {
      for (std::size_t k = 0; k < seqs.size(); ++k)
        if (seqs[k] != k)
          return Outcome{"node " + std::to_string(i) + " delivered message " +
                         std::to_string(seqs[k]) + " of group " + std::to_string(g) + " where " +
                         std::to_string(k) + " was due"};
    }
    if (crash && !nodes[i].failed.contains(victim))
      return Outcome{"node " + std::to_string(i) + " never reported crashed node " +
                     std::to_string(victim)};
    if (!crash && !nodes[i].failed.empty())
      return Outcome{"node " + std::to_string(i) + " reported a failure with nobody crashed"};
  }
  if (!crash && !done) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto& st = nodes[i].r->stats();
      UNSCOPED_INFO("node " << i << " next " << nodes[i].next << " sent " << st.blocks_sent
                            << " recv " << st.blocks_received << " waits " << st.waits_for_pool);
    }
    std::string why = "not every message arrived (" +
                      std::string(rdmc::to_string(settings.algorithm)) + ", block " +
                      std::to_string(settings.block_size) + ", buffers " +
                      std::to_string(settings.group_bytes) + "):";
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t g = 0; g < n; ++g)
        if (g != i && std::find(groups[g].begin(), groups[g].end(), i) != groups[g].end())
          why += " node " + std::to_string(i) + " group " + std::to_string(g) + ": " +
                 std::to_string(nodes[i].got[g].size()) + "/" + std::to_string(sizes[g].size());
    return Outcome{why};
  }
  for (const auto& node : nodes)
    out.pool_waits += node.r->stats().waits_for_pool;
  return out;
}

}  // namespace

TEST_CASE("transfers: every receiver delivers every message, in order, byte for byte",
          "[transfer]") {
  auto seeds = sim::Seeds::from_env(500, 100, std::chrono::seconds(20));
  std::uint64_t delivered = 0, waits = 0;
  for (const std::uint64_t seed : seeds) {
    const auto o = run_seed(seed, false);
    if (!o.problem.empty())
      FAIL("seed " << seed << ": " << o.problem
                   << "\nreplay: " << sim::replay_command(seed, "[transfer]"));
    delivered += o.delivered;
    waits += o.pool_waits;
  }
  CHECK(delivered > 0);
  if (seeds.explored() >= 100) CHECK(waits > 0);  // the pools did run full
}

TEST_CASE("transfers: a node that crashes mid-transfer is reported, and nothing hangs",
          "[transfer]") {
  auto seeds = sim::Seeds::from_env(500, 100, std::chrono::seconds(20));
  for (const std::uint64_t seed : seeds) {
    const auto o = run_seed(seed, true);
    if (!o.problem.empty())
      FAIL("seed " << seed << ": " << o.problem
                   << "\nreplay: " << sim::replay_command(seed, "[transfer]"));
  }
}

TEST_CASE(
    "transfers: a block no plan expects, or a header too large or malformed, is a suspicion of its "
    "sender",
    "[transfer]") {
  // Node 0 sends to node 1 (group 0); node 2 is in group 1 with node 1, so node 1 posts it
  // staging receives, but node 2 runs no RDMC: it sends what the test forges.
  for (int forged : {0, 1, 2, 3}) {
    INFO((forged == 0   ? "a forged block"
          : forged == 1 ? "an oversized header"
          : forged == 2 ? "a header in place where the rows are copies"
                        : "a header with a place but not in place"));
    sim::Network net(sim::Config{});
    for (spindle::transport::NodeId i = 0; i < 3; ++i)
      (void)net.add_node(i);
    const std::vector<std::vector<spindle::transport::NodeId>> groups{{0, 1}, {2, 1}};
    rdmc::Settings settings;
    settings.block_size = 256;
    settings.group_bytes = 4096;
    std::vector<std::string> failures;
    std::vector<std::uint64_t> got;
    rdmc::Callbacks cb1;
    cb1.delivered = [&](rdmc::GroupId g, std::uint64_t seq, std::span<const std::byte>) {
      if (g == 0) got.push_back(seq);
    };
    cb1.failed = [&](spindle::transport::NodeId peer, const std::string& why) {
      failures.push_back(std::to_string(peer) + ": " + why);
    };
    rdmc::Rdmc sender(net.node(0), 1, groups, settings, {});
    rdmc::Rdmc receiver(net.node(1), 1, groups, settings, cb1);
    // The rogue's own regions, laid out as an honest node's would be.
    rdmc::Rdmc rogue_layout(net.node(2), 1, groups, settings, {});
    const auto view = net.addresses();
    for (spindle::transport::NodeId i = 0; i < 3; ++i)
      REQUIRE(net.node(i).connect(view, 1, 10ms) == spindle::transport::Status::ok);
    sender.start();
    receiver.start();
    auto drive = [&](rdmc::Rdmc& r, spindle::transport::NodeId id) {
      return [&r, &net, id] {
        std::vector<spindle::transport::Event> events;
        net.node(id).poll(events);
        for (const auto& e : events)
          r.on_event(e);
        return r.poll() || !events.empty();
      };
    };
    net.set_actor(0, drive(sender, 0));
    net.set_actor(1, drive(receiver, 1));
    net.node(0).notify();
    net.node(1).notify();
    const std::vector<std::byte> message(1000, std::byte{7});
    REQUIRE(sender.send(0, message));
    REQUIRE(net.run_until([&] { return got.size() == 1; }, net.now() + 1s));
    const auto pool = rdmc::Rdmc::pool_region(1);
    const auto control = rdmc::Rdmc::control_region(1);
    auto& rogue = net.node(2);
    if (forged == 0) {
      // Group 1, message 0 (which node 1 never saw announced), block 3.
      REQUIRE(rogue.send_block(1, pool, 0, 256, (1u << 20) | 3u) == spindle::transport::Status::ok);
    } else {
      // Group 1's header slot 0 in node 1's copy: {size, where, seq + 1}. 1: a message of 1
      // GiB; 2: a message in place (the simulator keeps copies of rows: node 1 reads none of
      // node 2's in place); 3: a place without the in-place bit.
      const auto local = rogue.local_region(control);
      REQUIRE(local);
      const std::size_t h = receiver.header_offset(1);
      const std::uint64_t header[3] = {forged == 1 ? std::uint64_t{1} << 30 : 1000,
                                       forged == 2   ? std::uint64_t{1} << 63
                                       : forged == 3 ? 4096
                                                     : 0,
                                       1};
      std::memcpy(local->bytes.data() + h, header, sizeof header);
      REQUIRE(rogue.write(1, control, h, control, h, sizeof header) ==
              spindle::transport::Status::ok);
    }
    (void)net.run_until([&] { return !failures.empty(); }, net.now() + 1s);
    REQUIRE(failures.size() == 1);
    CHECK(failures[0].rfind("2: rdmc: node 2 ", 0) == 0);
    if (forged == 2)
      CHECK_THAT(failures[0], Catch::Contains("in place but its buffers are not mapped here"));
    if (forged == 3) CHECK_THAT(failures[0], Catch::Contains("with no place"));
    // Node 0's stream goes on.
    REQUIRE(sender.send(0, message));
    CHECK(net.run_until([&] { return got.size() == 2; }, net.now() + 1s));
  }
}

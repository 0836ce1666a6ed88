// The in-memory deterministic transport: contract properties over many seeds, determinism,
// faults. Failing seeds print the command that replays them.
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/sim.hpp>

namespace st = spindle::transport;
namespace sim = spindle::transport::sim;
using namespace std::chrono_literals;

namespace {

constexpr st::RegionId kTable = 1;
constexpr st::RegionId kStaging = 2;
constexpr std::size_t kSlot = 512;  // data bytes per sender, then an 8-byte guard

std::uint64_t load_acquire(std::byte* p) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .load(std::memory_order_acquire);
}

// Every node writes version k into its slot at every peer (data, then guard = k) and checks
// every guard it sees against the data under it. Optionally crashes one node midway.
struct OrderRun {
  explicit OrderRun(std::uint64_t s) : seed(s) {}
  std::uint64_t seed;
  std::uint32_t nodes = 3;
  std::uint64_t updates = 150;
  bool crash_one = false;
  std::string failure;
  std::uint64_t hash = 0;
  std::uint64_t checks = 0;

  void run() {
    sim::Config cfg;
    cfg.seed = seed;
    sim::Network net(cfg);
    const std::size_t stride = kSlot + 8;
    struct Node {
      std::uint64_t next = 1;
      std::vector<std::uint64_t> seen;
      std::vector<bool> suspected;
      bool done = false;
    };
    std::vector<Node> state(nodes);
    for (st::NodeId i = 0; i < nodes; ++i) {
      auto& t = net.add_node(i);
      (void)t.create_region(kTable, stride * nodes);
      (void)t.create_region(kStaging, stride);
      state[i].seen.assign(nodes, 0);
      state[i].suspected.assign(nodes, false);
    }
    const auto members = net.addresses();
    for (st::NodeId i = 0; i < nodes; ++i) {
      if (net.node(i).connect(members, 1, 10ms) != st::Status::ok) failure = "connect failed";
    }
    const st::NodeId victim = nodes - 1;
    const std::uint64_t crash_at = net.rng().uniform(2, updates);
    for (st::NodeId i = 0; i < nodes; ++i) {
      net.set_actor(i, [&, i] {
        auto& t = net.node(i);
        auto& me = state[i];
        bool worked = false;
        std::vector<st::Event> events;
        if (t.poll(events) > 0) worked = true;
        for (auto& e : events) {
          if (auto* s = std::get_if<st::Suspicion>(&e)) me.suspected[s->peer] = true;
        }
        // Reader side: every guard observed must be backed by data at least that new.
        auto table = t.local_region(kTable)->bytes;
        for (st::NodeId s = 0; s < nodes; ++s) {
          if (s == i) continue;
          std::byte* slot = table.data() + s * stride;
          const std::uint64_t g = load_acquire(slot + kSlot);
          if (g < me.seen[s]) failure = "guard went backwards";
          if (g != me.seen[s]) {
            worked = true;
            me.seen[s] = g;
            for (std::size_t w = 0; w < kSlot; w += 8) {
              std::uint64_t v;
              std::memcpy(&v, slot + w, 8);
              if (v < g) {
                failure = "node " + std::to_string(i) + " saw guard " + std::to_string(g) +
                          " from " + std::to_string(s) + " over data " + std::to_string(v);
              }
              ++checks;
            }
          }
        }
        // Writer side: one version per step, to every unsuspected peer.
        if (me.next <= updates) {
          auto staging = t.local_region(kStaging)->bytes;
          for (std::size_t w = 0; w < kSlot; w += 8)
            std::memcpy(staging.data() + w, &me.next, 8);
          std::memcpy(staging.data() + kSlot, &me.next, 8);
          bool all = true;
          for (st::NodeId p = 0; p < nodes; ++p) {
            if (p == i || me.suspected[p]) continue;
            // Data, then its guard: two writes.
            auto s1 = t.write(p, kStaging, 0, kTable, i * stride, kSlot);
            if (s1 == st::Status::retry) {
              all = false;
              continue;
            }
            auto s2 = t.write(p, kStaging, kSlot, kTable, i * stride + kSlot, 8);
            if (s1 == st::Status::invalid || s2 == st::Status::invalid) failure = "invalid write";
          }
          if (all) ++me.next;
          worked = true;
          if (crash_one && i == 0 && me.next == crash_at) net.crash(victim);
        }
        return worked;
      });
    }
    auto finished = [&] {
      for (st::NodeId i = 0; i < nodes; ++i) {
        if (crash_one && i == victim) continue;
        for (st::NodeId s = 0; s < nodes; ++s) {
          if (s == i) continue;
          if (crash_one && s == victim) {
            if (!state[i].suspected[s]) return false;
          } else if (state[i].seen[s] != updates) {
            return false;
          }
        }
      }
      return true;
    };
    if (!net.run_until(finished, 10s) && failure.empty()) failure = "did not finish";
    hash = net.trace_hash();
  }
};

}  // namespace

TEST_CASE("sim: data written before a guard is never seen after it, over many seeds",
          "[sim][order]") {
  const auto seeds = sim::Seeds::from_env(1000);
  std::uint64_t checks = 0;
  for (std::uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    OrderRun r(seed);
    r.crash_one = (seed % 3 == 0);
    r.run();
    checks += r.checks;
    INFO("replay: " << sim::replay_command(seed, Catch::getResultCapture().getCurrentTestName()));
    INFO(r.failure);
    REQUIRE(r.failure.empty());
  }
  CHECK(checks > 0);
}

TEST_CASE("sim: the same seed gives the same run bit for bit", "[sim][determinism]") {
  OrderRun a(42), b(42), c(43);
  a.crash_one = b.crash_one = c.crash_one = true;
  a.run();
  b.run();
  c.run();
  CHECK(a.hash == b.hash);
  CHECK(a.checks == b.checks);
  CHECK(a.hash != c.hash);
}

TEST_CASE("sim: blocks arrive in order with their immediates under back-pressure",
          "[sim][blocks]") {
  const auto seeds = sim::Seeds::from_env(200);
  for (std::uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    sim::Config cfg;
    cfg.seed = seed;
    cfg.channel_bytes = 4096;  // small: the sender sees retry
    sim::Network net(cfg);
    auto& a = net.add_node(1);
    auto& b = net.add_node(2);
    constexpr std::uint32_t kBlocks = 100, kMax = 1500;
    (void)a.create_region(1, kMax);
    (void)b.create_region(1, 4 * kMax);
    REQUIRE(a.connect(net.addresses(), 1, 10ms) == st::Status::ok);
    REQUIRE(b.connect(net.addresses(), 1, 10ms) == st::Status::ok);
    std::uint32_t sent = 0, received = 0, posted = 0, retries = 0, sent_done = 0;
    std::string failure;
    auto size_of = [](std::uint32_t i) { return 1 + (i * 37) % kMax; };
    net.set_actor(1, [&] {
      std::vector<st::Event> ev;
      a.poll(ev);
      for (auto& e : ev) {
        if (auto* s = std::get_if<st::BlockSent>(&e)) {
          if (s->immediate != sent_done++) failure = "BlockSent out of order";
        }
      }
      if (sent >= kBlocks) return !ev.empty();
      auto src = a.local_region(1)->bytes;
      for (std::uint32_t k = 0; k < size_of(sent); ++k)
        src[k] = std::byte(sent + k);
      auto s = a.send_block(2, 1, 0, size_of(sent), sent);
      if (s == st::Status::ok) ++sent;
      if (s == st::Status::retry) ++retries;
      return true;
    });
    net.set_actor(2, [&] {
      std::vector<st::Event> ev;
      b.poll(ev);
      for (auto& e : ev) {
        auto* r = std::get_if<st::BlockReceived>(&e);
        if (r == nullptr) continue;
        if (r->immediate != received) failure = "immediate out of order";
        if (r->length != size_of(received)) failure = "wrong length";
        auto dst = b.local_region(1)->bytes.subspan(r->offset, r->length);
        for (std::uint32_t k = 0; k < r->length; ++k) {
          if (dst[k] != std::byte(received + k)) failure = "wrong content";
        }
        ++received;
      }
      // A slow receiver: at most two receives outstanding, one new one now and then.
      if (posted < received + 2 && posted < kBlocks && net.rng().chance(300'000)) {
        REQUIRE(b.post_receive(1, 1, (posted % 4) * kMax, kMax) == st::Status::ok);
        ++posted;
        return true;
      }
      return !ev.empty() || posted < kBlocks;
    });
    const bool ok = net.run_until([&] { return received == kBlocks && sent_done == kBlocks; }, 5s);
    INFO("replay: " << sim::replay_command(seed, Catch::getResultCapture().getCurrentTestName()));
    INFO(failure);
    REQUIRE(failure.empty());
    REQUIRE(ok);
  }
}

TEST_CASE("sim: crash and cut become suspicions within the timeout", "[sim][faults]") {
  sim::Config cfg;
  cfg.seed = 7;
  cfg.suspicion_timeout = 2ms;
  sim::Network net(cfg);
  for (st::NodeId i = 0; i < 4; ++i)
    (void)net.add_node(i).create_region(1, 64);
  for (st::NodeId i = 0; i < 4; ++i) {
    REQUIRE(net.node(i).connect(net.addresses(), 1, 10ms) == st::Status::ok);
  }
  net.crash(3);
  net.cut(0, 1);
  const auto start = net.now();
  std::vector<std::vector<st::Suspicion>> seen(4);
  auto collect = [&] {
    for (st::NodeId i = 0; i < 3; ++i) {
      std::vector<st::Event> ev;
      net.node(i).poll(ev);
      for (auto& e : ev)
        seen[i].push_back(std::get<st::Suspicion>(e));
    }
    return seen[0].size() == 2 && seen[1].size() == 2 && seen[2].size() == 1;
  };
  REQUIRE(net.run_until(collect, 1s));
  CHECK(net.now() - start <= 2ms);
  CHECK(seen[2][0].peer == 3);
  CHECK(seen[2][0].reason == st::SuspicionReason::crashed);
  CHECK(net.node(3).write(0, 1, 0, 1, 0, 8) == st::Status::closed);
  CHECK(net.node(0).write(1, 1, 0, 1, 0, 8) == st::Status::peer_suspected);
  CHECK(net.node(0).write(2, 1, 0, 1, 0, 8) == st::Status::ok);
  CHECK(net.node(0).write(2, 1, 60, 1, 0, 8) == st::Status::invalid);
  CHECK(net.node(0).write(2, 1, 0, 1, 57, 8) == st::Status::invalid);
  CHECK(net.node(0).write(2, 1, 0, 9, 0, 8) == st::Status::invalid);
}

TEST_CASE("sim: writes of 1 byte to 4 MB land whole at both region edges, slow node included",
          "[sim][sizes]") {
  const auto seeds = sim::Seeds::from_env(10);
  for (std::uint64_t seed = seeds.first; seed < seeds.first + seeds.count; ++seed) {
    sim::Config cfg;
    cfg.seed = seed;
    cfg.channel_bytes = 8u << 20;
    sim::Network net(cfg);
    constexpr std::size_t kBig = 4u << 20;
    for (st::NodeId i = 0; i < 2; ++i) {
      (void)net.add_node(i).create_region(1, kBig);
      (void)net.node(i).create_region(2, 64);
    }
    for (st::NodeId i = 0; i < 2; ++i) {
      REQUIRE(net.node(i).connect(net.addresses(), 1, 10ms) == st::Status::ok);
    }
    net.slow(1, std::chrono::microseconds(net.rng().uniform(0, 200)));
    auto& a = net.node(0);
    auto& b = net.node(1);
    std::uint64_t step = 0;
    for (std::size_t size : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, kBig}) {
      for (std::size_t off : {std::size_t{0}, kBig - size}) {
        ++step;
        auto src = a.local_region(1)->bytes;
        for (std::size_t i = 0; i < size; ++i)
          src[off + i] = std::byte((step * 31 + i) & 0xff);
        REQUIRE(a.write(1, 1, off, 1, off, size) == st::Status::ok);
        std::memcpy(a.local_region(2)->bytes.data(), &step, 8);
        REQUIRE(a.write(1, 2, 0, 2, 0, 8) == st::Status::ok);
        auto guard = b.local_region(2)->bytes.data();
        REQUIRE(net.run_until([&] { return load_acquire(guard) == step; }, 10s));
        auto dst = b.local_region(1)->bytes;
        for (std::size_t i = 0; i < size; ++i) {
          if (dst[off + i] != std::byte((step * 31 + i) & 0xff)) {
            INFO("replay: " << sim::replay_command(seed,
                                                   Catch::getResultCapture().getCurrentTestName()));
            FAIL("byte " << i << " of a " << size << "-byte write at " << off << " is wrong");
          }
        }
      }
    }
    CHECK(a.write(1, 1, 0, 1, kBig - 3, 4) == st::Status::invalid);
  }
}

// SMC on the in-memory deterministic transport: random groups, subgroups, senders, windows,
// payloads and delays over many seeds, each run checked by the delivery-log checker; and
// the null-send properties (no stall, sender invariance, quiescence), ring wrap-around at
// every window size, overlapping subgroups and unordered mode. A failing seed prints the
// command that replays it. SPINDLE_SIM_SEEDS=<n> explores more (the `nightly` label).
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "sim_cluster.hpp"

namespace sim = spindle::transport::sim;
namespace sg = spindle::group;
using spindle::testing::SendPlan;
using spindle::testing::SimCluster;
using namespace std::chrono_literals;

namespace {

struct Scenario {
  sg::View group;
  std::vector<std::vector<std::uint64_t>> planned;  // [subgroup][sender rank] messages
  std::vector<std::vector<SendPlan>> plans;         // [subgroup][sender rank]
};

sg::View base_group(std::uint32_t n) {
  sg::View g;
  for (std::uint32_t i = 0; i < n; ++i)
    g.members.push_back(sg::Member{i * 3 + 1, "sim", 0});  // ids need not be ranks
  g.knobs.heartbeat_interval = 0ms;
  return g;
}

// A random scenario: 2-4 members, 1-3 subgroups with random (overlapping) memberships,
// all/half/one senders, windows 1..1000 (mostly small), payloads 1..slot size, some
// senders silent or slowed.
Scenario random_scenario(sim::Rng& rng) {
  const auto n = static_cast<std::uint32_t>(rng.uniform(2, 4));
  Scenario sc{base_group(n), {}, {}};
  const auto subgroups = rng.uniform(1, 3);
  for (std::uint64_t s = 0; s < subgroups; ++s) {
    sg::Subgroup sub;
    sub.name = "s" + std::to_string(s);
    for (std::uint32_t i = 0; i < n; ++i)
      if (rng.chance(700'000) || s == 0) sub.members.push_back(sc.group.members[i].id);
    if (sub.members.empty()) sub.members.push_back(sc.group.members[0].id);
    const auto pattern = rng.uniform(0, 2);  // all, half, one
    const std::size_t ns = pattern == 0   ? sub.members.size()
                           : pattern == 1 ? std::max<std::size_t>(1, sub.members.size() / 2)
                                          : 1;
    const auto start = static_cast<std::size_t>(rng.uniform(0, sub.members.size() - 1));
    for (std::size_t k = 0; k < ns; ++k)
      sub.senders.push_back(sub.members[(start + k) % sub.members.size()]);
    std::sort(sub.senders.begin(), sub.senders.end());
    const auto wpick = rng.uniform(0, 9);
    sub.window_size = static_cast<std::uint32_t>(wpick < 6   ? rng.uniform(1, 8)
                                                 : wpick < 9 ? rng.uniform(9, 100)
                                                             : rng.uniform(101, 1000));
    sub.max_payload = static_cast<std::uint32_t>(rng.chance(500'000) ? rng.uniform(1, 64)
                                                                     : rng.uniform(65, 2048));
    sub.ordering = rng.chance(200'000) ? sg::Ordering::unordered : sg::Ordering::atomic;
    std::vector<std::uint64_t> counts;
    std::vector<SendPlan> plans;
    for (std::size_t k = 0; k < sub.senders.size(); ++k) {
      SendPlan p;
      const auto kind = rng.uniform(0, 9);
      p.count = kind == 0 ? 0 : rng.uniform(1, 40);  // 10 % silent senders
      if (kind == 1) p.spacing = std::chrono::microseconds(rng.uniform(1, 100));  // slowed
      if (kind == 2) p.max_batch = 1;
      counts.push_back(p.count);
      plans.push_back(p);
    }
    sc.planned.push_back(counts);
    sc.plans.push_back(plans);
    sc.group.subgroups.push_back(sub);
  }
  return sc;
}

// One of `sub`'s members that does not send, picked in seven subgroups of ten (none where
// every member sends).
std::optional<sg::NodeId> pick_quiet(const sg::Subgroup& sub, sim::Rng& pick) {
  std::vector<sg::NodeId> quiet;
  for (auto id : sub.members)
    if (std::find(sub.senders.begin(), sub.senders.end(), id) == sub.senders.end())
      quiet.push_back(id);
  if (quiet.empty() || !pick.chance(700'000)) return std::nullopt;
  return quiet[static_cast<std::size_t>(pick.uniform(0, quiet.size() - 1))];
}

void apply_plans(SimCluster& c, const Scenario& sc) {
  for (std::uint32_t s = 0; s < sc.group.subgroups.size(); ++s) {
    const auto& sub = sc.group.subgroups[s];
    for (std::size_t k = 0; k < sub.senders.size(); ++k)
      c.node(*sc.group.rank_of(sub.senders[k])).plan(s, sc.plans[s][k]);
  }
}

// Rows in place (sim::Config::rows_in_place, as over shared memory): a receiver reads each
// sender's slots where the sender stores them, so a slot reused before every receiver has
// passed it, or read before it is whole, shows as a wrong checksum in the delivery logs.
bool g_rows_in_place = false;
struct RowsInPlace {
  RowsInPlace() { g_rows_in_place = true; }
  ~RowsInPlace() { g_rows_in_place = false; }
  RowsInPlace(const RowsInPlace&) = delete;
  RowsInPlace& operator=(const RowsInPlace&) = delete;
};

sim::Config config(std::uint64_t seed) {
  sim::Config cfg;
  cfg.seed = seed;
  cfg.rows_in_place = g_rows_in_place;
  return cfg;
}

struct Outcome {
  bool finished = false;
  std::vector<std::string> errors;
  std::uint64_t writes_at_done = 0;
  std::uint64_t writes_at_end = 0;
  bool drained = false;
  sim::Duration done_at{0};
};

// Runs a scenario to completion, checks the logs, then lets the network drain.
Outcome run(SimCluster& c, const Scenario& sc, sim::Duration limit = 20s) {
  Outcome o;
  o.finished = c.net().run_until([&] { return c.all_delivered(sc.planned); }, limit);
  o.done_at = c.net().now();
  o.writes_at_done = c.smc_writes();
  o.errors = spindle::testing::check(spindle::testing::specs_of(sc.group), c.logs(), o.finished);
  // Quiescence: with every sender idle the network must drain by itself.
  o.drained = !c.net().run_until([] { return false; }, c.net().now() + 1s) && !c.net().step();
  o.writes_at_end = c.smc_writes();
  return o;
}

std::string describe(const Scenario& sc) {
  return sg::to_yaml(sc.group);
}

}  // namespace

namespace {
void all_deliver_over_seeds(std::uint64_t count, std::uint64_t floor, std::chrono::seconds budget) {
  auto seeds = sim::Seeds::from_env(count, floor, budget);
  std::uint64_t delivered = 0;
  std::uint64_t in_place = 0;
  for (const std::uint64_t seed : seeds) {
    sim::Rng rng(seed * 7919);
    const auto sc = random_scenario(rng);
    SimCluster c(sc.group, config(seed));
    apply_plans(c, sc);
    const auto o = run(c, sc);
    for (const auto& l : c.logs())
      delivered += l.delivered.size();
    in_place += c.net().in_place_writes();
    if (!o.finished || !o.errors.empty() || !o.drained) {
      INFO("replay: " << sim::replay_command(seed, Catch::getResultCapture().getCurrentTestName()));
      INFO(describe(sc));
      for (const auto& e : o.errors)
        INFO(e);
      CHECK(o.finished);
      CHECK(o.errors.empty());
      CHECK(o.drained);
      FAIL("seed " << seed << " failed");
    }
  }
  WARN("delivered " << delivered << " messages over " << seeds.explored() << " seeds"
                    << (g_rows_in_place ? ", " + std::to_string(in_place) +
                                              " rows written in place (no bytes carried)"
                                        : std::string()));
  CHECK(delivered > 0);
  if (g_rows_in_place) CHECK(in_place > 0);
}
}  // namespace

TEST_CASE("smc sim: every member delivers the same messages in the same order, over seeds",
          "[smc][sim][seeds]") {
  all_deliver_over_seeds(3000, 300, std::chrono::seconds(30));
}

TEST_CASE("smc sim: the same seed replays the same run", "[smc][sim]") {
  std::uint64_t hashes[2] = {};
  for (auto& h : hashes) {
    sim::Rng rng(42);
    const auto sc = random_scenario(rng);
    SimCluster c(sc.group, config(42));
    apply_plans(c, sc);
    (void)run(c, sc);
    h = c.net().trace_hash();
  }
  CHECK(hashes[0] == hashes[1]);
}

namespace {
Scenario fixed(std::uint32_t n, std::uint32_t window, std::uint32_t payload,
               std::vector<std::uint64_t> counts, sg::Ordering ord = sg::Ordering::atomic) {
  Scenario sc{base_group(n), {}, {}};
  sg::Subgroup sub;
  sub.name = "only";
  for (std::uint32_t i = 0; i < n; ++i)
    sub.members.push_back(sc.group.members[i].id);
  for (std::uint32_t i = 0; i < counts.size(); ++i)
    sub.senders.push_back(sc.group.members[i].id);
  sub.window_size = window;
  sub.max_payload = payload;
  sub.ordering = ord;
  sc.group.subgroups.push_back(sub);
  std::vector<SendPlan> plans;
  for (auto k : counts)
    plans.push_back(SendPlan{k, 0ns, 0});
  sc.planned.push_back(counts);
  sc.plans.push_back(plans);
  return sc;
}
}  // namespace

TEST_CASE("smc sim: a silent sender does not stall the others (nulls), and nulls stop",
          "[smc][sim][nulls]") {
  auto sc = fixed(3, 8, 64, {50, 0, 50});
  SimCluster c(sc.group, config(7));
  apply_plans(c, sc);
  const auto o = run(c, sc);
  REQUIRE(o.finished);
  for (const auto& e : o.errors)
    FAIL(e);
  CHECK(o.drained);
  // The silent sender answered with nulls, in few counter updates.
  const auto& st = c.node(1).smc().stats(0);
  CHECK(st.nulls > 0);
  CHECK(st.null_updates <= st.nulls);
  CHECK(st.sent == 0);
}

TEST_CASE("smc sim: a sender slowed by 100 us per message does not slow the others",
          "[smc][sim][nulls]") {
  // Baseline: two fast senders. Then the same plus a third sender pacing 100 us/message.
  // Over several seeds: one schedule's random delays can double a run on their own (the
  // baseline's ratio to itself under other seeds spans 0.8-2.2).
  std::vector<double> ratios;
  for (std::uint64_t seed = 11; seed < 19; ++seed) {
    auto fast = fixed(3, 16, 256, {200, 200});
    SimCluster a(fast.group, config(seed));
    apply_plans(a, fast);
    const auto base = run(a, fast);
    REQUIRE(base.finished);

    auto slow = fixed(3, 16, 256, {200, 200, 200});
    slow.plans[0][2].spacing = 100us;
    SimCluster b(slow.group, config(seed));
    apply_plans(b, slow);
    // Time until the fast senders' 400 messages are delivered everywhere.
    const bool ok = b.net().run_until(
        [&] {
          for (std::size_t r = 0; r < 3; ++r) {
            std::uint64_t fast_delivered = 0;
            for (const auto& d : b.node(r).log.delivered)
              fast_delivered += d.sender != slow.group.members[2].id ? 1u : 0u;
            if (fast_delivered < 400) return false;
          }
          return true;
        },
        20s);
    REQUIRE(ok);
    const auto fast_done = b.net().now();
    INFO("seed " << seed << ": baseline " << base.done_at.count() << " ns, with slow sender "
                 << fast_done.count() << " ns");
    // The slow sender needs >= 20 ms for its 200 messages; without nulls the fast senders'
    // messages would be delivered at its pace (~8 times the baseline).
    CHECK(fast_done < base.done_at * 3);
    CHECK(fast_done < 10ms);
    ratios.push_back(static_cast<double>(fast_done.count()) /
                     static_cast<double>(base.done_at.count()));
    const auto rest = run(b, slow);
    CHECK(rest.finished);
    CHECK(rest.errors.empty());
  }
  std::sort(ratios.begin(), ratios.end());
  INFO("median slow-down " << ratios[ratios.size() / 2]);
  CHECK(ratios[ratios.size() / 2] < 1.6);
}

TEST_CASE("smc sim: quiescence - once every sender is idle no further pushes happen",
          "[smc][sim][nulls]") {
  auto sc = fixed(4, 10, 32, {30, 1, 0, 30});
  SimCluster c(sc.group, config(3));
  apply_plans(c, sc);
  const auto o = run(c, sc);
  REQUIRE(o.finished);
  CHECK(o.errors.empty());
  CHECK(o.drained);
  // After the drain, more idle time adds not a single write.
  const auto before = c.smc_writes();
  (void)c.net().run_until([] { return false; }, c.net().now() + 100ms);
  CHECK(c.smc_writes() == before);
  // Pushes made after everything was delivered are only the trailing counters: bounded.
  CHECK(o.writes_at_end - o.writes_at_done <= 4 * 3 * 4);
}

TEST_CASE("smc sim: small messages in large slots push their own bytes, not the slots'",
          "[smc][sim][ring]") {
  // 16-byte messages in 1 KiB slots, and slots filled to varying degrees: every member
  // delivers every message intact (the checker compares checksums), and the sender's data
  // writes carry each message's bytes and header, not its whole slot.
  for (const std::uint32_t size : {16u, 300u, 1000u}) {
    auto sc = fixed(3, 50, 1024, {400});
    sc.plans[0][0].size = size;
    SimCluster c(sc.group, config(size));
    apply_plans(c, sc);
    const auto o = run(c, sc);
    INFO("payload " << size);
    REQUIRE(o.finished);
    for (const auto& e : o.errors)
      FAIL(e);
    const auto& stats = c.node(0).sst().stats();
    const std::uint64_t per_peer = 400 * (size + sizeof(spindle::sst::SlotHeader));
    // The counters and guards are other writes; a gap of up to 256 bytes may ride along.
    const std::uint64_t slack = 400 * (size < 768 ? 0 : 1024 - size) + 2 * 400 * 64;
    CHECK(stats.data_bytes >= 2 * per_peer);
    CHECK(stats.data_bytes <= 2 * per_peer + slack);
  }
}

TEST_CASE("smc sim: a subgroup where only one member sends never sends nulls",
          "[smc][sim][nulls]") {
  auto sc = fixed(4, 5, 100, {120});
  SimCluster c(sc.group, config(5));
  apply_plans(c, sc);
  const auto o = run(c, sc);
  REQUIRE(o.finished);
  CHECK(o.errors.empty());
  CHECK(c.node(0).smc().stats(0).nulls == 0);
  CHECK(o.drained);
}

TEST_CASE("smc sim: ring wrap-around at every window size", "[smc][sim][ring]") {
  std::vector<std::uint32_t> windows;
  for (std::uint32_t w = 1; w <= 200; ++w)
    windows.push_back(w);
  std::uint64_t delivered = 0;
  for (std::uint32_t w : {255u, 256u, 257u, 500u, 511u, 512u, 999u, 1000u})
    windows.push_back(w);
  for (auto w : windows) {
    const std::uint64_t per_sender = std::min<std::uint64_t>(2ull * w + 3, 2003);
    auto sc = fixed(2, w, 24, {per_sender, per_sender});
    SimCluster c(sc.group, config(w));
    apply_plans(c, sc);
    const auto o = run(c, sc, 60s);
    INFO("window " << w);
    REQUIRE(o.finished);
    for (const auto& e : o.errors)
      FAIL(e);
    REQUIRE(c.node(1).smc().stats(0).delivered == 2 * per_sender);
    delivered += 2 * per_sender;
  }
  WARN("ring test delivered " << delivered << " messages per member");
}

TEST_CASE("smc sim: overlapping subgroups share one predicate thread per node",
          "[smc][sim][overlap]") {
  Scenario sc{base_group(4), {}, {}};
  const auto id = [&](std::uint32_t r) { return sc.group.members[r].id; };
  sc.group.subgroups = {
      sg::Subgroup{"a", {id(0), id(1), id(2)}, {id(0), id(1)}, 4, 100, sg::Ordering::atomic},
      sg::Subgroup{"b", {id(1), id(2), id(3)}, {id(2), id(3)}, 7, 50, sg::Ordering::atomic},
      sg::Subgroup{"c", {id(0), id(3)}, {id(0), id(3)}, 3, 300, sg::Ordering::unordered},
      sg::Subgroup{"all", {id(0), id(1), id(2), id(3)}, {id(1)}, 2, 8, sg::Ordering::atomic},
  };
  sc.planned = {{40, 40}, {40, 40}, {40, 40}, {40}};
  sc.plans = {{{40}, {40}}, {{40}, {40}}, {{40}, {40}}, {{40}}};
  SimCluster c(sc.group, config(99));
  apply_plans(c, sc);
  const auto o = run(c, sc);
  REQUIRE(o.finished);
  for (const auto& e : o.errors)
    FAIL(e);
  CHECK(o.drained);
  CHECK_FALSE(c.node(0).smc().is_member(1));
  CHECK(c.node(3).smc().is_sender(2));
}

TEST_CASE("smc sim: unordered mode delivers on receipt in per-sender FIFO order",
          "[smc][sim][unordered]") {
  auto sc = fixed(3, 6, 128, {60, 0, 60}, sg::Ordering::unordered);
  SimCluster c(sc.group, config(17));
  apply_plans(c, sc);
  const auto o = run(c, sc);
  REQUIRE(o.finished);
  for (const auto& e : o.errors)
    FAIL(e);
  CHECK(o.drained);
  // No stability wait and no nulls: a silent sender is simply never heard from.
  CHECK(c.node(1).smc().stats(0).nulls == 0);
  for (const auto& l : c.logs())
    for (const auto& d : l.delivered)
      CHECK(d.seq == -1);
}

namespace {
void crash_over_seeds(std::uint64_t count, std::uint64_t floor, std::chrono::seconds budget) {
  auto seeds = sim::Seeds::from_env(count, floor, budget);
  for (const std::uint64_t seed : seeds) {
    sim::Rng rng(seed * 104729);
    auto sc = random_scenario(rng);
    SimCluster c(sc.group, config(seed));
    apply_plans(c, sc);
    std::vector<spindle::sst::SuspicionReport> reports;
    for (std::size_t r = 0; r < c.size(); ++r)
      c.node(r).sst().set_suspicion_handler(
          [&](const spindle::sst::SuspicionReport& s) { reports.push_back(s); });
    const auto victim = sc.group.members[rng.uniform(0, sc.group.members.size() - 1)].id;
    const auto crash_at = sim::Duration(rng.uniform(1'000, 200'000));
    (void)c.net().run_until([&] { return c.net().now() >= crash_at; }, crash_at);
    c.net().crash(victim);
    (void)c.net().run_until([] { return false; }, c.net().now() + 20ms);
    const auto errors =
        spindle::testing::check(spindle::testing::specs_of(sc.group), c.logs(), false);
    if (!errors.empty()) {
      INFO("replay: " << sim::replay_command(seed, Catch::getResultCapture().getCurrentTestName()));
      INFO(describe(sc));
      for (const auto& e : errors)
        INFO(e);
      FAIL("seed " << seed << " failed");
    }
    // Every survivor that shares the view reported the crash to the layer above.
    for (const auto& rep : reports)
      REQUIRE(rep.node == victim);
    REQUIRE(reports.size() >= 1);
  }
}
}  // namespace

TEST_CASE("smc sim: a member crash mid-stream leaves consistent prefixes, over seeds",
          "[smc][sim][crash]") {
  crash_over_seeds(1000, 100, std::chrono::seconds(30));
}

namespace {
// A subgroup of three where node 2 listens: senders 0 (and 1 when `two_senders`).
Scenario listener_scenario(sg::Ordering ordering, bool two_senders, std::uint64_t count) {
  auto sc = fixed(
      3, 8, 48,
      two_senders ? std::vector<std::uint64_t>{count, count} : std::vector<std::uint64_t>{count},
      ordering);
  sc.group.subgroups[0].listeners = {sc.group.members[2].id};
  return sc;
}

// What a listener must show: each message it took is the one sent (size, checksum), each
// sender's in increasing index order, and none twice; every message either taken or lost.
void check_listener(const SimCluster& c, const Scenario& sc, std::size_t listener) {
  const auto logs = c.logs();
  const auto& heard = logs[listener].delivered;
  std::map<std::pair<std::uint32_t, std::uint64_t>, spindle::testing::Sent> sent;
  std::uint64_t total = 0;
  for (const auto& l : logs)
    for (const auto& s : l.sent) {
      sent[{s.sender, s.index}] = s;
      ++total;
    }
  std::map<std::uint32_t, std::int64_t> last;
  for (const auto& d : heard) {
    INFO("sender " << d.sender << " message " << d.index);
    const auto it = sent.find({d.sender, d.index});
    REQUIRE(it != sent.end());
    CHECK(d.size == it->second.size);
    CHECK(d.checksum == it->second.checksum);
    CHECK(d.seq == -1);
    auto [at, fresh] = last.emplace(d.sender, -1);
    CHECK(static_cast<std::int64_t>(d.index) > at->second);
    at->second = static_cast<std::int64_t>(d.index);
  }
  (void)sc;
  const auto lost = const_cast<SimCluster&>(c).node(listener).smc().stats(0).lost;
  CHECK(heard.size() + lost == total);
}
}  // namespace

TEST_CASE("smc sim: a listener holds no one; when it stops, the others go on without it",
          "[smc][sim][listener]") {
  for (const auto ordering : {sg::Ordering::atomic, sg::Ordering::unordered}) {
    for (const bool two : {false, true}) {
      INFO((ordering == sg::Ordering::atomic ? "atomic" : "unordered")
           << (two ? ", two senders" : ", one sender"));
      const std::uint64_t count = 300;
      auto sc = listener_scenario(ordering, two, count);
      SimCluster c(sc.group, config(two ? 11 : 12));
      apply_plans(c, sc);
      // The listener stops (no step at all, as a stopped process) for the whole stream:
      // with a window of 8, the stream could not pass 8 messages if it held the ring.
      const auto listener_id = sc.group.members[2].id;
      c.net().set_actor(listener_id, [] { return false; });
      const bool finished = c.net().run_until(
          [&] {
            const std::uint64_t want = two ? 2 * count : count;
            return c.node(0).delivered(0) == want && c.node(1).delivered(0) == want;
          },
          20s);
      REQUIRE(finished);
      CHECK(c.node(2).delivered(0) == 0);
      // The holders' logs agree (the listener is left out of the check: it heard nothing).
      auto logs = c.logs();
      logs[2].delivered.clear();
      auto specs = spindle::testing::specs_of(sc.group);
      std::erase(specs[0].members, listener_id);
      for (const auto& e : spindle::testing::check(specs, logs, true))
        FAIL(e);
      // It runs again: it takes what the ring still holds (the last window), and counts
      // the rest lost.
      c.net().set_actor(listener_id, [&c] { return c.node(2).loop().run_once(); });
      (void)c.net().run_until([] { return false; }, c.net().now() + 200ms);
      // (What the ring still holds when it looks: writes still on their way to it land
      // later and are taken then, so more than one window may come through.)
      CHECK(c.node(2).delivered(0) > 0);
      CHECK(c.node(2).smc().stats(0).lost > 0);
      check_listener(c, sc, 2);
    }
  }
}

TEST_CASE("smc sim: a listener that keeps up takes every message, each sender's in order",
          "[smc][sim][listener]") {
  for (const auto ordering : {sg::Ordering::atomic, sg::Ordering::unordered}) {
    auto sc = listener_scenario(ordering, true, 200);
    for (auto& p : sc.plans[0])
      p.spacing = 200us;  // a pace the listener keeps
    SimCluster c(sc.group, config(21));
    apply_plans(c, sc);
    REQUIRE(c.net().run_until(
        [&] { return c.node(2).delivered(0) + c.node(2).smc().stats(0).lost == 400; }, 20s));
    CHECK(c.node(2).smc().stats(0).lost == 0);
    check_listener(c, sc, 2);
  }
}

TEST_CASE("smc sim: listeners, stalled or not, hold no one, over seeds", "[smc][sim][listener]") {
  // The random scenarios of the seeds test, where a subgroup may name one of its
  // non-senders a listener, and half the listeners' processes stop for a while (every
  // subgroup of theirs stops with them: where they hold, the others wait, as they must).
  auto seeds = sim::Seeds::from_env(500, 100, std::chrono::seconds(30));
  std::uint64_t listeners = 0;
  std::uint64_t lost = 0;
  for (const std::uint64_t seed : seeds) {
    sim::Rng rng(seed * 7919);
    auto sc = random_scenario(rng);
    sim::Rng pick(seed * 104729 + 1);
    std::set<std::uint32_t> listening;
    for (auto& sub : sc.group.subgroups) {
      const auto id = pick_quiet(sub, pick);
      if (!id) continue;
      sub.listeners = {*id};
      listening.insert(*id);
      ++listeners;
    }
    SimCluster c(sc.group, config(seed));
    apply_plans(c, sc);
    for (auto id : listening) {
      if (!pick.chance(500'000)) continue;
      const auto rank = *sc.group.rank_of(id);
      const auto until = c.net().now() + std::chrono::microseconds(pick.uniform(100, 20'000));
      c.stop_between(rank, c.net().now(), until);
    }
    const bool finished = c.net().run_until([&] { return c.all_delivered(sc.planned); }, 20s);
    INFO("seed " << seed << " (SPINDLE_SIM_SEED=" << seed << ")\n" << describe(sc));
    REQUIRE(finished);
    // The others: the checked order, every message; each listener: intact messages, each
    // sender's in order, none twice.
    auto logs = c.logs();
    auto specs = spindle::testing::specs_of(sc.group);
    for (std::size_t s = 0; s < specs.size(); ++s)
      for (auto id : sc.group.subgroups[s].listeners)
        std::erase(specs[s].members, id);
    for (auto& l : logs)
      std::erase_if(l.delivered, [&](const spindle::testing::Delivered& d) {
        const auto& ls = sc.group.subgroups[d.subgroup].listeners;
        return std::find(ls.begin(), ls.end(), l.node) != ls.end();
      });
    for (const auto& e : spindle::testing::check(specs, logs, true))
      FAIL(e);
    for (std::size_t s = 0; s < sc.group.subgroups.size(); ++s)
      for (auto id : sc.group.subgroups[s].listeners)
        lost += c.node(*sc.group.rank_of(id)).smc().stats(static_cast<std::uint32_t>(s)).lost;
    const auto all = c.logs();
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, spindle::testing::Sent> sent;
    for (const auto& l : all)
      for (const auto& m : l.sent)
        sent[{m.subgroup, m.sender, m.index}] = m;
    for (const auto& l : all) {
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> last;
      for (const auto& d : l.delivered) {
        const auto& ls = sc.group.subgroups[d.subgroup].listeners;
        if (std::find(ls.begin(), ls.end(), l.node) == ls.end()) continue;
        const auto it = sent.find({d.subgroup, d.sender, d.index});
        REQUIRE(it != sent.end());
        CHECK(d.checksum == it->second.checksum);
        auto [at, fresh] = last.emplace(std::pair(d.subgroup, d.sender), -1);
        CHECK(static_cast<std::int64_t>(d.index) > at->second);
        at->second = static_cast<std::int64_t>(d.index);
      }
    }
  }
  WARN(listeners << " listeners over " << seeds.explored() << " seeds; they skipped " << lost
                 << " messages");
  CHECK(listeners > 0);
  if (seeds.explored() >= 100) CHECK(lost > 0);  // some were lapped: the path was taken
}

namespace {
// What a member left behind must show (docs/dev/smc.md, "Lagging members"): what it delivered of
// `subgroup` is a subsequence of the order `holder` delivered (the same place for each
// message, the message intact), and every message either delivered or counted lost.
void check_behind(SimCluster& c, std::uint32_t subgroup, std::size_t behind, std::size_t holder) {
  const auto logs = c.logs();
  std::map<std::pair<std::uint32_t, std::uint64_t>, spindle::testing::Delivered> order;
  for (const auto& d : logs[holder].delivered)
    if (d.subgroup == subgroup) order[{d.sender, d.index}] = d;
  std::int64_t last = -1;
  std::map<std::uint32_t, std::int64_t> last_of;  // unordered: per sender
  std::uint64_t heard = 0;
  for (const auto& d : logs[behind].delivered) {
    if (d.subgroup != subgroup) continue;
    INFO("sender " << d.sender << " message " << d.index << " seq " << d.seq);
    const auto it = order.find({d.sender, d.index});
    REQUIRE(it != order.end());
    CHECK(d.seq == it->second.seq);
    CHECK(d.size == it->second.size);
    CHECK(d.checksum == it->second.checksum);
    if (d.seq >= 0) {  // atomic: the holders' total order
      CHECK(d.seq > last);
      last = d.seq;
    }
    auto [at, fresh] = last_of.emplace(d.sender, -1);  // each sender's order, either way
    CHECK(static_cast<std::int64_t>(d.index) > at->second);
    at->second = static_cast<std::int64_t>(d.index);
    ++heard;
  }
  CHECK(heard + c.node(behind).smc().stats(subgroup).lost == order.size());
}

// A subgroup of three (window 8) whose member 2 does not send and is demotable with a lag
// bound of 2 ms; senders 0 (and 1 when `two_senders`).
Scenario lag_scenario(bool two_senders, std::uint64_t count,
                      sg::Ordering ordering = sg::Ordering::atomic) {
  auto sc = fixed(
      3, 8, 48,
      two_senders ? std::vector<std::uint64_t>{count, count} : std::vector<std::uint64_t>{count},
      ordering);
  sc.group.subgroups[0].demotable = {sc.group.members[2].id};
  sc.group.subgroups[0].lag_bound = 2ms;
  return sc;
}
}  // namespace

TEST_CASE("smc sim: a lagging member is left behind, the others go on, it catches up in order",
          "[smc][sim][lag]") {
  for (const auto ordering : {sg::Ordering::atomic, sg::Ordering::unordered})
    for (const bool two : {false, true}) {
      INFO((ordering == sg::Ordering::atomic ? "atomic, " : "unordered, ")
           << (two ? "two senders" : "one sender"));
      const std::uint64_t count = 300;
      const std::uint64_t want = two ? 2 * count : count;
      auto sc = lag_scenario(two, count, ordering);
      SimCluster c(sc.group, config(two ? 31 : 32));
      c.check_progress();
      apply_plans(c, sc);
      // Node 2's process stops 1 ms in (time passes, it does nothing): with a window of 8,
      // the stream could not pass 8 messages while it held the ring.
      const auto from = c.net().now() + 1ms;
      c.stop_between(2, from, sim::Duration::max());
      const bool went_on = c.net().run_until(
          [&] { return c.node(0).delivered(0) == want && c.node(1).delivered(0) == want; }, 20s);
      INFO("delivered " << c.node(0).delivered(0) << " " << c.node(1).delivered(0) << " "
                        << c.node(2).delivered(0) << "; demotions "
                        << c.node(0).smc().stats(0).demotions << " "
                        << c.node(1).smc().stats(0).demotions);
      REQUIRE(went_on);
      CHECK(c.node(2).delivered(0) < want);
      CHECK(c.node(0).smc().stats(0).demotions + c.node(1).smc().stats(0).demotions >= 1);
      CHECK(c.node(0).smc().stats(0).lost == 0);
      // The holders agree on the order (the member left behind is checked below).
      auto logs = c.logs();
      logs[2].delivered.clear();
      auto specs = spindle::testing::specs_of(sc.group);
      std::erase(specs[0].members, sc.group.members[2].id);
      for (const auto& e : spindle::testing::check(specs, logs, true))
        FAIL(e);
      // It runs again: it delivers what the rings still hold, in the total order, counts what
      // went by, and says it caught up (the engine then asks for the next view).
      c.stop_between(2, from, c.net().now());  // its stop ends now
      REQUIRE(c.net().run_until(
          [&] { return c.node(2).delivered(0) + c.node(2).smc().stats(0).lost == want; }, 20s));
      (void)c.net().run_until([] { return false; }, c.net().now() + 5ms);
      CHECK(c.node(2).smc().left_behind(0));
      CHECK(c.node(2).smc().stats(0).left_behind == 1);
      CHECK(c.node(2).smc().stats(0).lost > 0);
      CHECK(c.node(2).delivered(0) > 0);
      CHECK(c.node(2).rejoins == 1);
      check_behind(c, 0, 2, 0);
    }
}

TEST_CASE("smc sim: a member that keeps up is never left behind", "[smc][sim][lag]") {
  auto sc = lag_scenario(true, 200);
  for (auto& p : sc.plans[0])
    p.spacing = 200us;
  SimCluster c(sc.group, config(33));
  c.check_progress();
  apply_plans(c, sc);
  REQUIRE(c.net().run_until([&] { return c.all_delivered(sc.planned); }, 20s));
  for (std::size_t r = 0; r < 3; ++r) {
    CHECK(c.node(r).smc().stats(0).demotions == 0);
    CHECK(c.node(r).smc().stats(0).lost == 0);
    CHECK_FALSE(c.node(r).smc().left_behind(0));
  }
  for (const auto& e :
       spindle::testing::check(spindle::testing::specs_of(sc.group), c.logs(), true))
    FAIL(e);
}

namespace {
void lagging_over_seeds(std::uint64_t count, std::uint64_t floor, std::chrono::seconds budget) {
  // The random scenarios of the seeds test, where a subgroup may name one of its
  // non-senders demotable (a lag bound of 1-5 ms), and half of those members' processes stop
  // for a while (where they hold without being demotable, the others wait, as they must).
  auto seeds = sim::Seeds::from_env(count, floor, budget);
  std::uint64_t behind = 0;
  std::uint64_t lost = 0;
  for (const std::uint64_t seed : seeds) {
    sim::Rng rng(seed * 7919);
    auto sc = random_scenario(rng);
    sim::Rng pick(seed * 15485863 + 3);
    std::set<std::uint32_t> demotable;
    for (auto& sub : sc.group.subgroups) {
      const auto id = pick_quiet(sub, pick);
      if (!id) continue;
      sub.demotable = {*id};
      sub.lag_bound = std::chrono::milliseconds(pick.uniform(1, 5));
      demotable.insert(*id);
    }
    SimCluster c(sc.group, config(seed));
    c.check_progress();
    apply_plans(c, sc);
    for (auto id : demotable) {
      if (!pick.chance(500'000)) continue;
      const auto rank = *sc.group.rank_of(id);
      const auto from = c.net().now() + std::chrono::microseconds(pick.uniform(0, 2'000));
      const auto until = from + std::chrono::microseconds(pick.uniform(100, 20'000));
      c.stop_between(rank, from, until);
    }
    const bool finished = c.net().run_until([&] { return c.all_delivered(sc.planned); }, 20s);
    INFO("seed " << seed << " (SPINDLE_SIM_SEED=" << seed << ")\n" << describe(sc));
    REQUIRE(finished);
    // Those that held: the checked order, every message. Each member left behind: a
    // subsequence of a sender's order (senders are never left behind), the rest counted lost.
    auto logs = c.logs();
    auto specs = spindle::testing::specs_of(sc.group);
    std::vector<std::pair<std::uint32_t, std::size_t>> left;  // (subgroup, rank)
    for (std::uint32_t s = 0; s < sc.group.subgroups.size(); ++s) {
      for (auto id : sc.group.subgroups[s].members) {
        const auto rank = *sc.group.rank_of(id);
        if (!c.node(rank).smc().left_behind(s)) {
          CHECK(c.node(rank).smc().stats(s).lost == 0);
          continue;
        }
        left.emplace_back(s, rank);
        std::erase(specs[s].members, id);
        std::erase_if(logs[rank].delivered,
                      [s](const spindle::testing::Delivered& d) { return d.subgroup == s; });
        lost += c.node(rank).smc().stats(s).lost;
        ++behind;
      }
    }
    for (const auto& e : spindle::testing::check(specs, logs, true))
      FAIL(e);
    for (const auto& [s, rank] : left)
      check_behind(c, s, rank, *sc.group.rank_of(sc.group.subgroups[s].senders[0]));
  }
  WARN(behind << " members left behind over " << seeds.explored() << " seeds; they skipped " << lost
              << " messages");
  if (seeds.explored() >= 100) {
    CHECK(behind > 0);
    CHECK(lost > 0);
  }
}
}  // namespace

TEST_CASE("smc sim: lagging members, stopped or not, over seeds", "[smc][sim][lag]") {
  lagging_over_seeds(500, 100, std::chrono::seconds(30));
}

// Item 1 of issue 62 in the simulator: SMC with its rows in place, as over shared memory.
// Slots are reused only once every receiver has passed them (random windows of 1 to 1,000,
// slowed and bursty senders: a wrong checksum anywhere fails the seed); a receiver that
// crashes while holding slots leaves the others consistent prefixes; a member left behind
// reads what the rings still hold, each message whole.
TEST_CASE("smc sim: rows in place, every member delivers the same messages in the same order",
          "[smc][sim][seeds][inplace]") {
  const RowsInPlace on;
  all_deliver_over_seeds(1000, 150, std::chrono::seconds(15));
}

TEST_CASE("smc sim: rows in place, a receiver that crashes holding slots",
          "[smc][sim][crash][inplace]") {
  const RowsInPlace on;
  crash_over_seeds(500, 60, std::chrono::seconds(10));
}

TEST_CASE("smc sim: rows in place, lagging members read whole messages or count them lost",
          "[smc][sim][lag][inplace]") {
  const RowsInPlace on;
  lagging_over_seeds(300, 60, std::chrono::seconds(10));
}

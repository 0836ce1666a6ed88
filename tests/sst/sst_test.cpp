// SST unit tests: group description loading (errors name file, line and key), row layout,
// the three predicate kinds, push ordering (statuses before data before guards, guards once,
// retry keeps order), heartbeats and suspicions surfaced to the layer above.
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include "transport/sim.hpp"

#include "group/layout.hpp"
#include "group/view.hpp"
#include "sst/adaptive_spin.hpp"
#include "sst/predicate_loop.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace sg = spindle::group;
namespace sst = spindle::sst;
namespace sim = spindle::transport::sim;
namespace st = spindle::transport;
using namespace std::chrono_literals;

namespace {
const char* kGood = R"(version: 1
epoch: 3
members:
  - {id: 10, host: 127.0.0.1, port: 7000}
  - {id: 11, port: 7001}
  - {id: 12}
subgroups:
  - name: sensors
    members: [10, 11, 12]
    senders: [10, 12]
    window_size: 50
    max_payload: 100
  - name: log
    members: [11, 12]
    ordering: unordered
knobs:
  idle_spin_us: 500
  heartbeat_ms: 0
)";

std::string error_of(const std::string& yaml) {
  try {
    (void)sg::parse_group(yaml, "g.yaml");
  } catch (const sg::GroupError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("group: a description loads, defaults apply, and it round-trips through YAML",
          "[group]") {
  const auto g = sg::parse_group(kGood, "g.yaml");
  REQUIRE(g.members.size() == 3);
  CHECK(g.epoch == 3);
  CHECK(g.members[1].host == "127.0.0.1");
  CHECK(g.members[1].port == 7001);
  REQUIRE(g.subgroups.size() == 2);
  CHECK(g.subgroups[0].senders == std::vector<sg::NodeId>{10, 12});
  CHECK(g.subgroups[1].senders == g.subgroups[1].members);  // default: everyone sends
  CHECK(g.subgroups[1].ordering == sg::Ordering::unordered);
  CHECK(g.subgroups[1].window_size == 100);
  CHECK(g.knobs.idle_spin == 500us);
  CHECK(g.knobs.heartbeat_interval == 0ms);
  CHECK(g.rank_of(12) == 2u);
  CHECK_FALSE(g.rank_of(13));
  CHECK(sg::parse_group(sg::to_yaml(g), "again") == g);
  // A value: a later view replaces it wholesale.
  auto next = g;
  next.epoch = 4;
  next.members.pop_back();
  next.subgroups.clear();
  CHECK(next != g);
}

TEST_CASE("group: errors name the file, the line and the key", "[group]") {
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nbogus: 3\n") ==
        "g.yaml:4: bogus: unknown key (allowed: version, epoch, identity, members, subgroups, "
        "knobs)");
  CHECK(error_of("members:\n  - {id: 1}\n").find("version: missing") != std::string::npos);
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nsubgroups:\n  - members: [1]\n"
                 "    window_size: 0\n") ==
        "g.yaml:6: subgroups[0].window_size: must be in 1..65536, got 0");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nsubgroups:\n  - members: [1, 2]\n") ==
        "g.yaml:5: subgroups[0].members: node 2 is not in members");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\n  - {id: 2}\nsubgroups:\n"
                 "  - members: [1]\n    senders: [2]\n") ==
        "g.yaml:7: subgroups[0].senders: sender 2 is not a member of the subgroup");
  // Listeners: members, never senders, ascending; they round-trip.
  const std::string two =
      "version: 1\nmembers:\n  - {id: 1}\n  - {id: 2}\n  - {id: 3}\nsubgroups:\n";
  CHECK(error_of(two + "  - members: [1, 2]\n    senders: [1]\n    listeners: [3]\n") ==
        "g.yaml:9: subgroups[0].listeners: listener 3 is not a member of the subgroup");
  CHECK(error_of(two + "  - members: [1, 2]\n    senders: [1]\n    listeners: [1]\n") ==
        "g.yaml:9: subgroups[0].listeners: listener 1 is a sender (a listener only receives)");
  CHECK(error_of(two + "  - members: [1, 2, 3]\n    senders: [1]\n    listeners: [3, 2]\n") ==
        "g.yaml:9: subgroups[0].listeners: expected ascending ids, each once");
  const auto heard = sg::parse_group(
      two + "  - members: [1, 2, 3]\n    senders: [1]\n    listeners: [2, 3]\n", "g.yaml");
  CHECK(heard.subgroups[0].listeners == std::vector<sg::NodeId>{2, 3});
  CHECK(sg::parse_group(sg::to_yaml(heard), "again") == heard);
  // Demotable members (lagging members, docs/dev/smc.md): neither senders nor listeners,
  // ascending; a lag bound in milliseconds; they round-trip.
  const std::string sub3 = two + "  - members: [1, 2, 3]\n    senders: [1]\n";
  CHECK(error_of(sub3 + "    demotable: [1]\n") ==
        "g.yaml:9: subgroups[0].demotable: node 1 must be a member of the subgroup that neither "
        "sends nor listens");
  CHECK(error_of(sub3 + "    listeners: [2]\n    demotable: [2]\n") ==
        "g.yaml:10: subgroups[0].demotable: node 2 must be a member of the subgroup that "
        "neither sends nor listens");
  CHECK(error_of(sub3 + "    demotable: [3, 2]\n") ==
        "g.yaml:9: subgroups[0].demotable: expected ascending ids, each once");
  CHECK(error_of(sub3 + "    lag_bound_ms: -1\n")
            .find("g.yaml:9: subgroups[0].lag_bound_ms: must be in 0..3600000") == 0);
  const auto lagging =
      sg::parse_group(sub3 + "    demotable: [2, 3]\n    lag_bound_ms: 50\n", "g.yaml");
  CHECK(lagging.subgroups[0].demotable == std::vector<sg::NodeId>{2, 3});
  CHECK(lagging.subgroups[0].lag_bound == std::chrono::milliseconds(50));
  CHECK(sg::parse_group(sg::to_yaml(lagging), "again") == lagging);
  CHECK(error_of("version: 1\nmembers:\n  - {id: x}\n") ==
        "g.yaml:3: members[0].id: expected an integer, got 'x'");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\n  - {id: 1}\n").find("appears twice") !=
        std::string::npos);
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1, colour: red}\n") ==
        "g.yaml:3: members[0].colour: unknown key (allowed: id, host, port, pid, host_id, joining, "
        "nonce, subject, serial)");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1, pid: -2}\n").find("g.yaml:3: members[0].pid") ==
        0);
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1, host_id: 9223372036854775808}\n")
            .find("g.yaml:3: members[0].host_id") == 0);
  CHECK(error_of("version: 1\nmembers: [\n").find("g.yaml:") == 0);
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nsubgroups:\n  - members: [1]\n"
                 "    ordering: causal\n") ==
        "g.yaml:6: subgroups[0].ordering: expected atomic or unordered, got 'causal'");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nsubgroups:\n  - members: [1]\n"
                 "    topic: -3\n") ==
        "g.yaml:6: subgroups[0].topic: expected an unsigned 64-bit integer, got '-3'");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nsubgroups:\n  - members: [1]\n"
                 "    topic: 18446744073709551616\n")
            .find("subgroups[0].topic: expected an unsigned 64-bit integer") != std::string::npos);
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nknobs:\n  rdmc_block_size: 100\n") ==
        "g.yaml:5: knobs.rdmc_block_size: must be a multiple of 64");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nknobs:\n  rdmc_algorithm: fastest\n") ==
        "g.yaml:5: knobs.rdmc_algorithm: 'fastest' is not one of sequential, chain, "
        "binomial_tree, binomial_pipeline");
  CHECK(error_of("version: 1\nmembers:\n  - {id: 1}\nknobs:\n  rdmc_buffer_size: 0\n")
            .find("g.yaml:5: knobs.rdmc_buffer_size: must be in 64..") == 0);
}

TEST_CASE("group: a member's process identity loads and round-trips", "[group]") {
  const auto g = sg::parse_group(
      "version: 1\nmembers:\n  - {id: 1, pid: 4711, host_id: 9223372036854775807}\n  - {id: 2}\n",
      "g.yaml");
  CHECK(g.members[0].pid == 4711);
  CHECK(g.members[0].host_id == 9223372036854775807ull);
  CHECK(g.members[1].pid == 0);
  CHECK(g.members[1].host_id == 0);
  CHECK(sg::parse_group(sg::to_yaml(g), "again") == g);
}

TEST_CASE("group: the RDMC knobs load and round-trip", "[group]") {
  const auto g = sg::parse_group(
      "version: 1\nmembers:\n  - {id: 1}\nknobs:\n  rdmc_block_size: 4096\n"
      "  rdmc_buffer_size: 1048576\n  rdmc_algorithm: chain\n",
      "g.yaml");
  CHECK(g.knobs.rdmc_block_size == 4096);
  CHECK(g.knobs.rdmc_buffer_size == 1048576);
  CHECK(g.knobs.rdmc_algorithm == spindle::rdmc::Algorithm::chain);
  CHECK(sg::parse_group(sg::to_yaml(g), "again") == g);
}

TEST_CASE("group: a subgroup's topic id takes all 64 bits and round-trips", "[group]") {
  const auto g = sg::parse_group(
      "version: 1\nmembers:\n  - {id: 1}\nsubgroups:\n  - members: [1]\n"
      "    topic: 18446744073709551615\n",
      "g.yaml");
  CHECK(g.subgroups[0].topic == 18446744073709551615ULL);
  CHECK(sg::parse_group(sg::to_yaml(g), "again") == g);
}

TEST_CASE("group: load_group names a missing file", "[group]") {
  CHECK_THROWS_WITH(sg::load_group("/nonexistent/g.yaml"),
                    "/nonexistent/g.yaml: cannot open the group file");
  const auto path = std::filesystem::temp_directory_path() / "spindle_sst_test_group.yaml";
  std::ofstream(path) << kGood;
  CHECK(sg::load_group(path).members.size() == 3);
  std::filesystem::remove(path);
}

// The member sets of the SST's columns (suspected, proposal, demoted): 256 ranks in four
// words, each rank in its own bit, set operations word by word.
TEST_CASE("sst: a member set holds any rank of a 256-member view", "[sst][layout]") {
  using sst::MemberSet;
  STATIC_REQUIRE(sst::kMaxMembers == 256);
  STATIC_REQUIRE(sg::kMaxMembers == 256);
  MemberSet a;
  CHECK(a.none());
  for (const std::size_t r : {0u, 63u, 64u, 127u, 128u, 200u, 255u})
    a.set(r);
  CHECK(a.count() == 7);
  for (std::size_t r = 0; r < MemberSet::kBits; ++r) {
    INFO("rank " << r);
    const bool in = r == 0 || r == 63 || r == 64 || r == 127 || r == 128 || r == 200 || r == 255;
    CHECK(a.test(r) == in);
    CHECK((~a).test(r) == !in);
  }
  CHECK_FALSE(a.test(256));  // past the width: in no set, and set() leaves it out
  CHECK(MemberSet{}.set(256).none());
  const auto b = MemberSet::of(64) | MemberSet::of(65);
  CHECK((a & b) == MemberSet::of(64));
  CHECK((a | b).count() == 8);
  CHECK((a & ~b).count() == 6);
  CHECK(b.word(1) == 3u);
  CHECK(b.word(0) == 0u);
  CHECK((~MemberSet{}).count() == 256);
  // A view's description holds as many members as the sets do, and says so past that.
  std::vector<sg::Member> members;
  for (std::uint32_t i = 1; i <= 257; ++i)
    members.push_back(sg::Member{i, "127.0.0.1", 0});
  sg::View v;
  v.members.assign(members.begin(), members.begin() + 256);
  CHECK_NOTHROW(sg::validate(v, "v.yaml"));
  v.members = members;
  CHECK_THROWS_WITH(sg::validate(v, "v.yaml"), Catch::Contains("at most 256 members"));
}

// docs/transport-shm.md, "Rows in place": a member's own row, the SST bytes it keeps over
// shared memory, is the documented sum and does not grow with the domain.
TEST_CASE("sst: a member's own row is the documented sum, whatever the domain's size",
          "[sst][layout]") {
  sg::LayoutSettings s;
  s.window_size = 100;  // the domain file's defaults
  s.slot_size = 1024;
  s.header_size = 64;  // the DCPS sample header
  for (const std::size_t n : {2u, 16u, 64u}) {
    INFO(n << " members");
    std::vector<sg::Member> members;
    for (std::uint32_t i = 1; i <= n; ++i)
      members.push_back(sg::Member{i, "127.0.0.1", 0});
    const auto v = sg::first_view(members, s);  // the builtin subgroup: every member sends
    const sst::SstLayout l(v);
    const std::size_t membership = 128 + sst::round_up(8 * 1, 64) + 32 * sst::kMaxJoins;
    const std::size_t stride = sst::round_up(1024 + 64, 64);
    const std::size_t sender = 64 + sst::round_up(16 * 100, 64) + 100 * stride;
    const std::size_t row = 64 + membership + 64 + sender;
    for (std::size_t r = 0; r < n; ++r) {
      CHECK(l.row_size(r) == row);
      CHECK(sst::round_up(l.row_size(r), spindle::transport::kRowAlign) == 112 * 1024);
    }
    CHECK(l.region_size() == n * 112 * 1024);  // the region's; each member maps its own row
  }
}

TEST_CASE("sst: the row layout gives each member only the columns it needs", "[sst][layout]") {
  const auto g = sg::parse_group(kGood, "g.yaml");
  const sst::SstLayout l(g);
  REQUIRE(l.rows() == 3);
  // Member 10 (rank 0): sensors only, a sender there.
  CHECK(l.columns(0, 0).present);
  CHECK(l.columns(0, 0).sender);
  CHECK_FALSE(l.columns(0, 1).present);
  // Member 11 (rank 1): in both, sender of log only.
  CHECK_FALSE(l.columns(1, 0).sender);
  CHECK(l.columns(1, 1).sender);
  CHECK(l.slot_stride(0) == 128);  // 100 payload bytes, padded to a line
  // Guard, then the 50 headers (16 bytes each, padded to a line), then the payloads.
  const auto& c = l.columns(0, 0);
  CHECK(c.headers - c.guard == sizeof(sst::SenderGuardRow));
  CHECK(c.slots - c.headers == 832);
  // The membership part: its row and the trims (one i64 per subgroup, padded to a line).
  CHECK(l.membership(0) == l.control(0) + sizeof(sst::ControlRow));
  CHECK(l.trims(0) == l.membership(0) + sizeof(sst::MembershipRow));
  CHECK(l.membership_len() ==
        sizeof(sst::MembershipRow) + sst::kLine + sizeof(sst::JoinEntry) * sst::kMaxJoins);
  CHECK(l.joiners(0) == l.trims(0) + sst::kLine);
  CHECK(l.row_size(0) == sizeof(sst::ControlRow) + l.membership_len() + sizeof(sst::CountersRow) +
                             sizeof(sst::SenderGuardRow) + 832 + 50 * 128);
  // Each row on pages of its own (a transport may keep it in place, at its owner).
  const auto pages = [](std::size_t n) { return sst::round_up(n, spindle::transport::kRowAlign); };
  for (std::size_t r = 0; r < 3; ++r) {
    CHECK(l.row_offset(r) % spindle::transport::kRowAlign == 0);
    if (r + 1 < 3) CHECK(l.row_offset(r + 1) == l.row_offset(r) + pages(l.row_size(r)));
  }
  CHECK(l.region_size() == l.row_offset(2) + pages(l.row_size(2)));
  // Unordered counters: one delivered count per sender.
  CHECK(l.columns(1, 1).counters_len == sst::kLine);
}

TEST_CASE("predicates: one-time, recurrent and transition kinds fire as specified",
          "[sst][predicates]") {
  sst::Predicates p;
  bool cond = false;
  int once = 0, every = 0, edges = 0;
  p.add(
      sst::PredicateKind::one_time, [&] { return cond; }, [&] { ++once; });
  p.add(
      sst::PredicateKind::recurrent, [&] { return cond; }, [&] { ++every; });
  p.add(
      sst::PredicateKind::transition, [&] { return cond; }, [&] { ++edges; });
  CHECK(p.evaluate() == 0);
  cond = true;
  CHECK(p.evaluate() == 3);
  CHECK(p.evaluate() == 1);  // only the recurrent one
  CHECK(p.size() == 2);      // the one-time pair is gone
  cond = false;
  p.evaluate();
  cond = true;
  p.evaluate();
  CHECK(once == 1);
  CHECK(every == 3);
  CHECK(edges == 2);
}

TEST_CASE("predicates: evaluated in registration order; triggers may add and remove",
          "[sst][predicates]") {
  sst::Predicates p;
  std::vector<int> order;
  sst::Predicates::Id second = 0;
  p.add(
      sst::PredicateKind::recurrent, [] { return true; },
      [&] {
        order.push_back(1);
        if (order.size() == 1) {
          p.remove(second);
          p.add(
              sst::PredicateKind::one_time, [] { return true; }, [&] { order.push_back(3); });
        }
      });
  second = p.add(
      sst::PredicateKind::recurrent, [] { return true; }, [&] { order.push_back(2); });
  p.evaluate();  // 1 (removes 2 before it runs, adds 3 for the next step)
  p.evaluate();  // 1, 3
  p.evaluate();  // 1
  CHECK(order == std::vector<int>{1, 1, 3, 1});
}

namespace {
// Two SST nodes on the simulator with a tiny group. With `second_joins`, node 2 joins with
// this view (Member::joining) and only node 1 connects here.
struct Pair {
  explicit Pair(sim::Config cfg, std::chrono::milliseconds heartbeat = 0ms,
                bool second_joins = false)
      : net(cfg) {
    g.members = {sg::Member{1, "sim", 0}, sg::Member{2, "sim", 0}};
    g.members[1].joining = second_joins;
    g.subgroups = {sg::Subgroup{"s", {1, 2}, {1, 2}, 4, 64, sg::Ordering::atomic}};
    g.knobs.heartbeat_interval = heartbeat;
    g.knobs.suspicion_timeout = 5ms;
    net.add_node(1);
    net.add_node(2);
    auto clock = [this] { return net.now(); };
    a = std::make_unique<sst::Sst>(net.node(1), g, clock);
    b = std::make_unique<sst::Sst>(net.node(2), g, clock);
    REQUIRE(a->connect(10ms) == st::Status::ok);
    if (!second_joins) REQUIRE(b->connect(10ms) == st::Status::ok);
  }
  sg::View g;
  sim::Network net;
  std::unique_ptr<sst::Sst> a, b;
};
}  // namespace

namespace {
constexpr std::uint64_t kVersions = 300;

// Streams versions 1..kVersions from a to b, over seeds, on a channel small enough that
// writes are refused now and then. Each version fills four slots of subgroup 0 with its
// number, then `queue(p, c, v)` stores and queues what the test orders behind or ahead of
// that data. `observe(p, c, seen, failure)` looks at b after every delivery and returns the
// version it now sees (setting `failure` on a violation); `after(p)` runs once b saw them all.
template <class Queue, class Observe, class After>
void stream_versions(Queue queue, Observe observe, After after) {
  auto seeds = sim::Seeds::from_env(200);
  for (const std::uint64_t seed : seeds) {
    sim::Config cfg;
    cfg.seed = seed;
    cfg.channel_bytes = 600;  // small: forces retry
    Pair p(cfg);
    const auto& c = p.a->layout().columns(0, 0);
    const std::size_t data_len = 4 * p.a->layout().slot_stride(0);
    std::uint64_t version = 0;
    std::string failure;
    std::uint64_t seen = 0;
    p.net.set_actor(1, [&] {
      if (version < kVersions) {
        ++version;
        for (std::size_t k = 0; k < data_len; k += 8)
          std::memcpy(p.a->at(c.slots + k), &version, 8);
        queue(p, c, version);
      }
      p.a->flush();
      return version < kVersions || p.a->has_pending();
    });
    p.net.set_actor(2, [&] {
      seen = observe(p, c, seen, failure);
      return false;
    });
    p.net.run_until([&] { return seen == kVersions; }, 10s);
    INFO("replay: " << sim::replay_command(seed, Catch::getResultCapture().getCurrentTestName()));
    REQUIRE(failure.empty());
    REQUIRE(seen == kVersions);
    after(p);
  }
}

// The last version b's copy of the four data slots shows.
std::uint64_t data_version(const Pair& p, const sst::SubgroupColumns& c) {
  std::uint64_t v = 0;
  std::memcpy(&v, p.b->at(c.slots + 4 * p.b->layout().slot_stride(0) - 8), 8);
  return v;
}
}  // namespace

TEST_CASE("sst: a guard never lands before the data queued ahead of it, over seeds",
          "[sst][push]") {
  stream_versions(
      [](Pair& p, const sst::SubgroupColumns& c, std::uint64_t version) {
        p.a->store<std::uint64_t>(c.guard, version);
        p.a->push_data(1, c.slots, 4 * p.a->layout().slot_stride(0));
        p.a->push_guard(1, c.guard, 8);
        p.a->push_guard(1, c.guard, 8);  // a repeat costs nothing
      },
      [](const Pair& p, const sst::SubgroupColumns& c, std::uint64_t seen, std::string& failure) {
        const auto g = p.b->load<std::uint64_t>(c.guard);
        if (g < seen) failure = "guard went backwards";
        const auto v = data_version(p, c);
        if (v < g) failure = "guard " + std::to_string(g) + " over data " + std::to_string(v);
        return g;
      },
      [](const Pair& p) { CHECK(p.a->stats().guard_writes <= p.a->stats().data_writes); });
}

TEST_CASE("sst: a status goes out ahead of the data queued before it, over seeds", "[sst][push]") {
  // push_status (received/delivered counters) must not wait behind a bulk copy: whenever
  // the peer sees the data of step v, it already sees a status of at least v.
  stream_versions(
      [](Pair& p, const sst::SubgroupColumns& c, std::uint64_t version) {
        p.a->store<std::uint64_t>(c.counters, version);
        p.a->push_data(1, c.slots, 4 * p.a->layout().slot_stride(0));
        p.a->push_status(1, c.counters, 8);
      },
      [](const Pair& p, const sst::SubgroupColumns& c, std::uint64_t, std::string& failure) {
        const auto v = data_version(p, c);
        const auto status = p.b->load<std::uint64_t>(c.counters);
        if (status < v)
          failure = "data " + std::to_string(v) + " before status " + std::to_string(status);
        return v;
      },
      [](const Pair&) {});
}

TEST_CASE("sst: a silent peer is suspected by heartbeat timeout and reported once",
          "[sst][suspicion]") {
  sim::Config cfg;
  cfg.seed = 5;
  Pair p(cfg, 1ms);
  std::vector<sst::SuspicionReport> reports;
  p.a->set_suspicion_handler([&](const sst::SuspicionReport& r) { reports.push_back(r); });
  sst::Predicates pa, pb;
  sst::PredicateLoop la(*p.a, pa), lb(*p.b, pb);
  bool b_alive = true;
  p.net.set_actor(1, [&] {
    (void)la.run_once();
    return true;  // keep ticking
  });
  p.net.set_actor(2, [&] {
    if (b_alive) (void)lb.run_once();
    return b_alive;
  });
  p.net.run_until([&] { return p.net.now() > 20ms; }, 30ms);
  CHECK(reports.empty());  // heartbeats flow both ways
  CHECK(p.b->heartbeat(0) > 5);
  b_alive = false;  // node 2 stops heartbeating but its link stays up
  p.net.run_until([&] { return !reports.empty(); }, 60ms);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].node == 2);
  CHECK(reports[0].reason == st::SuspicionReason::heartbeat_timeout);
  CHECK(p.a->suspected(1));
  // The suspicion is an SST column too: our row says we suspect rank 1.
  CHECK(p.a->load_set(p.a->layout().control(0) + offsetof(sst::ControlRow, suspected)) ==
        sst::MemberSet::of(1));
}

// A member joining with the view (Member::joining) holds nobody: the others push nothing to
// it while their transport still connects to it, send it their whole row once it connected,
// and suspect it, naming why, if it never does.
namespace {
// Node 2 joins with the view; 1 ms heartbeats.
Pair joining_pair(std::uint64_t seed) {
  sim::Config c;
  c.seed = seed;
  return Pair(c, 1ms, true);
}
}  // namespace

TEST_CASE("sst: a joiner is sent nothing until it connected, then the whole row",
          "[sst][joining]") {
  Pair p = joining_pair(11);
  CHECK(p.a->connecting(1));
  p.a->push_guard(1, p.a->layout().control(0), 8);
  CHECK_FALSE(p.a->has_pending());  // dropped: the row goes whole once it connected
  bool connected = false;
  p.a->set_connected_handler([&](std::size_t rank) { connected = rank == 1; });
  sst::Predicates pa, pb;
  sst::PredicateLoop la(*p.a, pa), lb(*p.b, pb);
  p.net.set_actor(1, [&] {
    (void)la.run_once();
    return true;
  });
  p.net.run_until([&] { return p.net.now() > 2ms; }, 3ms);
  REQUIRE(p.b->connect(10ms) == st::Status::ok);
  p.net.set_actor(2, [&] {
    (void)lb.run_once();
    return true;
  });
  p.net.run_until([&] { return connected && p.b->heartbeat(0) > 0; }, 20ms);
  CHECK(connected);
  CHECK_FALSE(p.a->connecting(1));
  CHECK(p.b->heartbeat(0) > 0);  // node 1's row reached it
  CHECK_FALSE(p.a->suspected(1));
}

TEST_CASE("sst: a joiner that never connects is suspected, and the report says so",
          "[sst][joining]") {
  Pair p = joining_pair(12);
  std::vector<sst::SuspicionReport> reports;
  p.a->set_suspicion_handler([&](const sst::SuspicionReport& r) { reports.push_back(r); });
  sst::Predicates pa;
  sst::PredicateLoop la(*p.a, pa);
  p.net.set_actor(1, [&] {
    (void)la.run_once();
    return reports.empty();
  });
  p.net.run_until([&] { return !reports.empty(); }, 50ms);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].node == 2);
  CHECK(reports[0].reason == st::SuspicionReason::connect_timeout);
  INFO(reports[0].detail);
  CHECK(reports[0].detail.find("node 2 joined view 1 but did not connect within") !=
        std::string::npos);
}

TEST_CASE("sst: a transport suspicion (crash) is surfaced to the layer above", "[sst][suspicion]") {
  sim::Config cfg;
  cfg.seed = 9;
  Pair p(cfg);
  std::vector<sst::SuspicionReport> reports;
  p.a->set_suspicion_handler([&](const sst::SuspicionReport& r) { reports.push_back(r); });
  p.net.set_actor(1, [&] { return p.a->poll_events(); });
  p.net.crash(2);
  p.net.run_until([&] { return !reports.empty(); }, 50ms);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].reason == st::SuspicionReason::crashed);
  // No pushes to a suspected peer.
  p.a->push_guard(1, p.a->layout().control(0), 8);
  CHECK_FALSE(p.a->has_pending());
}

TEST_CASE("sst: the predicate thread sleeps when idle", "[sst][idle]") {
  sim::Config cfg;
  Pair p(cfg);
  // A real thread over the simulator's transport: wait() never blocks there, so this only
  // checks that an idle loop takes the sleep path (the futex itself is the transport's).
  sst::Predicates pa;
  sst::PredicateLoop la(*p.a, pa);
  la.start();
  std::this_thread::sleep_for(30ms);
  la.stop();
  CHECK(la.stats().sleeps > 0);
  CHECK(la.stats().busy_steps == 0);
}

TEST_CASE("adaptive spin: full while work comes back within it, short once it stops, probing",
          "[sst][spin]") {
  sst::AdaptiveSpin s(1ms);
  CHECK(s.next() == 1ms);
  s.hit();
  CHECK(s.next() == 1ms);
  // One miss is noise; two in a row mean the traffic's gaps are longer than the spin.
  s.miss();
  CHECK(s.next() == 1ms);
  s.miss();
  CHECK(s.short_now());
  std::uint32_t full = 0;
  for (std::uint32_t i = 0; i < 2 * sst::AdaptiveSpin::kProbeEvery; ++i) {
    const auto d = s.next();
    CHECK((d == sst::AdaptiveSpin::kShort || d == 1ms));
    if (d == 1ms) ++full;
    s.miss();
  }
  CHECK(full == 2);  // a probe every kProbeEvery spins
  // A spin that catches work (a probe's, or a short one's) brings the full spin back.
  s.hit();
  CHECK_FALSE(s.short_now());
  CHECK(s.next() == 1ms);
  // Never longer than the knob: with a spin of 0 it stays 0.
  sst::AdaptiveSpin zero(0ns);
  zero.miss();
  zero.miss();
  CHECK(zero.next() == 0ns);
}

TEST_CASE("sst: data queued for a peer that takes nothing stays bounded, then arrives whole",
          "[sst][push]") {
  // A listener stopped over tcp: the transport refuses (retry) while the peer's channel is
  // full (here the network does not run). Pushes of the same ring go on meanwhile; the queue
  // merges them instead of growing.
  sim::Config cfg;
  cfg.seed = 5;
  cfg.channel_bytes = 600;
  Pair p(cfg);
  const auto& c = p.a->layout().columns(0, 0);
  const std::size_t stride = p.a->layout().slot_stride(0);
  std::size_t most = 0;
  for (std::uint64_t version = 1; version <= 10'000; ++version) {
    const std::size_t slot = version % 4;  // a ring of four, written round and round
    std::memcpy(p.a->at(c.slots + slot * stride), &version, 8);
    p.a->push_data(1, c.slots + slot * stride, 8);
    p.a->store<std::uint64_t>(c.guard, version);
    p.a->push_guard(1, c.guard, 8);
    p.a->flush();
    most = std::max(most, p.a->queued(1));  // the network does not run meanwhile
  }
  CHECK(p.a->stats().retries > 0);  // the peer's channel was full: the queue was used
  CHECK(most <= 5);                 // four slots and a guard, however many pushes
  // It runs again: the last of each slot arrives, and the guard after them.
  REQUIRE(p.net.run_until(
      [&] {
        p.a->flush();
        return !p.a->has_pending() && p.b->load<std::uint64_t>(c.guard) == 10'000;
      },
      p.net.now() + 5s));
  for (std::uint64_t slot = 0; slot < 4; ++slot) {
    std::uint64_t v = 0;
    std::memcpy(&v, p.b->at(c.slots + slot * stride), 8);
    CHECK(v % 4 == slot);
    CHECK(v > 10'000 - 4);
  }
}

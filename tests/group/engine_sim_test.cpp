// The view engine on its own in the simulator: a view installed while a loan is out (the
// loan's bytes go out in the new view, nothing dangles), messages larger than a slot (by
// RDMC, in their place in the order), and DCPS streams that go on across an installed view.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <spindle/domain_status.hpp>
#include <spindle/policy/Consistency.hpp>

#include "avionics.hpp"
#include "group/engine.hpp"
#include "group/sim_runtime.hpp"
#include "rdmc/rdmc.hpp"
#include "sim_stack.hpp"
#include "smc/smc.hpp"
#include "sst/sst.hpp"

namespace sim = spindle::transport::sim;
namespace group = spindle::group;
using namespace std::chrono_literals;

namespace {

// Records what the engine delivers and which views it installs; lays out `channels`.
struct Recorder final : group::EngineClient {
  Recorder() = default;
  explicit Recorder(std::vector<group::ChannelDemand> c) : channels(std::move(c)) {}
  std::vector<group::ChannelDemand> channels = demand();
  std::vector<std::string> messages;
  std::vector<std::uint64_t> views;
  std::uint64_t lost = 0;  // Message::lost_before, summed
  // Runs at the start of each upcall, before the batch is read (what lands meanwhile).
  std::function<void(std::span<const spindle::smc::Message>)> during;
  void on_deliver(std::span<const spindle::smc::Message> batch) override {
    if (during) during(batch);
    for (const auto& m : batch) {
      messages.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
      lost += m.lost_before;
    }
  }
  void on_member_lost(group::NodeId, bool, const std::string& why) override {
    lost_why.push_back(why);
  }
  std::vector<std::string> lost_why;
  void on_view(const group::View& v) override { views.push_back(v.epoch); }
  void on_halt(const std::string& why) override { halted = why; }
  std::string halted;
  std::uint64_t generation = 0;
  group::Demand layout_demand() override { return {generation, channels}; }
  // Both members write and read topic 7 (atomic).
  static std::vector<group::ChannelDemand> demand() {
    return {group::ChannelDemand{{7, group::Ordering::atomic}, "T", {1, 2}, {1, 2}, {0}, 0, 0}};
  }
};

struct Pair {
  sim::Network net{sim::Config{}};
  group::View view;
  std::vector<std::unique_ptr<group::Engine>> engines;
  Recorder rec[2];

  // `max_sample`: the writers' sample bound (group::ChannelDemand::max_sample); 0: none.
  // `rdmc_buffer`: the domain's engine.rdmc_buffer_size.
  explicit Pair(std::uint64_t max_sample = 0, std::uint64_t rdmc_buffer = 1u << 20) {
    std::vector<group::Member> members;
    for (group::NodeId id : {1u, 2u}) {
      net.add_node(id);
      members.push_back(group::Member{id, "sim", 0});
    }
    group::LayoutSettings s;
    s.window_size = 4;
    s.knobs.heartbeat_interval = 0ms;
    s.knobs.rdmc_block_size = 4096;
    s.knobs.rdmc_buffer_size = rdmc_buffer;
    view = group::first_view(members, s);
    for (auto& r : rec) {
      for (auto& c : r.channels)
        c.max_sample = max_sample;
    }
    view.subgroups = group::layout(members, rec[0].channels, s);
    for (group::NodeId id : {1u, 2u}) {
      engines.push_back(std::make_unique<group::Engine>(
          view, net.node(id), std::make_unique<group::SimRuntime>(net, id), 0ms, 0, s));
      engines.back()->start(rec[id - 1]);
    }
  }
  ~Pair() {
    for (auto& e : engines)
      e->stop();
  }
  void publish(group::Engine& e, const std::string& text) {
    auto loan = e.reserve(channel, text.size(), e.runtime().now() + 1s);
    std::memcpy(loan.data, text.data(), text.size());
    e.commit(loan, text.size(), e.runtime().now() + 1s);
  }
  bool delivered(std::size_t n) {
    return net.run_until([&] { return rec[0].messages.size() >= n && rec[1].messages.size() >= n; },
                         net.now() + 1s);
  }
  group::Channel channel{7, group::Ordering::atomic};
};

// `size` bytes that differ from message to message (`tag`) and along the message.
std::string pattern(int tag, std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    s[i] = static_cast<char>('a' + (static_cast<std::size_t>(tag) * 7 + i * 13 + i / 4096) % 26);
  return s;
}

}  // namespace

TEST_CASE("engine: messages larger than a slot go by RDMC and keep their place in the order",
          "[engine][rdmc]") {
  Pair p;
  std::vector<std::string> mine[2];
  for (int i = 0; i < 24; ++i) {
    const std::size_t size =
        std::vector<std::size_t>{20, 5000, 300'000, 1000, 70'000}[static_cast<std::size_t>(i % 5)];
    auto& e = *p.engines[static_cast<std::size_t>(i % 3 == 0)];
    mine[i % 3 == 0].push_back(pattern(i, size));
    p.publish(e, mine[i % 3 == 0].back());
  }
  REQUIRE(p.delivered(24));
  CHECK(p.rec[0].messages.size() == 24);
  CHECK(p.rec[0].messages == p.rec[1].messages);
  // Each writer's messages, small and large, in the order it wrote them.
  for (std::size_t w = 0; w < 2; ++w) {
    std::vector<std::string> got;
    for (const auto& m : p.rec[0].messages)
      if (std::find(mine[w].begin(), mine[w].end(), m) != mine[w].end()) got.push_back(m);
    CHECK(got == mine[w]);
  }
  CHECK(p.engines[0]->stats().large_sent + p.engines[1]->stats().large_sent == 14);
}

namespace {

// Node 1 writes topic 7 (atomic), node 2 reads it reliably, node 3 reads it best-effort only
// (a listener: docs/dev/smc.md, "Listeners") or reliably (`third_passive` false).
std::vector<group::ChannelDemand> trio_demand(bool third_passive) {
  group::ChannelDemand holds{{7, group::Ordering::atomic}, "T", {1}, {2}, {0}, 0, 0};
  group::ChannelDemand third{{7, group::Ordering::atomic}, "T", {}, {3}, {0}, 0, 0};
  third.passive = third_passive;
  return {holds, third};
}

// Node 3 a listener, or (`passive` false) a reliable reader whose member a lag of
// `lag_bound` leaves behind.
struct Trio {
  sim::Network net{sim::Config{}};
  group::View view;
  std::vector<std::unique_ptr<group::Engine>> engines;
  Recorder rec[3];

  explicit Trio(bool passive = true, std::chrono::milliseconds lag_bound = 0ms)
      : rec{Recorder(trio_demand(passive)), Recorder(trio_demand(passive)),
            Recorder(trio_demand(passive))} {
    std::vector<group::Member> members;
    for (group::NodeId id : {1u, 2u, 3u}) {
      net.add_node(id);
      members.push_back(group::Member{id, "sim", 0});
    }
    group::LayoutSettings s;
    s.window_size = 8;
    s.lag_bound = lag_bound;
    // Heartbeats run the lag checks (and the catch-up's request for the next view).
    s.knobs.heartbeat_interval = lag_bound.count() > 0 ? 10ms : 0ms;
    s.knobs.rdmc_block_size = 4096;
    s.knobs.rdmc_buffer_size = 1u << 20;
    view = group::first_view(members, s);
    view.subgroups = group::layout(members, trio_demand(passive), s);
    for (group::NodeId id : {1u, 2u, 3u}) {
      engines.push_back(std::make_unique<group::Engine>(
          view, net.node(id), std::make_unique<group::SimRuntime>(net, id), 0ms, 0, s));
      engines.back()->start(rec[id - 1]);
    }
  }
  ~Trio() {
    for (auto& e : engines)
      e->stop();
  }
  group::Channel channel{7, group::Ordering::atomic};
  std::vector<std::string> sent;
  std::size_t tag = 0;

  // Node 1 writes `n` messages larger than a slot, each write waiting `patience` at most.
  void publish(std::size_t n, std::chrono::milliseconds patience = 200ms) {
    auto& writer = *engines[0];
    for (std::size_t i = 0; i < n; ++i) {
      ++tag;
      sent.push_back(pattern(static_cast<int>(tag), 3000 + (tag % 5) * 1000));
      auto loan = writer.reserve(channel, sent.back().size(), writer.runtime().now() + patience);
      std::memcpy(loan.data, sent.back().data(), sent.back().size());
      writer.commit(loan, sent.back().size(), writer.runtime().now() + patience);
    }
  }
  bool delivered(std::size_t at, std::size_t n) {
    return net.run_until([&] { return rec[at].messages.size() >= n; }, net.now() + 2s);
  }
  bool took_last(std::size_t at, std::chrono::nanoseconds within) {
    return net.run_until(
        [&] { return !rec[at].messages.empty() && rec[at].messages.back() == sent.back(); },
        net.now() + within);
  }
  // Node 3's whole process stops (deliveries and RDMC), or runs again.
  void stop_third() {
    engines[2]->stall_deliveries();
    engines[2]->stall_transfers();
  }
  void resume_third() {
    engines[2]->resume_deliveries();
    engines[2]->resume_transfers();
  }
  // What node `at` took: whole messages, in the writer's order, ending with its last five.
  void check_taken_in_order(std::size_t at) {
    const auto& heard = rec[at].messages;
    std::size_t i = 0;
    for (const auto& m : heard) {
      while (i < sent.size() && sent[i] != m)
        ++i;
      REQUIRE(i < sent.size());
    }
    REQUIRE(heard.size() >= 5);
    CHECK(std::equal(sent.end() - 5, sent.end(), heard.end() - 5));
  }
};

}  // namespace

// A best-effort reader's member listens, and a listener holds nobody for messages larger
// than a slot either: its copies go by a group of two, only while that group has room. Once
// it stood still, the writer and the reliable reader went on at full pace (no write waits
// 200 ms); once it runs again it takes later messages whole, in order, and counts every one
// it missed.
TEST_CASE("engine: a listener stopped holds no one for messages larger than a slot",
          "[engine][rdmc][listener]") {
  Trio t;
  const auto sg = group::subgroup_of(t.view, t.channel);
  REQUIRE(sg);
  REQUIRE(t.view.subgroups[*sg].listeners == std::vector<group::NodeId>{3});
  t.publish(10);
  REQUIRE(t.delivered(1, 10));
  REQUIRE(t.delivered(2, 10));
  CHECK(t.rec[2].messages == t.sent);  // running, the listener takes everything
  CHECK(t.rec[2].lost == 0);

  t.stop_third();
  const auto before = t.net.now();
  t.publish(60);
  REQUIRE(t.delivered(1, 70));
  CHECK(t.rec[1].messages == t.sent);
  CHECK(t.net.now() - before < 1s);
  CHECK(t.rec[2].messages.size() == 10);

  // Running again, it first lets go of the copies it will not deliver (their descriptors
  // were overwritten), then takes the stream whole again.
  t.resume_third();
  bool caught_up = false;
  for (int i = 0; i < 100 && !caught_up; ++i) {
    t.publish(1);
    caught_up = t.took_last(2, 2ms);
  }
  REQUIRE(caught_up);
  t.publish(5);
  REQUIRE(t.delivered(1, t.sent.size()));
  REQUIRE(t.took_last(2, 1s));
  // What it took: whole messages, in the writer's order; what it missed: counted, once.
  t.check_taken_in_order(2);
  const auto& heard = t.rec[2].messages;
  INFO("heard " << heard.size() << " lost " << t.rec[2].lost);
  CHECK(heard.size() + t.rec[2].lost == t.sent.size());
  CHECK(heard.size() < t.sent.size());
  CHECK(t.rec[0].halted.empty());
  CHECK(t.rec[2].halted.empty());
}

// A reliable reader's member that a lag may leave behind takes messages larger than a slot by
// a copy of its own too, and holds the writer only until the lag bound leaves it behind.
// Its process stopped as a whole (RDMC included), the writer and the other reader wait one
// lag bound and go on; running again, it catches up in the total order (skipping and
// counting what it had no copy of), holds again from the next view, and takes everything
// written from then on.
TEST_CASE("engine: a member left behind holds no one for messages larger than a slot",
          "[engine][rdmc][lag]") {
  Trio t(false, 100ms);
  const auto sg = group::subgroup_of(t.view, t.channel);
  REQUIRE(sg);
  REQUIRE(t.view.subgroups[*sg].demotable == std::vector<group::NodeId>{2, 3});
  REQUIRE(t.view.subgroups[*sg].listeners.empty());
  t.publish(10);
  REQUIRE(t.delivered(1, 10));
  REQUIRE(t.delivered(2, 10));
  CHECK(t.rec[2].messages == t.sent);

  t.stop_third();
  const auto before = t.net.now();
  t.publish(60, 1s);
  REQUIRE(t.delivered(1, 70));
  CHECK(t.rec[1].messages == t.sent);
  CHECK(t.net.now() - before < 600ms);  // a lag bound, then the pace of the others
  CHECK(t.rec[2].messages.size() == 10);
  CHECK(t.rec[2].views.empty());  // left behind, not removed: no view change

  t.resume_third();
  REQUIRE(t.net.run_until([&] { return !t.rec[2].views.empty(); }, t.net.now() + 2s));
  t.publish(5, 1s);
  REQUIRE(t.delivered(1, t.sent.size()));
  REQUIRE(t.took_last(2, 1s));
  t.check_taken_in_order(2);
  CHECK(t.rec[2].messages.size() < t.sent.size());
  CHECK(t.rec[2].messages.size() + t.rec[2].lost <= t.sent.size());
  CHECK(t.rec[1].messages == t.sent);
  CHECK(t.rec[0].halted.empty());
  CHECK(t.rec[2].halted.empty());
}

// What a member that a lag may leave behind hands the layers above is a copy, taken before
// the upcall and checked whole (issue 60). A sender that leaves it behind stops waiting for
// it and rewrites its slots; over tcp those writes land from the receiving thread while the
// protocol thread still reads the batch, before the member has seen that it was left behind.
// Here they land during the upcall: node 3's copy of node 1's ring is rewritten, num_started
// raised first, as the sender's flush orders them. Before, node 3 delivered in place and its
// reader took the rewritten bytes (at a KEEP_LAST reader: an instance that went back).
TEST_CASE(
    "engine: a member a lag may leave behind never delivers bytes rewritten during its upcall",
    "[engine][lag]") {
  Trio t(false, 100ms);
  const auto sg = group::subgroup_of(t.view, t.channel);
  REQUIRE(sg);
  REQUIRE(t.view.subgroups[*sg].demotable == std::vector<group::NodeId>{2, 3});
  const spindle::sst::SstLayout layout(t.view);
  const auto& writer_columns = layout.columns(*t.view.rank_of(1), *sg);
  const std::uint64_t window = t.view.subgroups[*sg].window_size;
  const auto stride = layout.slot_stride(*sg);
  bool rewritten = false;
  t.rec[2].during = [&](std::span<const spindle::smc::Message> batch) {
    if (rewritten || batch.empty()) return;
    const auto region = t.net.node(3).local_region(spindle::sst::Sst::region_id(t.view.epoch));
    REQUIRE(region);
    std::byte* base = region->bytes.data();
    auto* guard = reinterpret_cast<spindle::sst::SenderGuardRow*>(base + writer_columns.guard);
    guard->num_started = batch.back().index + window + 1;
    std::memset(base + writer_columns.slots, '#', window * stride);
    rewritten = true;
  };
  std::vector<std::string> sent;
  auto& writer = *t.engines[0];
  for (int i = 0; i < 3; ++i) {
    sent.push_back(pattern(i, 40));
    auto loan = writer.reserve(t.channel, sent.back().size(), writer.runtime().now() + 1s);
    std::memcpy(loan.data, sent.back().data(), sent.back().size());
    writer.commit(loan, sent.back().size(), writer.runtime().now() + 1s);
  }
  REQUIRE(t.delivered(1, 3));
  REQUIRE(t.delivered(2, 3));
  REQUIRE(rewritten);
  CHECK(t.rec[1].messages == sent);
  CHECK(t.rec[2].messages == sent);
}

TEST_CASE(
    "engine: writers whose samples fit a slot cost no RDMC space, and a larger message is "
    "refused, saying why",
    "[engine][rdmc]") {
  Pair p(100);  // every sample of the writers' types fits the slot
  auto& e = *p.engines[0];
  CHECK(p.view.subgroups[1].large == 0);
  // No RDMC regions were made for the view: only the SST's.
  const auto rdmc_control = spindle::rdmc::Rdmc::control_region(p.view.epoch);
  CHECK_FALSE(p.net.node(1).local_region(rdmc_control));
  REQUIRE_THROWS_WITH(e.reserve(p.channel, 5000, e.runtime().now() + 1s),
                      Catch::Contains("5000 bytes does not fit a slot") &&
                          Catch::Contains("writers' types bound their samples to fit one"));
  p.publish(e, pattern(1, 90));
  REQUIRE(p.delivered(1));
  CHECK(p.rec[1].messages[0] == pattern(1, 90));
}

// A message larger than a slot that a view change sends again waits for RDMC space in the
// next view; a write after it must not take that space first: the carried message keeps its
// place in the order, so a later one holding the space would wait behind it for ever. Room
// for one message at a time here (1 MiB, messages of 600 KB).
TEST_CASE("engine: a large message sent again by a view change gets its space before later writes",
          "[engine][rdmc]") {
  Pair p;
  const auto first = pattern(1, 600'000);
  const auto second = pattern(2, 600'000);
  // Node 2 moves no RDMC transfer in view 1: the first message is still in flight when the
  // relayout ends the view, and goes again in view 2.
  p.engines[1]->stall_transfers();
  p.publish(*p.engines[0], first);
  p.net.run_until([] { return false; }, p.net.now() + 20ms);
  for (auto& r : p.rec)
    r.generation = 1;
  for (auto& e : p.engines)
    e->demand_changed();
  REQUIRE(p.net.run_until([&] { return p.engines[0]->view().epoch == 2; }, p.net.now() + 1s));
  p.publish(*p.engines[0], second);
  REQUIRE(p.delivered(2));
  for (auto& r : p.rec)
    CHECK(r.messages == std::vector<std::string>{first, second});
  CHECK(p.engines[0]->stats().resent >= 1);
}

TEST_CASE("engine: writers with a bound past the slot get room for 16 of them, and no more",
          "[engine][rdmc]") {
  Pair p(50'000);
  auto& e = *p.engines[1];
  CHECK(p.view.subgroups[1].large == 16 * 50'048);  // in whole 64-byte lines
  REQUIRE_THROWS_WITH(e.reserve(p.channel, 16 * 50'048 + 1, e.runtime().now() + 1s),
                      Catch::Contains("exceeds the largest subgroup") &&
                          Catch::Contains("800768 bytes (its RDMC space, sized for"));
  for (int i = 0; i < 20; ++i)
    p.publish(e, pattern(i, 50'000));
  REQUIRE(p.delivered(20));
  for (int i = 0; i < 20; ++i)
    CHECK(p.rec[0].messages[static_cast<std::size_t>(i)] == pattern(i, 50'000));
}

TEST_CASE("engine: a message past the RDMC buffer space is refused, naming the setting",
          "[engine][rdmc]") {
  Pair p;
  auto& e = *p.engines[0];
  CHECK(e.max_large_message() == (1u << 20));
  REQUIRE_THROWS_WITH(e.reserve(p.channel, (1u << 20) + 1, e.runtime().now() + 1s),
                      Catch::Contains("engine.rdmc_buffer_size") &&
                          Catch::Contains(std::to_string((1u << 20) + 1) + " bytes"));
  // The largest one goes.
  p.publish(e, pattern(1, 1u << 20));
  REQUIRE(p.delivered(1));
  CHECK(p.rec[1].messages[0] == pattern(1, 1u << 20));
}

// An unbounded type's writers start with room for 16 samples of 64 KiB; one that writes a
// larger sample asks for more (its DCPS record's room, here the demand's) and tells its
// engine (expect_room): the write waits for the view that lays the larger space out.
TEST_CASE("engine: an unbounded type's RDMC space grows, a view at a time, as its writers ask",
          "[engine][rdmc]") {
  Pair p(0, 8u << 20);
  auto& e = *p.engines[0];
  CHECK(p.view.subgroups[1].large == 16 * group::kUnboundedRoom);
  const std::string big = pattern(3, 3'000'000);
  // Nobody asked for it: refused at once, naming the space and what sized it.
  REQUIRE_THROWS_WITH(e.reserve(p.channel, big.size(), e.runtime().now() + 1s),
                      Catch::Contains("exceeds the largest subgroup") &&
                          Catch::Contains("1048576 bytes (its RDMC space, sized for"));
  const auto before = p.rec[0].views.size();
  e.expect_room(p.channel, 4u << 20);
  for (auto& r : p.rec)
    r.channels[0].room = 4u << 20;
  for (auto& x : p.engines)
    x->demand_changed();
  p.publish(e, big);
  p.publish(e, pattern(4, 100));
  REQUIRE(p.delivered(2));
  for (auto& r : p.rec) {
    CHECK(r.messages[0] == big);
    CHECK(r.messages[1] == pattern(4, 100));
  }
  CHECK(p.rec[0].views.size() == before + 1);  // one view change, which laid the space out
  const auto grown = p.engines[1]->view();
  CHECK(grown.subgroups[1].large == (8u << 20));
  // 16 of 4 MiB is past the domain's setting: that is the space, and past it a message is
  // refused, naming the setting.
  CHECK_THROWS_WITH(e.reserve(p.channel, (8u << 20) + 1, e.runtime().now() + 1s),
                    Catch::Contains("engine.rdmc_buffer_size"));
}

namespace {

// The header and bytes of the first slot of node `node`'s ring of `channel`, in its own row
// (what a faulty peer could rewrite before its protocol step pushes it).
std::pair<spindle::sst::SlotHeader*, std::byte*> own_first_slot(sim::Network& net,
                                                                const group::View& view,
                                                                group::Channel channel,
                                                                group::NodeId node) {
  const spindle::sst::SstLayout layout(view);
  const auto sg = group::subgroup_of(view, channel);
  const auto rank = view.rank_of(node);
  REQUIRE(sg);
  REQUIRE(rank);
  const auto region = net.node(node).local_region(spindle::sst::Sst::region_id(view.epoch));
  REQUIRE(region);
  const auto& c = layout.columns(*rank, *sg);
  return {reinterpret_cast<spindle::sst::SlotHeader*>(region->bytes.data() + c.headers),
          region->bytes.data() + c.slots};
}

// Node `node` (engine `e`) commits an ordinary 24-byte message of `channel`; before its
// protocol step pushes it, the slot is flagged as a large-message descriptor in the node's own
// row, as a faulty peer could. The bytes name no message anyone holds.
void forge_descriptor(sim::Network& net, const group::View& view, group::Engine& e,
                      group::Channel channel, group::NodeId node) {
  const std::string bogus(24, 'x');
  auto loan = e.reserve(channel, bogus.size(), e.runtime().now() + 1s);
  std::memcpy(loan.data, bogus.data(), bogus.size());
  e.commit(loan, bogus.size(), e.runtime().now() + 1s);
  auto* header = own_first_slot(net, view, channel, node).first;
  REQUIRE(header->size == bogus.size());
  header->flags = group::kLargeMessage;
}

}  // namespace

// Several small messages per slot (group/packed.hpp): messages written while the protocol has
// not run yet join the slot their member committed last; each is delivered on its own, in
// the order written, at the same place of the total order everywhere.
TEST_CASE("engine: small messages written in a row share a slot, each delivered on its own",
          "[engine][packed]") {
  Pair p;
  std::vector<std::string> mine[2];
  for (int i = 0; i < 40; ++i) {
    const auto k = static_cast<std::size_t>(i % 2);
    auto& e = *p.engines[k];
    mine[k].push_back(pattern(i, 10 + static_cast<std::size_t>(i)));
    const auto& text = mine[k].back();
    auto loan = e.append(p.channel, text.size(), e.runtime().now() + 1s);
    std::memcpy(loan.data, text.data(), text.size());
    e.commit(loan, text.size(), e.runtime().now() + 1s);
  }
  REQUIRE(p.delivered(40));
  CHECK(p.rec[0].messages == p.rec[1].messages);
  // Each member's twenty (under 1 KiB with their record headers) went in one slot.
  CHECK(p.engines[0]->stats().packed == 19);
  CHECK(p.engines[1]->stats().packed == 19);
  std::vector<std::string> seen[2];
  for (const auto& m : p.rec[0].messages)
    seen[std::find(mine[0].begin(), mine[0].end(), m) == mine[0].end()].push_back(m);
  CHECK(seen[0] == mine[0]);
  CHECK(seen[1] == mine[1]);
  // A message that does not fit beside them takes a slot of its own, and comes after them.
  const std::string big = pattern(99, 900);
  auto loan = p.engines[0]->append(p.channel, big.size(), p.engines[0]->runtime().now() + 1s);
  std::memcpy(loan.data, big.data(), big.size());
  p.engines[0]->commit(loan, big.size(), p.engines[0]->runtime().now() + 1s);
  REQUIRE(p.delivered(41));
  CHECK(p.rec[1].messages.back() == big);
}

// The records of a packed slot, read back; every way the bytes can be short is named.
TEST_CASE("engine: a packed slot's records, and what is wrong with a bad one", "[engine][packed]") {
  std::vector<std::byte> slot(40, std::byte{0});
  const auto put = [&](std::size_t at, std::uint32_t length) {
    std::memcpy(slot.data() + at, &length, sizeof length);
  };
  put(0, 3);   // record 0: 3 bytes at 8, the next at 16
  put(16, 0);  // record 1: empty, the next at 24
  put(24, 8);  // record 2: 8 bytes at 32, to the end
  std::vector<std::size_t> lengths;
  const auto collect = [&](std::span<const std::byte> r) { lengths.push_back(r.size()); };
  CHECK(group::for_records(slot, collect).empty());
  CHECK(lengths == std::vector<std::size_t>{3, 0, 8});
  lengths.clear();
  CHECK(group::for_records(std::span(slot).first(36), collect) ==
        "record 2 at byte 24 says 8 bytes, past the slot's 36");
  CHECK(group::for_records(std::span(slot).first(20), collect) ==
        "record 1 at byte 16 has no whole header (20 bytes in the slot)");
  CHECK(group::for_records(std::span<const std::byte>{}, collect) ==
        "first record is missing (the slot is empty)");
  CHECK(lengths == std::vector<std::size_t>{3, 0, 3});  // the records before each fault
}

// A packed slot is a peer's bytes: one whose record says more bytes than the slot holds is
// delivered no further, and its sender is suspected.
TEST_CASE("engine: a packed slot whose record overruns it gets its sender suspected",
          "[engine][packed]") {
  Pair p;
  auto& e = *p.engines[1];
  const std::string text = "one";
  auto loan = e.append(p.channel, text.size(), e.runtime().now() + 1s);
  std::memcpy(loan.data, text.data(), text.size());
  e.commit(loan, text.size(), e.runtime().now() + 1s);
  auto [header, bytes] = own_first_slot(p.net, p.view, p.channel, 2);
  REQUIRE((header->flags & group::kPacked) != 0);
  const std::uint32_t length = 5000;
  std::memcpy(bytes, &length, sizeof length);
  REQUIRE(p.net.run_until([&] { return !p.rec[0].halted.empty(); }, p.net.now() + 2s));
  CHECK(p.rec[0].messages.empty());
  CHECK_THAT(p.rec[0].halted, Catch::Contains("sent a packed slot") &&
                                  Catch::Contains("says 5000 bytes, past the slot's"));
}

TEST_CASE("engine: a descriptor for no message is dropped and its sender suspected",
          "[engine][rdmc]") {
  Pair p;
  // Node 2's descriptor names a message nobody holds.
  forge_descriptor(p.net, p.view, *p.engines[1], p.channel, 2);
  // Node 1 delivers nothing of it and suspects node 2 (a minority of two then: it halts,
  // saying why).
  REQUIRE(p.net.run_until([&] { return !p.rec[0].halted.empty(); }, p.net.now() + 2s));
  CHECK(p.rec[0].messages.empty());
  CHECK_THAT(p.rec[0].halted, Catch::Contains("large-message descriptor") &&
                                  Catch::Contains("for no message this member holds"));
}

// The same at a listener, which takes large messages by copies of its own: a descriptor that
// does not parse (the bytes are no descriptor of its sender's group) is dropped, and its
// sender suspected there too; the two others remove it and go on.
TEST_CASE("engine: a descriptor that does not parse at a listener gets its sender suspected",
          "[engine][rdmc][listener]") {
  Trio t;
  forge_descriptor(t.net, t.view, *t.engines[0], t.channel, 1);
  REQUIRE(t.net.run_until([&] { return !t.rec[1].lost_why.empty() && !t.rec[2].lost_why.empty(); },
                          t.net.now() + 3s));
  CHECK(t.rec[1].messages.empty());
  CHECK(t.rec[2].messages.empty());
  CHECK_THAT(t.rec[1].lost_why[0], Catch::Contains("suspected here: node 1 sent a large-message "
                                                   "descriptor") &&
                                       Catch::Contains("for no message this member holds"));
  CHECK_THAT(t.rec[2].lost_why[0], Catch::Contains("suspected here: node 1 sent a large-message "
                                                   "descriptor") &&
                                       Catch::Contains("that does not parse"));
  CHECK(t.rec[1].halted.empty());
  CHECK(t.rec[2].halted.empty());
}

TEST_CASE("engine: status() gives the view, each member's counters and the counts per topic",
          "[engine][status]") {
  Pair p;
  p.publish(*p.engines[0], "one");
  p.publish(*p.engines[0], "two");
  p.publish(*p.engines[1], "three");
  REQUIRE(p.delivered(3));
  // Both members' counters have reached both (the last pushes land after the deliveries).
  const auto settled = [&](const spindle::DomainStatus& s) {
    return s.subgroups.size() == 2 &&
           std::ranges::all_of(s.subgroups[1].members,
                               [](const auto& m) { return m.lag == std::uint64_t{0}; });
  };
  spindle::DomainStatus s;
  REQUIRE(p.net.run_until(
      [&] {
        s = {};
        p.engines[1]->status(s);
        return settled(s);
      },
      p.net.now() + 1s));
  CHECK(s.self == 2);
  CHECK(s.epoch == p.view.epoch);
  CHECK(s.leader == 1);
  REQUIRE(s.members.size() == 2);
  CHECK(s.members[0].leader);
  CHECK(s.members[1].self);
  const auto& sg = s.subgroups[1];
  CHECK(sg.topic_id == 7);
  CHECK(sg.atomic);
  CHECK(sg.self_member);
  CHECK(sg.senders == std::vector<std::uint32_t>{1, 2});
  CHECK(sg.sent == 3);
  for (const auto& m : sg.members) {
    CHECK(m.sender);
    CHECK_FALSE(m.listener);
    CHECK(m.received == m.delivered);
    CHECK(m.delivered >= std::int64_t{2});  // three messages, nulls between them
  }
  // Per topic: what this member delivered, and what each sent.
  const auto topic = [](const spindle::DomainStatus& d, std::uint64_t id) {
    for (const auto& t : d.topics)
      if (t.id == id) return t;
    FAIL("no topic " << id);
    return spindle::TopicStatus{};
  };
  const auto seven = topic(s, 7);
  CHECK(seven.delivered == 3);
  CHECK(seven.delivered_bytes == 3 + 3 + 5);
  CHECK(seven.sent == 1);
  CHECK(seven.sent_bytes == 5);
  spindle::DomainStatus first;
  p.engines[0]->status(first);
  CHECK(topic(first, 7).sent == 2);
  CHECK(topic(first, 7).sent_bytes == 6);
}

TEST_CASE("engine: a loan taken before a view change is published in the next view", "[engine]") {
  Pair p;
  p.publish(*p.engines[0], "before");
  REQUIRE(p.delivered(1));

  auto loan = p.engines[0]->reserve(p.channel, 5, p.engines[0]->runtime().now() + 1s);
  std::memcpy(loan.data, "loans", 5);
  group::View next = p.view;
  next.epoch = 2;
  for (auto& e : p.engines)
    e->install(next, 0ms);
  CHECK(p.engines[0]->view().epoch == 2);
  // The slot of view 1 is still valid memory: the loan holds its view.
  CHECK(std::memcmp(loan.data, "loans", 5) == 0);
  p.engines[0]->commit(loan, 5, p.engines[0]->runtime().now() + 1s);
  p.publish(*p.engines[1], "after");
  REQUIRE(p.delivered(3));
  for (auto& r : p.rec) {
    CHECK(r.views == std::vector<std::uint64_t>{2});
    CHECK(r.messages[0] == "before");
    // Both of view 2's messages, in the same order at both members.
    CHECK(std::vector<std::string>(r.messages.begin() + 1, r.messages.end()) ==
          std::vector<std::string>(p.rec[0].messages.begin() + 1, p.rec[0].messages.end()));
  }
  CHECK(p.engines[0]->stats().republished == 1);
  CHECK(p.engines[0]->stats().views == 2);
}

TEST_CASE(
    "engine: each view's region is released once nothing holds the view; a loan holds its own",
    "[engine]") {
  Pair p;
  const auto region = [](std::uint64_t epoch) { return spindle::sst::Sst::region_id(epoch); };
  auto& node = p.net.node(1);
  std::optional<group::Loan> loan =
      p.engines[0]->reserve(p.channel, 5, p.engines[0]->runtime().now() + 1s);
  std::memcpy(loan->data, "loans", 5);
  // Far more views than a transport keeps regions for (shm's table holds 256).
  group::View next = p.view;
  for (next.epoch = 2; next.epoch <= 300; ++next.epoch)
    for (auto& e : p.engines)
      e->install(next, 0ms);
  CHECK(node.local_region(region(300)));  // the current view's
  CHECK(node.local_region(region(1)));    // held by the loan
  CHECK(std::memcmp(loan->data, "loans", 5) == 0);
  for (std::uint64_t e = 2; e < 299; ++e) {
    INFO("view " << e);
    CHECK_FALSE(node.local_region(region(e)));
  }
  p.engines[0]->commit(*loan, 5, p.engines[0]->runtime().now() + 1s);
  loan.reset();
  REQUIRE(p.delivered(1));
  for (auto& e : p.engines)
    e->install(next, 0ms);  // view 301
  CHECK_FALSE(node.local_region(region(1)));
  CHECK_FALSE(node.local_region(region(299)));
}

TEST_CASE("engine: DCPS samples keep flowing across an installed view", "[engine]") {
  spindle::testing::SimStack stack(sim::Config{}, 3);
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::topic::Topic<Avionics::FlightState> t1(stack.participant(0), "T");
  dds::topic::Topic<Avionics::FlightState> t3(stack.participant(2), "T");
  dds::sub::DataReader<Avionics::FlightState> reader(dds::sub::Subscriber(stack.participant(2)), t3,
                                                     rq);
  dds::pub::DataWriter<Avionics::FlightState> writer(dds::pub::Publisher(stack.participant(0)), t1);
  REQUIRE(
      stack.run_until([&] { return writer.publication_matched_status().current_count() == 1; }));
  std::vector<std::uint64_t> got;
  auto write = [&](std::uint64_t seq) {
    Avionics::FlightState s;
    s.aircraft_id(1);
    s.timestamp_ns(seq);
    writer.write(s);
  };
  for (std::uint64_t i = 0; i < 10; ++i)
    write(i);
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(1));
  // A view installed from outside that lacks the topic's subgroup: the engine lays it out
  // again in the view after, and the writes wait for that one.
  group::View next = stack.view(0);
  next.subgroups = stack.first_view().subgroups;
  next.epoch += 1;
  stack.install(next);
  for (std::uint64_t i = 10; i < 20; ++i)
    write(i);
  REQUIRE(stack.run_until([&] {
    for (const auto& s : reader.take())
      if (s.info().valid()) got.push_back(s.data().timestamp_ns());
    return got.size() >= 20;
  }));
  std::vector<std::uint64_t> want(20);
  for (std::uint64_t i = 0; i < 20; ++i)
    want[i] = i;
  CHECK(got == want);
}

namespace {

// A writer and a keep-all reader of topic "T" on every participant of `stack`.
struct Streams {
  std::vector<dds::topic::Topic<Avionics::FlightState>> topics;
  std::vector<dds::sub::DataReader<Avionics::FlightState>> readers;
  std::vector<dds::pub::DataWriter<Avionics::FlightState>> writers;
  explicit Streams(spindle::testing::SimStack& stack) {
    dds::sub::qos::DataReaderQos rq;
    rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    dds::pub::qos::DataWriterQos wq;
    wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(0, 100000000));
    for (std::size_t i = 0; i < stack.size(); ++i) {
      topics.emplace_back(stack.participant(i), "T");
      readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), topics.back(), rq);
      writers.emplace_back(dds::pub::Publisher(stack.participant(i)), topics.back(), wq);
    }
    const auto n = static_cast<std::int32_t>(stack.size());
    REQUIRE(stack.run_until([&] {
      for (auto& w : writers)
        if (w.publication_matched_status().current_count() != n) return false;
      return true;
    }));
  }
  static Avionics::FlightState sample(std::uint64_t seq) {
    Avionics::FlightState s;
    s.aircraft_id(1);
    s.timestamp_ns(seq);
    return s;
  }
};

// The timestamps of what `reader` takes first (empty if nothing comes).
std::vector<std::uint64_t> first_taken(spindle::testing::SimStack& stack,
                                       dds::sub::DataReader<Avionics::FlightState>& reader) {
  std::vector<std::uint64_t> got;
  (void)stack.run_until([&] {
    for (const auto& x : reader.take())
      if (x.info().valid()) got.push_back(x.data().timestamp_ns());
    return !got.empty();
  });
  return got;
}

// Member `stalled` of three stops taking part in view changes, its heartbeat going on; a
// participant joins all the same, the view goes on without the stalled one, and the
// stream reaches the others. Returns why the stalled one stopped (empty: it did not).
std::string join_past_a_stalled_member(std::size_t stalled) {
  spindle::testing::SimStack stack(sim::Config{}, 3);
  Streams s(stack);
  stack.stall(stalled);
  std::string why;
  const auto joiner = stack.join(why, std::chrono::seconds(10));
  INFO(why);
  REQUIRE(joiner.has_value());
  const std::size_t a = stalled == 0 ? 1 : 0;
  const std::size_t b = 3 - stalled - a;
  REQUIRE(stack.run_until([&] {
    const auto v = stack.view(a);
    return !v.rank_of(static_cast<group::NodeId>(stalled + 1)) && v.rank_of(4) &&
           v.members.size() == 3;
  }));
  CHECK(stack.halted(a).empty());
  CHECK(stack.halted(b).empty());
  s.writers[a].write(Streams::sample(11));
  CHECK(first_taken(stack, s.readers[b]) == std::vector<std::uint64_t>{11});
  return stack.halted(stalled);
}

}  // namespace

TEST_CASE("engine: a member that loses half of its view stops, and its writes say why",
          "[engine]") {
  spindle::testing::SimStack stack(sim::Config{}, 2);
  Streams s(stack);
  stack.crash(1);
  // Member 1 suspects member 2: one of two is half the view, so it must not go on alone.
  REQUIRE(stack.run_until([&] { return !stack.halted(0).empty(); }));
  CHECK_THAT(stack.halted(0), Catch::Contains("domain 0: node 1 stopped") &&
                                  Catch::Contains("lost contact with 1 of the 2 members") &&
                                  Catch::Contains("no split brain"));
  REQUIRE_THROWS_MATCHES(s.writers[0].write(Streams::sample(1)), dds::core::PreconditionNotMetError,
                         Catch::Matchers::Message(stack.halted(0)));
}

// Certain death (group/liveness.hpp): members on one host see a crashed member's process
// gone, which is no partition, so the survivor of a two-member domain goes on alone.
TEST_CASE("engine: on one host, the survivor of a crash goes on without a majority",
          "[engine][liveness]") {
  spindle::testing::SimStack stack(sim::Config{}, 2);
  stack.one_host();
  Streams s(stack);
  stack.crash(1);
  REQUIRE(stack.run_until([&] { return stack.view(0).members.size() == 1; }));
  CHECK(stack.halted(0).empty());
  s.writers[0].write(Streams::sample(1));
  CHECK(first_taken(stack, s.readers[0]) == std::vector<std::uint64_t>{1});
  // A new reader joins the survivor and receives what is written after it matched.
  std::string why;
  const auto joiner = stack.join(why);
  REQUIRE(joiner.has_value());
  dds::topic::Topic<Avionics::FlightState> topic(stack.participant(*joiner), "T");
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Avionics::FlightState> late(dds::sub::Subscriber(stack.participant(*joiner)),
                                                   topic, rq);
  REQUIRE(stack.run_until(
      [&] { return s.writers[0].publication_matched_status().current_count() == 2; }));
  s.writers[0].write(Streams::sample(2));
  CHECK(first_taken(stack, late) == std::vector<std::uint64_t>{2});
}

// Issue 62, item 1, in the simulator: the SST's rows in place (as over shared memory), so a
// reader reads each sample in the writer's slot where the writer stored it. The writer's
// ring of 100 slots wraps three times; a member joins with 20 samples in flight at the 150th
// (half way round the ring), and the view change carries them. Every reader takes every
// sample written while it matched, whole (its value is its number) and in order.
TEST_CASE("engine: rows in place, a member joins mid-ring; every reader takes each sample whole",
          "[engine][inplace]") {
  sim::Config cfg;
  cfg.rows_in_place = true;
  cfg.seed = 62;
  spindle::testing::SimStack stack(cfg, 3);
  Streams s(stack);
  std::vector<std::vector<std::uint64_t>> got(3);
  std::vector<std::uint64_t> late_got;
  std::optional<dds::sub::DataReader<Avionics::FlightState>> late;
  const auto take = [&] {
    for (std::size_t r = 0; r < 3; ++r)
      for (const auto& x : s.readers[r].take())
        if (x.info().valid()) got[r].push_back(x.data().timestamp_ns());
    if (late)
      for (const auto& x : late->take())
        if (x.info().valid()) late_got.push_back(x.data().timestamp_ns());
  };
  std::uint64_t next = 1;
  const auto write_20 = [&] {
    for (int i = 0; i < 20; ++i, ++next)
      s.writers[0].write(Streams::sample(next));
  };
  const auto all_took = [&](std::uint64_t last) {
    return std::all_of(got.begin(), got.end(),
                       [&](const auto& g) { return !g.empty() && g.back() == last; });
  };
  while (next <= 140) {
    write_20();
    REQUIRE(stack.run_until([&] {
      take();
      return all_took(next - 1);
    }));
  }
  write_20();  // 141..160, in flight as the joiner comes
  std::string why;
  const auto joiner = stack.join(why);
  INFO(why);
  REQUIRE(joiner.has_value());
  dds::topic::Topic<Avionics::FlightState> topic(stack.participant(*joiner), "T");
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  late.emplace(dds::sub::Subscriber(stack.participant(*joiner)), topic, rq);
  REQUIRE(stack.run_until([&] {
    take();
    return s.writers[0].publication_matched_status().current_count() == 4;
  }));
  const std::uint64_t first_late = next;
  while (next <= 300) {
    write_20();
    REQUIRE(stack.run_until([&] {
      take();
      return all_took(next - 1) && !late_got.empty() && late_got.back() == next - 1;
    }));
  }
  std::vector<std::uint64_t> want(300);
  std::iota(want.begin(), want.end(), 1);
  for (std::size_t r = 0; r < 3; ++r) {
    INFO("reader " << r);
    CHECK(got[r] == want);
  }
  // The joiner's reader: everything written once it matched, each whole, in order (what it
  // took before, from the in-flight samples, comes first and in order too).
  REQUIRE(late_got.size() >= 300 - first_late + 1);
  const std::vector<std::uint64_t> tail(
      late_got.end() - static_cast<std::ptrdiff_t>(301 - first_late), late_got.end());
  std::vector<std::uint64_t> want_tail(301 - first_late);
  std::iota(want_tail.begin(), want_tail.end(), first_late);
  CHECK(tail == want_tail);
  CHECK(std::is_sorted(late_got.begin(), late_got.end()));
  CHECK(stack.net().in_place_writes() > 0);  // the rows were read in place
}

TEST_CASE("engine: on one host, a domain survives the crash of all but one member",
          "[engine][liveness]") {
  spindle::testing::SimStack stack(sim::Config{}, 4);
  stack.one_host();
  Streams s(stack);
  stack.crash(0);  // the leader too
  stack.crash(1);
  stack.crash(3);
  REQUIRE(stack.run_until([&] { return stack.view(2).members.size() == 1; }));
  CHECK(stack.halted(2).empty());
  s.writers[2].write(Streams::sample(9));
  CHECK(first_taken(stack, s.readers[2]) == std::vector<std::uint64_t>{9});
}

// A member cut off while its process lives is a partition even on one host: the side
// without a majority halts (after the short wait for a process exit), the majority goes on.
TEST_CASE("engine: on one host, a member cut off alive still needs a majority",
          "[engine][liveness]") {
  spindle::testing::SimStack stack(sim::Config{}, 3);
  stack.one_host();
  Streams s(stack);
  stack.isolate(2);
  REQUIRE(stack.run_until([&] { return !stack.halted(2).empty(); }));
  CHECK_THAT(stack.halted(2), Catch::Contains("lost contact with 2 of the 3 members") &&
                                  Catch::Contains("its process alive on this host"));
  REQUIRE(stack.run_until([&] { return stack.view(0).members.size() == 2; }));
  CHECK(stack.halted(0).empty());
  CHECK(stack.halted(1).empty());
}

// The witness (docs/membership.md): a third member with no endpoints, on a host of its
// own, lets either of two members survive the other's crash, and lets only the side that
// keeps it go on through a partition.
TEST_CASE("engine: with a witness, two members on two hosts survive a crash or a cut",
          "[engine][witness]") {
  for (const bool cut : {false, true}) {
    INFO((cut ? "member 2 cut off" : "member 2 crashed"));
    spindle::testing::SimStack stack(sim::Config{}, 3);  // member 3: the witness
    dds::sub::qos::DataReaderQos rq;
    rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    std::vector<dds::topic::Topic<Avionics::FlightState>> topics;
    std::vector<dds::sub::DataReader<Avionics::FlightState>> readers;
    std::vector<dds::pub::DataWriter<Avionics::FlightState>> writers;
    for (std::size_t i = 0; i < 2; ++i) {
      topics.emplace_back(stack.participant(i), "T");
      readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), topics.back(), rq);
      writers.emplace_back(dds::pub::Publisher(stack.participant(i)), topics.back());
    }
    REQUIRE(stack.run_until(
        [&] { return writers[0].publication_matched_status().current_count() == 2; }));
    if (cut) {
      stack.isolate(1);
    } else {
      stack.crash(1);
    }
    REQUIRE(stack.run_until([&] { return stack.view(0).members.size() == 2; }));
    CHECK(stack.halted(0).empty());
    CHECK(stack.halted(2).empty());
    if (cut) {
      REQUIRE(stack.run_until([&] { return !stack.halted(1).empty(); }));
      CHECK_THAT(stack.halted(1), Catch::Contains("lost contact with 2 of the 3 members"));
    }
    writers[0].write(Streams::sample(5));
    std::vector<std::uint64_t> got;
    REQUIRE(stack.run_until([&] {
      for (const auto& x : readers[0].take())
        if (x.info().valid()) got.push_back(x.data().timestamp_ns());
      return !got.empty();
    }));
    CHECK(got == std::vector<std::uint64_t>{5});
  }
}

// Rejoining (docs/membership.md): a member paused past the suspicion timeout is removed;
// when it resumes it finds out, halts, and gets back in by itself as a new member. Its
// reader takes the writer's stream again and counts what went by meanwhile as lost.
TEST_CASE("engine: a member removed while paused rejoins by itself and counts what it missed",
          "[engine][rejoin]") {
  sim::Config config;
  spindle::testing::SimStack stack(config, 3);
  stack.rejoin_on_halt();
  Streams s(stack);
  std::uint64_t written = 0;
  std::vector<std::uint64_t> got;
  auto take = [&] {
    for (const auto& x : s.readers[2].take())
      if (x.info().valid()) got.push_back(x.data().timestamp_ns());
  };
  for (; written < 10; ++written)
    s.writers[0].write(Streams::sample(written));
  REQUIRE(stack.run_until([&] {
    take();
    return got.size() == 10;
  }));
  // Paused well past the timeout: the other two remove it and go on writing.
  stack.net().pause(3, config.suspicion_timeout * 20);
  REQUIRE(stack.run_until([&] { return stack.view(0).members.size() == 2; }));
  for (; written < 30; ++written)
    s.writers[0].write(Streams::sample(written));
  // It resumes, halts, and rejoins: a view of three again, with it as a new member.
  REQUIRE(stack.run_until([&] { return stack.engine_stats(2).rejoins == 1; }));
  REQUIRE(stack.run_until([&] {
    return stack.halted(2).empty() && stack.view(0).members.size() == 3 &&
           s.writers[0].publication_matched_status().current_count() == 3;
  }));
  for (; written < 40; ++written)
    s.writers[0].write(Streams::sample(written));
  REQUIRE(stack.run_until([&] {
    take();
    return !got.empty() && got.back() == written - 1;
  }));
  // What it took is the stream with a gap, and the gap is what SAMPLE_LOST counts.
  for (std::size_t i = 1; i < got.size(); ++i)
    CHECK(got[i] > got[i - 1]);
  const auto lost = s.readers[2].sample_lost_status().total_count();
  CHECK(lost > 0);
  CHECK(got.size() + static_cast<std::size_t>(lost) == written);
  // Its own writer is matched again everywhere.
  REQUIRE(stack.run_until(
      [&] { return s.writers[2].publication_matched_status().current_count() == 3; }));
}

// A participant halted on its way back in (a merge, a partition that heals: docs/membership.md)
// is still the application's: entities made meanwhile are made, and announced once it is back,
// as a DDS user expects of a participant that was never closed.
TEST_CASE("engine: entities made while a member is halted for a rejoin match once it is back",
          "[engine][rejoin]") {
  sim::Config config;
  spindle::testing::SimStack stack(config, 3);
  stack.rejoin_on_halt();
  Streams s(stack);
  stack.net().pause(3, config.suspicion_timeout * 20);
  REQUIRE(stack.run_until([&] { return stack.view(0).members.size() == 2; }));
  REQUIRE(stack.run_until([&] { return !stack.halted(2).empty(); }));
  // Halted now, its rejoin not yet run (the scheduler does not run during these calls).
  REQUIRE_FALSE(stack.halted(2).empty());
  dds::topic::Topic<Avionics::FlightState> late(stack.participant(2), "Late");
  dds::pub::DataWriter<Avionics::FlightState> writer(dds::pub::Publisher(stack.participant(2)),
                                                     late);
  dds::sub::DataReader<Avionics::FlightState> reader(
      dds::sub::Subscriber(stack.participant(0)),
      dds::topic::Topic<Avionics::FlightState>(stack.participant(0), "Late"),
      spindle::testing::keep_all());
  REQUIRE(stack.run_until([&] {
    return stack.halted(2).empty() && writer.publication_matched_status().current_count() == 1;
  }));
  writer.write(Streams::sample(7));
  std::vector<std::uint64_t> got;
  REQUIRE(stack.run_until([&] {
    for (const auto& x : reader.take())
      if (x.info().valid()) got.push_back(x.data().timestamp_ns());
    return !got.empty();
  }));
  CHECK(got == std::vector<std::uint64_t>{7});
}

// Your own samples (docs/dcps.md): where another process also reads the topic, write()
// returns before the sample has its place in the order, and wait_for_acknowledgments() is
// what a program that reads its own samples waits on: once it returns, every member — the
// writer's own included — delivered what was written.
TEST_CASE("engine: after wait_for_acknowledgments a reader of the writer's own member has it",
          "[engine][own]") {
  spindle::testing::SimStack stack(sim::Config{}, 2);
  Streams s(stack);  // a writer and a reader at each member
  for (std::uint64_t i = 1; i <= 20; ++i) {
    s.writers[0].write(Streams::sample(i));
    s.writers[0].wait_for_acknowledgments(dds::core::Duration::from_secs(5));
    std::vector<std::uint64_t> got;
    for (const auto& x : s.readers[0].take())  // no scheduler step in between
      if (x.info().valid()) got.push_back(x.data().timestamp_ns());
    REQUIRE(got == std::vector<std::uint64_t>{i});
  }
}

// Progress (membership.hpp): a member whose heartbeat goes on but which takes no part in a
// view change is suspected after the suspicion timeout, so the change — a legitimate join
// here — completes without it, and the stream goes on.
TEST_CASE("engine: a member that takes no part in a view change is suspected, and the join ends",
          "[engine][progress]") {
  (void)join_past_a_stalled_member(2);
}

TEST_CASE("engine: a member whose deliveries stop while others' go on is suspected",
          "[engine][progress]") {
  // Its heartbeat goes on, so only its counters tell: the ring waits for it, and every
  // writer of the topic stops until it is removed.
  spindle::testing::SimStack stack(sim::Config{}, 3);
  Streams s(stack);
  s.writers[0].write(Streams::sample(1));
  stack.stall_deliveries(2);
  const auto stalled_at = stack.net().now();
  for (std::uint64_t i = 2; i <= 10; ++i)  // within the ring: the writer does not block
    s.writers[0].write(Streams::sample(i));
  REQUIRE(stack.run_until([&] { return !stack.view(0).rank_of(3); }));
  const auto evicted_after = stack.net().now() - stalled_at;
  for (std::uint64_t i = 11; i <= 40; ++i)
    s.writers[0].write(Streams::sample(i));
  CHECK(stack.halted(0).empty());
  CHECK(stack.halted(1).empty());
  // Within the suspicion timeout and a heartbeat interval of the stall, and a view change.
  CHECK(evicted_after < std::chrono::seconds(3));
  std::vector<std::uint64_t> got;
  REQUIRE(stack.run_until([&] {
    for (const auto& x : s.readers[1].take())
      if (x.info().valid()) got.push_back(x.data().timestamp_ns());
    return got.size() >= 40;
  }));
  CHECK(got.back() == 40);
}

TEST_CASE("engine: joiners that never connect count for nothing, and the stream goes on",
          "[engine][joiners]") {
  // Three requests welcomed and never followed by a connection: as many would-be members as
  // real ones. Before joiners counted in the majority, every member stopped ("lost contact
  // with 3 of the 6 members of its view").
  spindle::testing::SimStack stack(sim::Config{}, 3);
  Streams s(stack);
  REQUIRE(stack.join_and_vanish(3) == 3);
  REQUIRE(stack.run_until([&] {
    const auto v = stack.view(0);
    return v.members.size() == 3 && !v.rank_of(4) && !v.rank_of(5) && !v.rank_of(6);
  }));
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(stack.halted(i).empty());
  // The stream goes on, and a real joiner still gets in.
  s.writers[0].write(Streams::sample(21));
  CHECK(first_taken(stack, s.readers[2]) == std::vector<std::uint64_t>{21});
  std::string why;
  const auto joiner = stack.join(why);
  INFO(why);
  REQUIRE(joiner.has_value());
  // Once it took part in a view change, it votes: the view that confirms it is installed.
  REQUIRE(stack.run_until([&] {
    const auto v = stack.view(0);
    const auto r = v.rank_of(static_cast<group::NodeId>(*joiner + 1));
    return r && !v.members[*r].joining;
  }));
}

TEST_CASE("engine: a leader that takes no step while a join waits steps down, and the join ends",
          "[engine][progress]") {
  // The others see no view change under way, so their progress check has nothing to judge
  // it by: the leader itself notices that its protocol took no step with a join waiting.
  CHECK_THAT(join_past_a_stalled_member(0),
             Catch::Contains("stepped down so that another member leads"));
}

TEST_CASE("engine: members that leave are removed without counting as failures", "[engine]") {
  spindle::testing::SimStack stack(sim::Config{}, 3);
  Streams s(stack);
  stack.leave(2);
  // Two of three stay: a view change removes member 3, and they go on.
  s.writers[0].write(Streams::sample(1));
  REQUIRE(stack.run_until(
      [&] { return s.writers[1].publication_matched_status().current_count() == 2; }));
  stack.leave(1);
  // Member 1 alone: a member that left is no failure, so it keeps going.
  s.writers[0].write(Streams::sample(2));
  std::vector<std::uint64_t> got;
  REQUIRE(stack.run_until([&] {
    for (const auto& x : s.readers[0].take())
      if (x.info().valid()) got.push_back(x.data().timestamp_ns());
    return got.size() >= 2;
  }));
  CHECK(got == std::vector<std::uint64_t>{1, 2});
  CHECK(stack.halted(0).empty());
}

TEST_CASE("engine: the leader leaves; the other member goes on alone", "[engine]") {
  spindle::testing::SimStack stack(sim::Config{}, 2);
  Streams s(stack);
  stack.leave(0);
  s.writers[1].write(Streams::sample(7));
  CHECK(first_taken(stack, s.readers[1]) == std::vector<std::uint64_t>{7});
  CHECK(stack.halted(1).empty());
}

// Rows belong to their owners (docs/membership.md): member 4 writes "member 2 suspects
// member 3" into every other member's copy of member 2's SST row, member 2's own included. Each
// refuses the write (foreign_write) and suspects the writer; the view that follows removes member 4
// only, and member 3 — the innocent target — keeps writing and reading. Over many seeds.
TEST_CASE(
    "engine: a write into another member's row evicts the writer, not the row's owner "
    "nor the member it accuses",
    "[engine][rows]") {
  auto seeds = sim::Seeds::from_env(200);
  for (const std::uint64_t seed : seeds) {
    INFO(sim::replay_command(seed, "[rows]"));
    sim::Config config;
    config.seed = seed;
    spindle::testing::SimStack stack(config, 4);
    Streams s(stack);
    std::vector<std::uint64_t> got;  // at member 3
    auto take = [&] {
      for (const auto& x : s.readers[2].take())
        if (x.info().valid()) got.push_back(x.data().timestamp_ns());
    };
    for (std::uint64_t i = 0; i < 5; ++i)
      s.writers[0].write(Streams::sample(i));
    REQUIRE(stack.run_until([&] {
      take();
      return got.size() >= 5;
    }));
    REQUIRE(stack.forge_suspicion(3, 1, 2) == 3);
    const auto without_forger = [&](std::size_t i) {
      const auto v = stack.view(i);
      return v.members.size() == 3 && !v.rank_of(4) && v.rank_of(1) && v.rank_of(2) && v.rank_of(3);
    };
    REQUIRE(stack.run_until(
        [&] { return without_forger(0) && without_forger(1) && without_forger(2); }));
    for (std::size_t i = 0; i < 3; ++i) {
      INFO("member " << i + 1);
      CHECK(stack.halted(i).empty());
    }
    // The stream goes on, the accused member's writes too.
    for (std::uint64_t i = 5; i < 10; ++i)
      s.writers[0].write(Streams::sample(i));
    s.writers[2].write(Streams::sample(100));
    REQUIRE(stack.run_until([&] {
      take();
      return got.size() >= 11;
    }));
    std::sort(got.begin(), got.end());
    std::vector<std::uint64_t> want{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100};
    CHECK(got == want);
  }
}

// The issue's case: three members, one of them the forger. Member 1 writes "member 2
// suspects member 3" into members 2's and 3's copies of member 2's row. Both refuse it and
// suspect member 1; members 2 and 3 — two of three — go on without it.
TEST_CASE(
    "engine: of three members, the one that forges a row is removed and the other two "
    "go on",
    "[engine][rows]") {
  auto seeds = sim::Seeds::from_env(200);
  for (const std::uint64_t seed : seeds) {
    INFO(sim::replay_command(seed, "[rows]"));
    sim::Config config;
    config.seed = seed;
    spindle::testing::SimStack stack(config, 3);
    Streams s(stack);
    std::vector<std::uint64_t> got;
    s.writers[0].write(Streams::sample(1));
    REQUIRE(stack.run_until([&] {
      for (const auto& x : s.readers[2].take())
        if (x.info().valid()) got.push_back(x.data().timestamp_ns());
      return !got.empty();
    }));
    got.clear();
    REQUIRE(stack.forge_suspicion(0, 1, 2) == 2);
    const auto two_and_three = [&](std::size_t i) {
      const auto v = stack.view(i);
      return v.members.size() == 2 && v.rank_of(2) && v.rank_of(3);
    };
    const bool removed = stack.run_until([&] { return two_and_three(1) && two_and_three(2); });
    for (std::size_t i = 0; i < 3; ++i) {
      const auto v = stack.view(i);
      std::ostringstream line;
      line << "member " << i + 1 << ": view " << v.epoch << " {";
      for (const auto& m : v.members)
        line << ' ' << m.id;
      line << " } halted: " << stack.halted(i);
      UNSCOPED_INFO(line.str());
    }
    REQUIRE(removed);
    CHECK(stack.halted(1).empty());
    CHECK(stack.halted(2).empty());
    s.writers[2].write(Streams::sample(7));
    REQUIRE(stack.run_until([&] {
      for (const auto& x : s.readers[1].take())
        if (x.info().valid()) got.push_back(x.data().timestamp_ns());
      return std::find(got.begin(), got.end(), 7) != got.end();
    }));
    CHECK(got.back() == 7);
  }
}

namespace {

// A writer on member 1 and readers on members 2 and 3 of `topic` in a stack of three, matched:
// take(r) adds what reader r takes to got[r], write_to(n) writes samples up to number n.
struct LagStream {
  std::vector<dds::topic::Topic<Avionics::FlightState>> topics;
  dds::pub::DataWriter<Avionics::FlightState> writer;
  std::vector<dds::sub::DataReader<Avionics::FlightState>> readers;
  std::vector<std::uint64_t> got[2];
  std::uint64_t written = 0;

  LagStream(spindle::testing::SimStack& stack, const std::string& name,
            const dds::pub::qos::DataWriterQos& wq, const dds::sub::qos::DataReaderQos& rq)
      : topics(make_topics(stack, name)),
        writer(dds::pub::Publisher(stack.participant(0)), topics[0], wq) {
    for (std::size_t i = 1; i < 3; ++i)
      readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), topics[i], rq);
    REQUIRE(
        stack.run_until([&] { return writer.publication_matched_status().current_count() == 2; }));
  }
  void take(std::size_t r) {
    for (const auto& x : readers[r].take())
      if (x.info().valid()) got[r].push_back(x.data().timestamp_ns());
  }
  void write_to(std::uint64_t n) {
    for (; written < n; ++written)
      writer.write(Streams::sample(written + 1));
  }
  // Writes up to n and takes until both readers have the last: the second reader (the one
  // that stopped) took an increasing part of the stream, and SAMPLE_LOST counts the rest.
  // `took_all`: the stopped reader may have taken all of it (a retained topic's refresh can
  // reach it before the live stream does; which comes first depends on the schedule).
  void finish(spindle::testing::SimStack& stack, std::uint64_t n, bool took_all = false) {
    write_to(n);
    REQUIRE(stack.run_until([&] {
      take(0);
      take(1);
      return got[0].size() == n && !got[1].empty() && got[1].back() == n;
    }));
    for (std::size_t i = 1; i < got[1].size(); ++i)
      CHECK(got[1][i] > got[1][i - 1]);
    const auto lost = readers[1].sample_lost_status().total_count();
    if (!took_all) CHECK(lost > 0);
    CHECK(got[1].size() + static_cast<std::size_t>(lost) == n);
  }
  static std::vector<dds::topic::Topic<Avionics::FlightState>> make_topics(
      spindle::testing::SimStack& stack, const std::string& name) {
    std::vector<dds::topic::Topic<Avionics::FlightState>> out;
    for (std::size_t i = 0; i < 3; ++i)
      out.emplace_back(stack.participant(i), name);
    return out;
  }
};

}  // namespace

// Lagging members (docs/dev/smc.md): a member with a RELIABLE KEEP_LAST reader of an atomic topic
// whose deliveries stop is left behind after the lag bound, not suspected: the writer and
// the other reader go on. Once it runs again it catches up in the topic's order, its reader
// counting what went by as SAMPLE_LOST, and the next view (which it asks for) has it holding
// again: nothing more is lost. The same for a KEEP_ALL reader of a KEEP_LAST writer (the
// writer, KEEP_LAST, waits for no reader past the bound; docs/dcps.md).
TEST_CASE("engine: a lagging member is left behind, catches up, and holds again from the next view",
          "[engine][lag]") {
  const bool unordered = GENERATE(false, true);
  const bool keep_all = GENERATE(false, true);
  INFO((unordered ? "unordered" : "atomic") << (keep_all ? ", KEEP_ALL readers" : ""));
  const auto consistency = unordered ? spindle::policy::Consistency::Unordered()
                                     : spindle::policy::Consistency::Atomic();
  spindle::testing::SimStack stack(sim::Config{}, 3);
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << consistency;
  if (keep_all) {
    rq << dds::core::policy::History::KeepAll();
  } else {
    rq << dds::core::policy::History::KeepLast(1000);
  }
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(0, 100000000)) << consistency;
  LagStream s(stack, "Lag", wq, rq);
  s.write_to(10);
  REQUIRE(stack.run_until([&] {
    s.take(0);
    s.take(1);
    return s.got[0].size() == 10 && s.got[1].size() == 10;
  }));
  const auto before = stack.view(0);
  const auto relayouts = stack.engine_stats(2).relayouts;
  // Member 3 stops delivering: ten rings' worth goes by without it (window 16).
  stack.stall_deliveries(2);
  s.write_to(160);
  REQUIRE(stack.run_until([&] {
    s.take(0);
    return s.got[0].size() == 160;
  }));
  CHECK(stack.view(0).epoch == before.epoch);  // left behind, not removed
  CHECK(stack.view(0).members.size() == 3);
  CHECK(stack.halted(2).empty());
  CHECK(s.writer.publication_matched_status().current_count() == 2);
  // It runs again: it catches up, asks for the next view, and holds in it.
  stack.resume_deliveries(2);
  REQUIRE(stack.run_until([&] { return stack.view(0).epoch > before.epoch; }));
  CHECK(stack.view(0).members.size() == 3);
  CHECK(stack.engine_stats(2).relayouts == relayouts + 1);
  // Reader 2 took an increasing subsequence, ending in everything written after the view
  // change; what it did not take is what SAMPLE_LOST counts.
  s.finish(stack, 200);
  CHECK(std::vector<std::uint64_t>(s.got[1].end() - 40, s.got[1].end()) ==
        std::vector<std::uint64_t>(s.got[0].end() - 40, s.got[0].end()));
  CHECK(s.readers[0].sample_lost_status().total_count() == 0);
}

// A lagging member of a retained topic (consistency VOLATILE or LOGGED: every member keeps
// its history for late readers) is left behind as for an atomic one: the writer and the other
// reader go on. Its history then misses messages; once it runs again it asks for it, and after
// the next view boundary the first member that has it whole sends it (docs/storage.md,
// "Refresh"). Its history is then the others', and a late reader on it takes what a late
// reader elsewhere takes. On the old rule (retained subgroups held by every member) the stopped
// member held the writer until its writes timed out.
TEST_CASE("engine: a lagging member of a retained topic is left behind and gets its history again",
          "[engine][lag][refresh]") {
  const bool logged = GENERATE(false, true);
  INFO((logged ? "logged" : "volatile"));
  const auto consistency =
      logged ? spindle::policy::Consistency::Logged() : spindle::policy::Consistency::Volatile();
  spindle::testing::SimStack stack(sim::Config{}, 3);
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << consistency
     << dds::core::policy::History::KeepLast(1000);
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(0, 100000000)) << consistency
     << dds::core::policy::History::KeepLast(1000)
     << dds::core::policy::DurabilityService(
            dds::core::Duration::zero(), dds::core::policy::HistoryKind::KEEP_LAST, 1000,
            dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED);
  LagStream s(stack, "Kept", wq, rq);
  s.write_to(10);
  REQUIRE(stack.run_until([&] {
    s.take(0);
    s.take(1);
    return s.got[0].size() == 10 && s.got[1].size() == 10;
  }));
  const auto before = stack.view(0);
  // Member 3 stops delivering: ten rings' worth goes by without it.
  stack.stall_deliveries(2);
  s.write_to(160);
  REQUIRE(stack.run_until([&] {
    s.take(0);
    return s.got[0].size() == 160;
  }));
  CHECK(stack.view(0).epoch == before.epoch);  // left behind, not removed
  CHECK(stack.halted(2).empty());
  CHECK(stack.history_whole(2));  // it does not know yet
  // It runs again: it catches up, holds from the next view, finds its history has a hole,
  // and takes it again after the boundary that follows its request.
  stack.resume_deliveries(2);
  REQUIRE(stack.run_until([&] { return stack.refreshes(2) == 1 && stack.history_whole(2); }));
  CHECK(stack.view(0).members.size() == 3);
  CHECK(stack.refreshes(0) == 0);
  CHECK(stack.refreshes(1) == 0);
  // Its reader took an increasing part of the stream, the rest counted as SAMPLE_LOST (or,
  // as the schedule falls, all of it: docs/dev/status.md, 2026-12-05) ...
  s.finish(stack, 200, true);
  // ... but its history is whole: the same as the others', all 200.
  REQUIRE(stack.run_until([&] {
    for (std::size_t i = 0; i < 3; ++i)
      if (stack.retained(i, "Kept").size() != 200) return false;
    return true;
  }));
  const auto kept = stack.retained(0, "Kept");
  CHECK(kept.size() == 200);
  CHECK(stack.retained(1, "Kept") == kept);
  CHECK(stack.retained(2, "Kept") == kept);
  // A late reader on member 3 takes all of it, as one on member 2 does.
  std::vector<std::uint64_t> late[2];
  std::vector<dds::sub::DataReader<Avionics::FlightState>> late_readers;
  for (std::size_t i = 1; i < 3; ++i)
    late_readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), s.topics[i], rq);
  REQUIRE(stack.run_until([&] {
    for (std::size_t r = 0; r < 2; ++r)
      for (const auto& x : late_readers[r].take())
        if (x.info().valid()) late[r].push_back(x.data().timestamp_ns());
    return late[0].size() >= 200 && late[1].size() >= 200;
  }));
  CHECK(late[1] == late[0]);
  CHECK(late[1].size() == 200);
  CHECK(late[1].front() == 1);
}

// Repair (docs/dcps.md, "Repair"): a member whose RELIABLE KEEP_LAST reader was left behind
// while a KEEP_LAST 1 writer updated many instances gets the writer's latest change of every
// instance once it runs again, with nothing more written: read() there shows what read() shows
// at a reader that never stopped, and no instance ever goes back to an older value. Without
// the repair, the instances the writer updated only while it was stopped stay stale there.
TEST_CASE("engine: a reliable reader left behind gets the latest sample of every instance",
          "[engine][lag][repair]") {
  const bool unordered = GENERATE(false, true);
  INFO((unordered ? "unordered" : "atomic"));
  const auto consistency = unordered ? spindle::policy::Consistency::Unordered()
                                     : spindle::policy::Consistency::Atomic();
  // Slots of 256 bytes take one sample each (two would not fit): the ring holds 16 changes.
  spindle::testing::SimStack stack(sim::Config{}, 3, 16, 256);
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << consistency
     << dds::core::policy::History::KeepLast(1);
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(0, 100000000)) << consistency
     << dds::core::policy::History::KeepLast(1);
  LagStream s(stack, "Repair", wq, rq);
  constexpr std::uint32_t kInstances = 40;
  auto write_round = [&](std::uint64_t value) {
    for (std::uint32_t id = 1; id <= kInstances; ++id) {
      Avionics::FlightState x;
      x.aircraft_id(id);
      x.timestamp_ns(value);
      s.writer.write(x);
    }
  };
  // What read() shows, per instance; every value it ever showed must only grow.
  std::map<std::uint32_t, std::uint64_t> shown[2];
  bool went_back = false;
  auto look = [&](std::size_t r) {
    for (const auto& x : s.readers[r].read()) {
      if (!x.info().valid()) continue;
      auto& v = shown[r][x.data().aircraft_id()];
      went_back = went_back || x.data().timestamp_ns() < v;
      v = x.data().timestamp_ns();
    }
  };
  auto all_at = [&](std::size_t r, std::uint64_t value) {
    look(r);
    return shown[r].size() == kInstances &&
           std::all_of(shown[r].begin(), shown[r].end(),
                       [&](const auto& kv) { return kv.second == value; });
  };
  write_round(1);
  REQUIRE(stack.run_until([&] { return all_at(0, 1) && all_at(1, 1); }));
  const auto before = stack.view(0);
  // Member 3 stops delivering while four rounds (ten rings of 16) go by: its ring keeps only
  // the last 16 changes, of the last 16 instances.
  stack.stall_deliveries(2);
  for (std::uint64_t value = 2; value <= 5; ++value)
    write_round(value);
  REQUIRE(stack.run_until([&] { return all_at(0, 5); }));
  CHECK(stack.view(0).epoch == before.epoch);  // left behind, not removed
  // It runs again; nothing more is written.
  stack.resume_deliveries(2);
  REQUIRE(stack.run_until([&] { return stack.view(0).epoch > before.epoch; }));
  const bool whole = stack.run_until([&] { return all_at(1, 5); });
  std::ostringstream seen;
  for (const auto& [id, v] : shown[1])
    seen << ' ' << id << '=' << v;
  INFO("member 3 shows" << seen.str());
  CHECK(whole);
  CHECK_FALSE(went_back);
  CHECK(stack.repairs(2) == 1);
  CHECK(stack.repairs(1) == 0);
  CHECK(s.readers[1].sample_lost_status().total_count() > 0);
  CHECK(s.readers[0].sample_lost_status().total_count() == 0);
  // The stream goes on from there, and a repaired instance takes its next change.
  write_round(6);
  CHECK(stack.run_until([&] { return all_at(0, 6) && all_at(1, 6); }));
  CHECK_FALSE(went_back);
}

namespace {

// One seed of the lagging-members scenario (the test below): what it adds to the counts of
// seeds where the stopped reader was lapped, and of samples it counted lost.
void lag_seed(std::uint64_t seed, std::uint64_t& left_behind, std::uint64_t& lost_total) {
  INFO("seed " << seed << " (SPINDLE_SIM_SEED=" << seed << ")");
  sim::Rng rng(seed * 2654435761ULL + 17);
  sim::Config config;
  config.seed = seed;
  config.max_latency = std::chrono::microseconds(rng.uniform(2, 200));
  config.spike_per_million = static_cast<std::uint32_t>(rng.uniform(0, 50'000));
  config.spike_latency = std::chrono::microseconds(rng.uniform(10, 1000));
  const std::size_t writers_n = rng.chance(500'000) ? 2 : 1;
  const std::size_t readers_n = rng.chance(500'000) ? 3 : 2;
  const bool unordered = rng.chance(300'000);
  // One seed in four sends every sample by RDMC (a slot too small for it): the readers'
  // members take them by copies (docs/dev/rdmc.md, "Copies"), and the stopped one stops its
  // transfers too, as a stopped process does. Not drawn from `rng`: the other seeds keep
  // their scenarios (92 and 523 below among them).
  const bool large = seed % 4 == 1;
  INFO((unordered ? "unordered" : "atomic") << ", " << writers_n << " writers, " << readers_n
                                            << " readers" << (large ? ", by RDMC" : ""));
  const auto consistency = unordered ? spindle::policy::Consistency::Unordered()
                                     : spindle::policy::Consistency::Atomic();
  spindle::testing::SimStack stack(config, static_cast<std::uint32_t>(writers_n + readers_n), 16,
                                   large ? 32 : 1024);
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepLast(100000)
     << consistency;
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(1, 0)) << consistency;
  std::vector<dds::topic::Topic<Avionics::FlightState>> topics;
  for (std::size_t i = 0; i < stack.size(); ++i)
    topics.emplace_back(stack.participant(i), "LagSeeds");
  std::vector<dds::pub::DataWriter<Avionics::FlightState>> writers;
  for (std::size_t i = 0; i < writers_n; ++i)
    writers.emplace_back(dds::pub::Publisher(stack.participant(i)), topics[i], wq);
  std::vector<dds::sub::DataReader<Avionics::FlightState>> readers;
  for (std::size_t i = 0; i < readers_n; ++i)
    readers.emplace_back(dds::sub::Subscriber(stack.participant(writers_n + i)),
                         topics[writers_n + i], rq);
  REQUIRE(stack.run_until([&] {
    for (auto& w : writers)
      if (w.publication_matched_status().current_count() != static_cast<std::int32_t>(readers_n))
        return false;
    return true;
  }));
  std::vector<std::vector<std::uint64_t>> got(readers_n);
  auto take_all = [&] {
    for (std::size_t r = 0; r < readers_n; ++r)
      for (const auto& x : readers[r].take())
        if (x.info().valid()) got[r].push_back(x.data().timestamp_ns());
  };
  // The stretches (in samples written) while reader `slow` stalls; none in one seed in five.
  const std::size_t slow = static_cast<std::size_t>(rng.uniform(0, readers_n - 1));
  const std::uint64_t per_writer = 120;
  const std::uint64_t total = per_writer * writers_n;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stalls;
  if (!rng.chance(200'000)) {
    const auto a = rng.uniform(0, total / 2);
    stalls.emplace_back(a, a + rng.uniform(1, total / 2));
    if (rng.chance(300'000) && stalls.back().second + 2 < total) {
      const auto b = rng.uniform(stalls.back().second + 1, total - 1);
      stalls.emplace_back(b, std::min(total, b + rng.uniform(1, total / 3)));
    }
  }
  std::uint64_t written = 0;
  bool stalled = false;
  std::uint64_t relayouts_seen = stack.engine_stats(writers_n + slow).relayouts;
  for (std::uint64_t k = 0; k < per_writer; ++k) {
    for (std::size_t w = 0; w < writers_n; ++w, ++written) {
      for (const auto& [from, to] : stalls) {
        if (written == from && !stalled) {
          stack.stall_deliveries(writers_n + slow, large);
          stalled = true;
        } else if (written == to && stalled) {
          stack.resume_deliveries(writers_n + slow, large);
          stalled = false;
          // Back in before it may stop again: caught up, its view change done.
          const auto before = relayouts_seen;
          (void)stack.run_until(
              [&] { return stack.engine_stats(writers_n + slow).relayouts > before; }, 2s);
          relayouts_seen = stack.engine_stats(writers_n + slow).relayouts;
        }
      }
      writers[w].write(Streams::sample(w * 1'000'000 + k + 1));
    }
    (void)stack.run_until([] { return false; }, std::chrono::microseconds(200));
    take_all();
  }
  if (stalled) stack.resume_deliveries(writers_n + slow, large);
  // The readers that never stopped end with the last sample of every writer; the stopped one,
  // once it is back, with the instance's latest (the last of the total order, atomic; of some
  // writer, unordered): what the stream no longer brings it, a repair does (docs/dcps.md,
  // "Repair"), and a repaired change goes only where it is the latest of the instance.
  const bool stopped = !stalls.empty();
  REQUIRE(stack.run_until(
      [&] {
        take_all();
        for (std::size_t r = 0; r < readers_n; ++r) {
          std::size_t ends = 0;
          for (auto t : got[r])
            if (t % 1'000'000 == per_writer) ++ends;
          if (r == slow && stopped) {
            if (ends == 0) return false;
          } else if (ends != writers_n) {
            return false;
          }
        }
        // Atomic: the stopped one ends where the others do.
        const std::size_t other = slow == 0 ? 1 : 0;
        return unordered || !stopped || got[slow].back() == got[other].back();
      },
      10s));
  // What is still on its way (the stream, a repair) lands.
  (void)stack.run_until([] { return false; }, 300ms);
  take_all();
  for (std::size_t i = 0; i < stack.size(); ++i)
    CHECK(stack.halted(i).empty());
  CHECK(stack.view(0).members.size() == stack.size());
  // The readers that never stopped: every sample, each writer's in order, one sequence.
  std::optional<std::size_t> ref;
  for (std::size_t r = 0; r < readers_n; ++r) {
    if (r == slow && !stalls.empty()) continue;
    INFO("reader " << r);
    CHECK(got[r].size() == total);
    CHECK(readers[r].sample_lost_status().total_count() == 0);
    std::map<std::uint64_t, std::uint64_t> last;
    for (auto t : got[r]) {
      CHECK(t % 1'000'000 == last[t / 1'000'000] + 1);
      last[t / 1'000'000] = t % 1'000'000;
    }
    if (!ref) {
      ref = r;
    } else if (!unordered) {
      CHECK(got[r] == got[*ref]);
    }
  }
  REQUIRE(ref);
  if (!stopped) return;
  // The one that stopped: each writer's samples increasing, in the others' order (atomic),
  // and what it did not take is SAMPLE_LOST.
  const auto& mine = got[slow];
  std::map<std::uint64_t, std::uint64_t> last;
  for (auto t : mine) {
    CHECK(t % 1'000'000 > last[t / 1'000'000]);
    last[t / 1'000'000] = t % 1'000'000;
  }
  if (!unordered) {
    std::size_t at = 0;
    for (auto t : mine) {
      while (at < got[*ref].size() && got[*ref][at] != t)
        ++at;
      CHECK(at < got[*ref].size());  // found, after the previous one
    }
    CHECK(mine.back() == got[*ref].back());
  }
  // What it did not take is SAMPLE_LOST, up to what the repairs changed: a writer's last
  // changes that the stream never brought and a repair brought ahead of another writer's
  // later one go uncounted, and a change counted in a jump that a repair then brought is
  // counted and taken (at most one of each per writer and repair: KEEP_LAST 1 writers).
  const auto lost = static_cast<std::uint64_t>(readers[slow].sample_lost_status().total_count());
  const auto slack = writers_n * (stack.repairs(writers_n + slow) + 1);
  CHECK(mine.size() + lost + slack >= total);
  CHECK(mine.size() + lost <= total + slack);
  lost_total += lost;
  if (lost > 0) ++left_behind;
}

}  // namespace

// Lagging members over seeds, through DCPS: random latencies and spikes, one or two writers,
// two or three readers (RELIABLE KEEP_LAST), atomic or unordered; one reader's member stops
// delivering for a random stretch of the stream (or not at all), and may stop again later.
// The readers that never stopped take every sample, each writer's in order, and (atomic) all
// the same sequence; the one that stopped takes an increasing part of each writer's stream,
// in the same relative order as the others (atomic), plus SAMPLE_LOST for the rest; nobody
// halts or leaves the view.
TEST_CASE("engine: lagging members over seeds, through DCPS", "[engine][lag][seeds]") {
  auto seeds = sim::Seeds::from_env(40);
  std::uint64_t left_behind = 0;
  std::uint64_t lost_total = 0;
  for (const std::uint64_t seed : seeds)
    lag_seed(seed, left_behind, lost_total);
  WARN(left_behind << " seeds of " << seeds.explored() << " had the stopped reader lapped; "
                   << lost_total << " samples counted lost");
  if (seeds.explored() >= 20) CHECK(left_behind > 0);
}

// Seeds 92 and 523 of the test above: a reader that never stopped, on an unordered topic,
// lost one sample at the view change that took the stopped member back. The writer's member
// moved on while its last pushes to that reader still waited in its queue; the reader saw it
// go, drained without its final guard, and an unordered subgroup re-sent nothing it had sent.
// Now a sender sends again what the final counts of the members that stay show missing
// (smc::Smc::resend), and the reader drops what it took already (group::kResent).
TEST_CASE(
    "engine: an unordered reader loses nothing when a sender moves on before its last "
    "pushes landed",
    "[engine][lag]") {
  std::uint64_t left_behind = 0;
  std::uint64_t lost_total = 0;
  for (const std::uint64_t seed : {92u, 523u})
    lag_seed(seed, left_behind, lost_total);
}

// A best-effort reader's process listens (docs/dev/smc.md, "Listeners"): it takes messages on
// receipt, past what is stable, so across a view change it may take a message that its
// writer sends again in the next view (past the trim). Its reader must not take it twice:
// over seeds, with a join and a relayout mid-stream, what it takes is each writer's samples
// in increasing order, none twice; the reliable reader takes everything.
TEST_CASE("engine: a listening reader takes no sample twice across view changes",
          "[engine][listener][seeds]") {
  auto seeds = sim::Seeds::from_env(30);
  for (const std::uint64_t seed : seeds) {
    INFO("seed " << seed << " (SPINDLE_SIM_SEED=" << seed << ")");
    sim::Config config;
    config.seed = seed;
    sim::Rng rng(seed * 7 + 1);
    config.max_latency = std::chrono::microseconds(rng.uniform(2, 300));
    spindle::testing::SimStack stack(config, 3);
    dds::pub::qos::DataWriterQos wq;
    wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(1, 0));
    dds::sub::qos::DataReaderQos be;
    be << dds::core::policy::Reliability::BestEffort() << dds::core::policy::History::KeepAll();
    dds::sub::qos::DataReaderQos rel;
    rel << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    std::vector<dds::topic::Topic<Avionics::FlightState>> topics;
    for (std::size_t i = 0; i < 3; ++i)
      topics.emplace_back(stack.participant(i), "Listened");
    dds::pub::DataWriter<Avionics::FlightState> writer(dds::pub::Publisher(stack.participant(0)),
                                                       topics[0], wq);
    dds::sub::DataReader<Avionics::FlightState> listening(
        dds::sub::Subscriber(stack.participant(1)), topics[1], be);
    dds::sub::DataReader<Avionics::FlightState> holding(dds::sub::Subscriber(stack.participant(2)),
                                                        topics[2], rel);
    REQUIRE(
        stack.run_until([&] { return writer.publication_matched_status().current_count() == 2; }));
    std::vector<std::uint64_t> heard, held;
    auto take = [&] {
      for (const auto& x : listening.take())
        if (x.info().valid()) heard.push_back(x.data().timestamp_ns());
      for (const auto& x : holding.take())
        if (x.info().valid()) held.push_back(x.data().timestamp_ns());
    };
    std::optional<dds::topic::Topic<Avionics::FlightState>> other;
    std::optional<dds::sub::DataReader<Avionics::FlightState>> late;
    const std::uint64_t total = 300;
    const auto epoch = stack.view(0).epoch;
    for (std::uint64_t k = 1; k <= total; ++k) {
      writer.write(Streams::sample(k));
      if (k == 100) {  // a relayout mid-stream: another topic's reader comes
        other.emplace(stack.participant(2), "Other");
        late.emplace(dds::sub::Subscriber(stack.participant(2)), *other, rel);
      }
      if (k == 200) {  // and a member joins
        std::string why;
        (void)stack.join(why);
      }
      (void)stack.run_until([] { return false; }, std::chrono::microseconds(rng.uniform(0, 100)));
      take();
    }
    REQUIRE(stack.run_until([&] {
      take();
      return held.size() == total;
    }));
    CHECK(stack.view(0).epoch > epoch);  // the view changed under the stream
    for (std::size_t i = 1; i < held.size(); ++i)
      CHECK(held[i] == held[i - 1] + 1);
    for (std::size_t i = 1; i < heard.size(); ++i)
      CHECK(heard[i] > heard[i - 1]);  // increasing: none twice
    CHECK(heard.size() + static_cast<std::uint64_t>(listening.sample_lost_status().total_count()) <=
          total);
  }
}

// Revocation in the simulator (docs/security.md, "Revocation"): over seeds of random
// latencies and suspicion timeouts, three or four members that rejoin by themselves once
// halted; mid-stream every other member evicts one (as their revocation lists would; the
// leader in some seeds). The evicted member is removed, halts, and asks to come back through
// the join hub: whoever leads refuses it, so no later view holds it, while the others' readers
// take the whole stream, in order.
TEST_CASE("engine: an evicted member that tries to come back is refused; the others go on",
          "[engine][evict]") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    sim::Config config;
    config.seed = seed;
    sim::Rng rng(seed ^ 0xe71c7ULL);
    config.max_latency = std::chrono::microseconds(rng.uniform(2, 200));
    config.suspicion_timeout = std::chrono::microseconds(rng.uniform(200, 3000));
    const std::uint32_t n = 3 + static_cast<std::uint32_t>(seed % 2);
    spindle::testing::SimStack stack(config, n);
    stack.rejoin_on_halt();
    Streams s(stack);
    const std::size_t victim = rng.uniform(0, n - 1);
    const std::size_t writer = (victim + 1) % n;
    std::vector<std::vector<std::uint64_t>> got(n);
    auto take = [&] {
      for (std::size_t i = 0; i < n; ++i)
        for (const auto& x : s.readers[i].take())
          if (x.info().valid()) got[i].push_back(x.data().timestamp_ns());
    };
    const std::uint64_t at = rng.uniform(5, 30);
    const std::uint64_t total = at + 30;
    std::uint64_t written = 0;
    for (; written < at; ++written)
      s.writers[writer].write(Streams::sample(written));
    REQUIRE(stack.run_until([&] {
      take();
      return got[victim].size() == at;
    }));
    for (std::size_t o = 0; o < n; ++o)
      if (o != victim) stack.evict(o, victim);
    REQUIRE(stack.run_until([&] {
      return stack.view(writer).members.size() == n - 1 && !stack.halted(victim).empty();
    }));
    for (; written < total; ++written)
      s.writers[writer].write(Streams::sample(written));
    // Time enough for many attempts to come back: without the leader's refusal it is back
    // (and evicted again) several times within this.
    (void)stack.run_until([] { return false; }, std::chrono::seconds(2));
    take();
    CHECK(stack.engine_stats(victim).rejoins == 0);
    CHECK_FALSE(stack.halted(victim).empty());
    std::vector<std::uint64_t> all(total);
    for (std::uint64_t i = 0; i < total; ++i)
      all[i] = i;
    for (std::size_t o = 0; o < n; ++o) {
      if (o == victim) continue;
      CAPTURE(o);
      CHECK(stack.view(o).members.size() == n - 1);
      CHECK_FALSE(stack.view(o).rank_of(static_cast<spindle::transport::NodeId>(victim + 1)));
      CHECK(got[o] == all);
    }
    // The evicted member took a prefix of the stream, nothing written after it was out.
    CHECK(got[victim].size() <= total);
    for (std::size_t i = 0; i < got[victim].size(); ++i)
      CHECK(got[victim][i] == i);
  }
}

// Views past 64 members (docs/membership.md, "The view's size"): 128 and 256 participants in
// the simulator, one writer and a few readers (ranks 0, 63, 64, n/2 + 1, n - 1: each word of the
// member sets; every endpoint is a view change, and one at each of 256 members would be 256).
// Members crash at ranks past the first word of the sets (and past 192 at 256), then a
// participant joins; the survivors and the joiner install one view, and every reader takes
// every sample the writer wrote, in order. Prints, in virtual time, what the user guide's
// curve (§7) gives: the crash to the view without it, the join, one sample to every reader.
// SPINDLE_SCALE_SIZES=8,16,... runs other sizes.
TEST_CASE("scale: views of 128 and 256 members survive crashes and a join", "[scale]") {
  std::vector<std::uint32_t> sizes{128, 256};
  if (const char* e = std::getenv("SPINDLE_SCALE_SIZES")) {
    sizes.clear();
    std::istringstream in(e);
    for (std::string v; std::getline(in, v, ',');)
      sizes.push_back(static_cast<std::uint32_t>(std::stoul(v)));
  }
  const auto us = [](auto d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  };
  for (const std::uint32_t n : sizes) {
    auto seeds = sim::Seeds::from_env(n <= 128 ? 2 : 1);  // 30 s and 200 s each, sanitized
    for (const std::uint64_t seed : seeds) {
      INFO(n << " members, seed " << seed << " (SPINDLE_SIM_SEED=" << seed << ")");
      const auto wall = std::chrono::steady_clock::now();
      std::mt19937_64 rng(seed);
      sim::Config config;
      config.seed = seed;
      config.suspicion_timeout = 5ms;  // a view change of 256 takes more than 1 ms to go round
      spindle::testing::SimStack stack(config, n, 4);
      std::vector<std::size_t> at;
      for (const std::size_t r : {std::size_t{0}, std::size_t{63}, std::size_t{64},
                                  std::size_t{n / 2 + 1}, std::size_t{n - 1}})
        if (r < n && std::find(at.begin(), at.end(), r) == at.end()) at.push_back(r);
      std::vector<dds::topic::Topic<Avionics::FlightState>> topics;
      std::vector<dds::sub::DataReader<Avionics::FlightState>> readers;
      for (const auto i : at) {
        topics.emplace_back(stack.participant(i), "T");
        readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), topics.back(),
                             spindle::testing::keep_all());
      }
      dds::pub::qos::DataWriterQos wq;
      wq << dds::core::policy::Reliability::Reliable(dds::core::Duration(1, 0))
         << dds::core::policy::History::KeepAll();
      dds::pub::DataWriter<Avionics::FlightState> writer(dds::pub::Publisher(stack.participant(0)),
                                                         topics[0], wq);
      REQUIRE(stack.run_until(
          [&] {
            return writer.publication_matched_status().current_count() ==
                   static_cast<std::int32_t>(at.size());
          },
          20s));
      std::vector<std::vector<std::uint64_t>> got(at.size());
      const auto taken = [&](std::uint64_t count) {
        bool all = true;
        for (std::size_t i = 0; i < at.size(); ++i) {
          for (const auto& x : readers[i].take())
            if (x.info().valid()) got[i].push_back(x.data().timestamp_ns());
          all = all && got[i].size() >= count;
        }
        return all;
      };
      // One sample to every reader, at rest.
      std::uint64_t written = 1;
      auto t0 = stack.net().now();
      writer.write(Streams::sample(written));
      REQUIRE(stack.run_until([&] { return taken(written); }, 20s));
      const auto one_sample = stack.net().now() - t0;
      for (; written < 5; ++written)
        writer.write(Streams::sample(written + 1));
      // Crash members that read nothing: one in the second word of the sets where there is
      // one, and at 256 one in the last word too.
      std::vector<std::size_t> crashed;
      const auto pick = [&](std::size_t lo, std::size_t hi) {
        for (;;) {
          const std::size_t r = lo + rng() % (hi - lo);
          if (std::find(at.begin(), at.end(), r) == at.end()) return r;
        }
      };
      crashed.push_back(n > 128 ? pick(65, 127) : pick(1, n));
      if (n > 192) crashed.push_back(pick(192, n - 1));
      t0 = stack.net().now();
      for (auto c : crashed)
        stack.crash(c);
      for (; written < 10; ++written)
        writer.write(Streams::sample(written + 1));
      const std::size_t stay = n - crashed.size();
      REQUIRE(stack.run_until([&] { return stack.view(0).members.size() == stay; }, 20s));
      const auto crash_to_view = stack.net().now() - t0;
      t0 = stack.net().now();
      std::string why;
      const auto joiner = stack.join(why, 20s);
      REQUIRE(joiner);
      // Each participant in turn (a check of all at every step would copy n views per step).
      std::size_t next = 0;
      REQUIRE(stack.run_until(
          [&] {
            while (next < stack.size() &&
                   (!stack.alive(next) || stack.view(next).members.size() == stay + 1))
              ++next;
            return next == stack.size();
          },
          20s));
      const auto join = stack.net().now() - t0;
      const auto epoch = stack.view(0).epoch;
      for (std::size_t i = 0; i < stack.size(); ++i) {
        if (!stack.alive(i)) continue;
        INFO("participant " << i + 1);
        CHECK(stack.halted(i).empty());
        CHECK(stack.view(i).epoch == epoch);
        CHECK(stack.view(i).members == stack.view(0).members);
      }
      for (; written < 15; ++written)
        writer.write(Streams::sample(written + 1));
      REQUIRE(stack.run_until([&] { return taken(written); }, 20s));
      std::vector<std::uint64_t> want(written);
      std::iota(want.begin(), want.end(), 1);
      for (std::size_t i = 0; i < at.size(); ++i) {
        INFO("reader at participant " << at[i] + 1);
        CHECK(got[i] == want);
      }
      std::cout << "scale: " << n << " members, seed " << seed << ": one sample to " << at.size()
                << " readers " << us(one_sample) << " us, crash to view " << us(crash_to_view)
                << " us (suspicion timeout 5 ms), join " << us(join) << " us (virtual); "
                << std::fixed << std::setprecision(1)
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count()
                << " s of wall time" << std::endl;
      // Ends every participant at once: closing them one by one is a view change each.
      for (std::size_t i = 0; i < stack.size(); ++i)
        if (stack.alive(i)) stack.crash(i);
    }
  }
}

// Per-topic subgroups (group/layout.hpp): which subgroups a demand lays out, who belongs to
// each and who sends, how the rings are sized, and how a channel finds its subgroup.
#include <catch2/catch.hpp>

#include "group/layout.hpp"
#include "security/permissions.hpp"

namespace group = spindle::group;
using group::ChannelDemand;
using group::Ordering;

namespace {

std::vector<group::Member> members(std::initializer_list<group::NodeId> ids) {
  std::vector<group::Member> out;
  for (auto id : ids)
    out.push_back(group::Member{id, "127.0.0.1", 0});
  return out;
}

group::LayoutSettings settings() {
  group::LayoutSettings s;
  s.window_size = 50;
  s.slot_size = 256;
  s.header_size = 32;
  return s;
}

std::string name_of(std::uint64_t topic) {
  std::string name = "T";
  name += std::to_string(topic);
  return name;
}

// A writer on `topic` whose publisher's partition set has key `partition`.
ChannelDemand writer(std::uint64_t topic, group::NodeId node, Ordering o = Ordering::atomic,
                     std::uint64_t partition = 0) {
  return ChannelDemand{{topic, o, partition}, name_of(topic), {node}, {}, {}, 0, 0};
}

// A reader of `topic` that matches the writers' partition sets `partitions`.
ChannelDemand reader(std::uint64_t topic, group::NodeId node,
                     std::vector<std::uint64_t> partitions = {0}) {
  return ChannelDemand{
      {topic, Ordering::atomic}, name_of(topic), {}, {node}, std::move(partitions), 0, 0};
}

}  // namespace

TEST_CASE("layout: the first view has the builtin subgroup of every member only", "[layout]") {
  const auto v = group::first_view(members({4, 2, 9}), settings());
  REQUIRE(v.subgroups.size() == 1);
  const auto& b = v.subgroups[0];
  CHECK(b.name == "builtin");
  CHECK(b.topic == 0);
  CHECK(b.ordering == Ordering::atomic);
  CHECK(b.members == std::vector<group::NodeId>{4, 2, 9});
  CHECK(b.senders == b.members);
  CHECK(b.max_payload == 512 + 32);  // a discovery record always fits
  CHECK(group::subgroup_of(v, {0, Ordering::unordered}) == 0u);
  CHECK_FALSE(group::subgroup_of(v, {7, Ordering::atomic}));
}

TEST_CASE("layout: a topic's subgroup holds its writers' and readers' processes only", "[layout]") {
  const auto m = members({1, 2, 3, 4});
  // Topic 7: written on 3, read on 1 and 3. Topic 8: written on 2, read by nobody.
  const auto sgs =
      group::layout(m, {reader(7, 1), writer(7, 3), reader(7, 3), writer(8, 2)}, settings());
  REQUIRE(sgs.size() == 2);
  const auto& t = sgs[1];
  CHECK(t.name == "T7/atomic");
  CHECK(t.topic == 7);
  CHECK(t.members == std::vector<group::NodeId>{1, 3});
  CHECK(t.senders == std::vector<group::NodeId>{3});
  CHECK(t.window_size == 50);
  CHECK(t.max_payload == 256 + 32);
  group::View v;
  v.members = m;
  v.subgroups = sgs;
  CHECK(group::sends(v, {7, Ordering::atomic}, 3));
  CHECK_FALSE(group::sends(v, {7, Ordering::atomic}, 1));
  CHECK(group::receives(v, {7, Ordering::atomic}, 1));
  CHECK_FALSE(group::receives(v, {7, Ordering::atomic}, 2));  // no endpoint on topic 7
  CHECK_FALSE(group::subgroup_of(v, {8, Ordering::atomic}));  // nobody reads topic 8
  CHECK_FALSE(group::subgroup_of(v, {7, Ordering::unordered}));
}

TEST_CASE("layout: each ordering of a topic is a subgroup, and its readers belong to both",
          "[layout]") {
  const auto sgs = group::layout(
      members({1, 2, 3}),
      {writer(5, 2, Ordering::unordered), writer(5, 1), reader(5, 3), writer(5, 2)}, settings());
  REQUIRE(sgs.size() == 3);
  CHECK(sgs[1].ordering == Ordering::atomic);
  CHECK(sgs[1].senders == std::vector<group::NodeId>{1, 2});
  CHECK(sgs[1].members == std::vector<group::NodeId>{1, 2, 3});
  CHECK(sgs[2].ordering == Ordering::unordered);
  CHECK(sgs[2].senders == std::vector<group::NodeId>{2});
  CHECK(sgs[2].members == std::vector<group::NodeId>{2, 3});
}

TEST_CASE("layout: the same demand in any order lays out the same subgroups", "[layout]") {
  const auto m = members({3, 1, 2});
  const std::vector<ChannelDemand> a{writer(9, 1), reader(9, 2), writer(4, 3), reader(4, 1),
                                     reader(9, 3)};
  std::vector<ChannelDemand> b(a.rbegin(), a.rend());
  CHECK(group::layout(m, a, settings()) == group::layout(m, b, settings()));
  // Members and senders follow the view's rank order, not node ids.
  const auto sgs = group::layout(m, a, settings());
  REQUIRE(sgs.size() == 3);
  CHECK(sgs[1].topic == 4);
  CHECK(sgs[2].members == std::vector<group::NodeId>{3, 1, 2});
}

TEST_CASE("layout: nodes that are not members of the view are left out", "[layout]") {
  const auto sgs = group::layout(members({1, 2}), {writer(6, 1), reader(6, 5)}, settings());
  CHECK(sgs.size() == 1);  // the only reader is gone: no subgroup
  const auto more =
      group::layout(members({1, 2}), {writer(6, 1), writer(6, 7), reader(6, 2)}, settings());
  REQUIRE(more.size() == 2);
  CHECK(more[1].senders == std::vector<group::NodeId>{1});
}

TEST_CASE("layout: a writer's Engine policy can enlarge its topic's rings, never shrink them",
          "[layout]") {
  auto big = writer(3, 1);
  big.window_size = 400;
  big.max_payload = 4096;
  auto small = writer(3, 2);
  small.window_size = 10;
  small.max_payload = 64;
  const auto sgs = group::layout(members({1, 2}), {big, small, reader(3, 2)}, settings());
  REQUIRE(sgs.size() == 2);
  CHECK(sgs[1].window_size == 400);
  CHECK(sgs[1].max_payload == 4096 + 32);
  const auto only_small = group::layout(members({1, 2}), {small, reader(3, 1)}, settings());
  CHECK(only_small[1].window_size == 50);
  CHECK(only_small[1].max_payload == 256 + 32);
}

TEST_CASE("layout: RDMC space only where a writer's samples can be larger than the slot",
          "[layout]") {
  auto s = settings();  // slot 256 + a 32-byte header
  s.knobs.rdmc_buffer_size = std::uint64_t{8} << 20;
  const auto room = [&](std::vector<std::uint64_t> bounds) {
    std::vector<ChannelDemand> demand{reader(3, 2)};
    group::NodeId node = 1;
    for (auto b : bounds) {
      auto w = writer(3, node++);
      w.max_sample = b;
      demand.push_back(w);
    }
    const auto v = group::View{2, 0, members({1, 2, 3}),
                               group::layout(members({1, 2, 3}), demand, s), s.knobs};
    REQUIRE(v.subgroups.size() == 2);
    return std::pair{v.subgroups[1].large, group::large_bytes(v, v.subgroups[1])};
  };
  // Every sample fits a slot, header included: none.
  CHECK(room({100}) == std::pair<std::uint64_t, std::uint64_t>{0, 0});
  CHECK(room({256, 40}) == std::pair<std::uint64_t, std::uint64_t>{0, 0});
  // One byte more than a slot: room for 16 of the largest bound with its header, in whole
  // 64-byte lines.
  CHECK(room({257, 40}) == std::pair<std::uint64_t, std::uint64_t>{16 * 320, 16 * 320});
  CHECK(room({40, 70'000}) == std::pair<std::uint64_t, std::uint64_t>{16 * 70'080, 16 * 70'080});
  // Past the domain's setting: the setting.
  CHECK(room({std::uint64_t{1} << 20}).second == (std::uint64_t{8} << 20));
  // A writer with no bound that asked for no room yet: 16 of 64 KiB (group::kUnboundedRoom)
  // with the header, or of the others' largest bound where larger.
  CHECK(room({40, 0}) == std::pair<std::uint64_t, std::uint64_t>{16 * 65'600, 16 * 65'600});
  CHECK(room({0, 200'000}) == std::pair<std::uint64_t, std::uint64_t>{16 * 200'064, 16 * 200'064});
  // ... and as it asks for more (its record's room), 16 of that, up to the domain's setting.
  const auto asked = [&](std::vector<std::uint64_t> rooms) {
    std::vector<ChannelDemand> demand{reader(3, 2)};
    group::NodeId node = 1;
    for (auto r : rooms) {
      auto w = writer(3, node++);
      w.max_sample = 0;
      w.room = r;
      demand.push_back(w);
    }
    return group::layout(members({1, 2, 3}), demand, s)[1].large;
  };
  CHECK(asked({0, 128 * 1024}) == 16 * (128 * 1024 + 64));
  CHECK(asked({256 * 1024, 128 * 1024}) == 16 * (256 * 1024 + 64));
  CHECK(asked({std::uint64_t{1} << 20}) == (std::uint64_t{8} << 20));
  // A bounded writer's record asks for nothing: its room is its bound.
  auto bounded = writer(3, 1);
  bounded.max_sample = 40;
  bounded.room = std::uint64_t{1} << 20;
  CHECK(group::layout(members({1, 2, 3}), {reader(3, 2), bounded}, s)[1].large == 0);
  // The builtin subgroup never has any, and a group file that does not say has the setting.
  const auto first = group::first_view(members({1, 2}), s);
  CHECK(group::large_bytes(first, first.subgroups[0]) == 0);
  group::Subgroup unsaid;
  unsaid.topic = 7;
  CHECK(group::large_bytes(first, unsaid) == (std::uint64_t{8} << 20));
}

TEST_CASE("layout: partitions split a topic; a reader that matches several joins them",
          "[layout]") {
  const auto m = members({1, 2, 3, 4, 5});
  // Topic 7: node 1 writes in partition set 10, node 2 in 20, node 3 in 30. Node 4 reads
  // 10, node 5 reads 30. Nothing reads 20.
  std::vector<ChannelDemand> d{
      writer(7, 1, Ordering::atomic, 10), writer(7, 2, Ordering::atomic, 20),
      writer(7, 3, Ordering::atomic, 30), reader(7, 4, {10}), reader(7, 5, {30})};
  auto sgs = group::layout(m, d, settings());
  REQUIRE(sgs.size() == 3);
  CHECK(sgs[1].name == "T7/atomic");
  CHECK(sgs[1].partitions == std::vector<std::uint64_t>{10});
  CHECK(sgs[1].members == std::vector<group::NodeId>{1, 4});
  CHECK(sgs[2].name == "T7/atomic#2");
  CHECK(sgs[2].partitions == std::vector<std::uint64_t>{30});
  CHECK(sgs[2].members == std::vector<group::NodeId>{3, 5});
  group::View v;
  v.members = m;
  v.subgroups = sgs;
  CHECK(group::subgroup_of(v, {7, Ordering::atomic, 10}) == 1u);
  CHECK(group::subgroup_of(v, {7, Ordering::atomic, 30}) == 2u);
  CHECK_FALSE(group::subgroup_of(v, {7, Ordering::atomic, 20}));  // nobody reads it
  CHECK_FALSE(group::receives(v, {7, Ordering::atomic, 10}, 5));  // another partition
  // A reader of 10 and 30 (a wildcard, say) puts both in one subgroup: it takes them in
  // one total order.
  d.push_back(reader(7, 2, {10, 30}));
  sgs = group::layout(m, d, settings());
  REQUIRE(sgs.size() == 2);  // 20 still has no reader
  CHECK(sgs[1].name == "T7/atomic");
  CHECK(sgs[1].partitions == std::vector<std::uint64_t>{10, 30});
  CHECK(sgs[1].senders == std::vector<group::NodeId>{1, 3});
  CHECK(sgs[1].members == std::vector<group::NodeId>{1, 2, 3, 4, 5});
  // The same demand in another order lays out the same.
  std::vector<ChannelDemand> back(d.rbegin(), d.rend());
  CHECK(group::layout(m, back, settings()) == sgs);
}

TEST_CASE(
    "layout: a reader's process is left behind unless it writes, or keeps all for a writer "
    "that keeps all",
    "[layout]") {
  const auto m = members({1, 2, 3, 4});
  auto s = settings();
  s.lag_bound = std::chrono::milliseconds(100);
  // Node 1 writes; 2 reads (KEEP_LAST); 3 reads and keeps all; 4 reads and writes.
  auto keeper = reader(7, 3);
  keeper.keeps_all = true;
  auto base =
      std::vector<ChannelDemand>{writer(7, 1), reader(7, 2), keeper, reader(7, 4), writer(7, 4)};
  SECTION("KEEP_LAST writers wait for no reader past the bound") {
    const auto sgs = group::layout(m, base, s);
    REQUIRE(sgs.size() == 2);
    CHECK(sgs[1].demotable == std::vector<group::NodeId>{2, 3});
    CHECK(sgs[1].lag_bound == std::chrono::milliseconds(100));
  }
  SECTION("a writer that keeps all may wait for a reader that keeps all") {
    auto all = writer(7, 1);
    all.keeps_all = true;
    base.front() = all;
    const auto sgs = group::layout(m, base, s);
    REQUIRE(sgs.size() == 2);
    CHECK(sgs[1].demotable == std::vector<group::NodeId>{2});
  }
  SECTION("a retained topic's members are left behind too, a member with no reader included") {
    // Its history comes again once it catches up (docs/storage.md, "Refresh").
    base.front().retained = true;
    const auto m5 = members({1, 2, 3, 4, 5});
    const auto sgs = group::layout(m5, base, s);
    REQUIRE(sgs.size() == 2);
    CHECK(sgs[1].members == std::vector<group::NodeId>{1, 2, 3, 4, 5});
    CHECK(sgs[1].demotable == std::vector<group::NodeId>{2, 3, 5});
    CHECK(sgs[1].lag_bound == std::chrono::milliseconds(100));
    // A writer that keeps all waits for its KEEP_ALL reader, not for a member that only keeps
    // the history.
    base.front().keeps_all = true;
    CHECK(group::layout(m5, base, s)[1].demotable == std::vector<group::NodeId>{2, 5});
  }
}

TEST_CASE("layout: a secured domain's grants decide who sends and who receives", "[layout]") {
  auto perms = std::make_shared<const spindle::security::Permissions>(
      spindle::security::Permissions::parse(R"(version: 1
default: deny
grants:
  - {subject: "CN=writer", publish: [Secret, Retained]}
  - {subject: "CN=reader", subscribe: [Secret, Retained]}
  - {subject: "CN=outsider", subscribe: [Public]}
)",
                                            "perms.yaml"));
  auto m = members({1, 2, 3});
  m[0].subject = "CN=writer";
  m[1].subject = "CN=reader";
  m[2].subject = "CN=outsider";
  auto s = settings();
  s.permissions = perms;
  auto named = [](ChannelDemand d, std::string topic) {
    d.name = topic;
    d.topic_name = topic;
    return d;
  };
  // The outsider reads Secret anyway (its own library refused it; a hostile build would not):
  // it is in no subgroup of the topic. The reader writes Secret without a grant: it sends
  // nothing there.
  const auto subgroups =
      group::layout(m,
                    {named(writer(7, 1), "Secret"), named(writer(7, 2), "Secret"),
                     named(reader(7, 2), "Secret"), named(reader(7, 3), "Secret")},
                    s);
  REQUIRE(subgroups.size() == 2);
  CHECK(subgroups[1].members == std::vector<group::NodeId>{1, 2});
  CHECK(subgroups[1].senders == std::vector<group::NodeId>{1});
  // A retained topic spans only the members that may read it.
  auto kept = named(writer(8, 1), "Retained");
  kept.retained = true;
  const auto retained = group::layout(m, {kept}, s);
  REQUIRE(retained.size() == 2);
  CHECK(retained[1].members == std::vector<group::NodeId>{1, 2});
  // Without permissions, everyone takes part.
  s.permissions = nullptr;
  const auto open = group::layout(m, {kept}, s);
  CHECK(open[1].members == std::vector<group::NodeId>{1, 2, 3});
}

// The endpoint table: which writer-reader pairs match, and what each record, retirement
// and departure means for this node's endpoints.
#include <set>

#include <catch2/catch.hpp>

#include "dcps/wire.hpp"
#include "discovery/endpoint_table.hpp"

namespace d = spindle::discovery;
namespace pol = dds::core::policy;
using spindle::dcps::guid_node;
using spindle::dcps::make_guid;
using Kind = d::Change::Kind;

namespace {

constexpr std::uint32_t kSelf = 1;

d::EndpointTable table() {
  return d::EndpointTable([](std::uint64_t g) { return guid_node(g) == kSelf; });
}

d::WriterRecord writer(std::uint32_t node, std::uint32_t serial, const std::string& topic = "T",
                       const std::string& type = "A::B") {
  d::WriterRecord w;
  w.guid = make_guid(node, serial);
  w.topic_name = topic;
  w.type_name = type;
  return w;
}

d::ReaderRecord reader(std::uint32_t node, std::uint32_t serial, const std::string& topic = "T",
                       const std::string& type = "A::B") {
  d::ReaderRecord r;
  r.guid = make_guid(node, serial);
  r.topic_name = topic;
  r.type_name = type;
  return r;
}

}  // namespace

TEST_CASE("discovery: a local writer and a remote reader of one topic and type match") {
  auto t = table();
  CHECK(t.add(writer(kSelf, 2)).empty());
  const auto c = t.add(reader(2, 2));
  REQUIRE(c.size() == 1);
  CHECK(c[0].kind == Kind::matched);
  CHECK(c[0].writer == make_guid(kSelf, 2));
  CHECK(c[0].reader == make_guid(2, 2));
  CHECK(c[0].local_writer);
  CHECK_FALSE(c[0].local_reader);
  CHECK(t.readers_of(make_guid(kSelf, 2)) == std::vector<std::uint64_t>{make_guid(2, 2)});
  // A repeated record changes nothing: the pair is matched already.
  CHECK(t.add(reader(2, 2)).empty());
}

TEST_CASE("discovery: pairs of other nodes, other topics, types or partitions do not match") {
  auto t = table();
  CHECK(t.add(writer(2, 2)).empty());
  CHECK(t.add(reader(3, 2)).empty());  // neither is ours
  CHECK(t.add(reader(kSelf, 3, "U")).empty());
  CHECK(t.add(reader(kSelf, 4, "T", "A::C")).empty());
  auto r = reader(kSelf, 5);
  r.subscriber_qos << pol::Partition("other");
  CHECK(t.add(r).empty());
  CHECK(t.readers_of(make_guid(2, 2)).empty());
}

TEST_CASE("discovery: requested QoS the writer does not offer is incompatible, with its id") {
  auto t = table();
  auto w = writer(2, 2);
  w.qos << pol::Reliability::BestEffort();
  CHECK(t.add(w).empty());
  auto r = reader(kSelf, 2);
  r.qos << pol::Reliability::Reliable();
  const auto c = t.add(r);
  REQUIRE(c.size() == 1);
  CHECK(c[0].kind == Kind::incompatible);
  CHECK(c[0].local_reader);
  CHECK(c[0].policies == std::vector<pol::QosPolicyId>{pol::policy_id<pol::Reliability>::value});
  CHECK(t.readers_of(make_guid(2, 2)).empty());
}

TEST_CASE("discovery: a retired endpoint's matches end; a departed member's endpoints go") {
  auto t = table();
  (void)t.add(writer(kSelf, 2));
  (void)t.add(reader(2, 2));
  (void)t.add(reader(2, 3));
  (void)t.add(reader(3, 2));
  auto c = t.retire(make_guid(2, 2), false);
  REQUIRE(c.size() == 1);
  CHECK(c[0].kind == Kind::unmatched);
  CHECK(c[0].reader == make_guid(2, 2));
  CHECK(t.readers() == 2);

  c = t.retire_if([](std::uint64_t g) { return guid_node(g) == 2; });
  REQUIRE(c.size() == 1);
  CHECK(c[0].reader == make_guid(2, 3));
  CHECK(t.readers_of(make_guid(kSelf, 2)) == std::vector<std::uint64_t>{make_guid(3, 2)});

  c = t.retire(make_guid(kSelf, 2), true);
  REQUIRE(c.size() == 1);
  CHECK(c[0].kind == Kind::unmatched);
  CHECK(c[0].local_writer);
  CHECK(t.writers() == 0);
  CHECK(t.retire(make_guid(9, 9), true).empty());
}

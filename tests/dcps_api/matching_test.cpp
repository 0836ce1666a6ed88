// DCPS behaviour, single participant: matching. Matched statuses (current and total
// counts, change fields reset by reading), matched_publications/matched_subscriptions,
// incompatible QoS (OFFERED_/REQUESTED_INCOMPATIBLE_QOS with the failing policy's id, and
// no match, so no data), and partitions. Public API only.
#include <algorithm>

#include "api_fixture.hpp"
#include "gaps.hpp"

namespace dcps_api {
namespace {

bool has(const dds::core::InstanceHandleSeq& seq, const dds::core::InstanceHandle& h) {
  return std::find(seq.begin(), seq.end(), h) != seq.end();
}

TEST_CASE("matched statuses count current and total; reading resets the change fields",
          "[matching]") {
  Participant p;
  auto writer = p.writer();
  auto r1 = p.reader();
  auto r2 = p.reader();
  REQUIRE(eventually([&] { return writer.matched_subscriptions().size() == 2; }));
  REQUIRE(eventually([&] {
    return r1.matched_publications().size() == 1 && r2.matched_publications().size() == 1;
  }));

  auto pm = writer.publication_matched_status();
  check_matched(pm, 2, 2, 2, 2);
  pm = writer.publication_matched_status();
  CHECK(pm.current_count() == 2);
  CHECK(pm.current_count_change() == 0);
  CHECK(pm.total_count_change() == 0);

  const auto subs = writer.matched_subscriptions();
  CHECK(has(subs, r1.instance_handle()));
  CHECK(has(subs, r2.instance_handle()));
  CHECK(r1.matched_publications() == dds::core::InstanceHandleSeq{writer.instance_handle()});
  const auto sm = r1.subscription_matched_status();
  CHECK(sm.current_count() == 1);
  CHECK(sm.total_count() == 1);
  CHECK(sm.last_publication_handle() == writer.instance_handle());

  r1.close();
  REQUIRE(eventually([&] { return writer.matched_subscriptions().size() == 1; }));
  pm = writer.publication_matched_status();
  check_matched(pm, 1, -1, 2, 0);
  CHECK(writer.matched_subscriptions() == dds::core::InstanceHandleSeq{r2.instance_handle()});

  // A sample's publication handle names the writer.
  deliver(writer, flight(1, 1));
  const auto got = r2.take();
  REQUIRE(got.length() == 1);
  CHECK(got[0].info().publication_handle() == writer.instance_handle());
  CHECK(has(r2.matched_publications(), got[0].info().publication_handle()));
}

struct Incompatible {
  const char* what;
  dds::pub::qos::DataWriterQos offered;
  dds::sub::qos::DataReaderQos requested;
  dds::core::policy::QosPolicyId id;
};

std::vector<Incompatible> incompatible_cases() {
  namespace sp = spindle::policy;
  std::vector<Incompatible> out;
  auto add = [&](const char* what, auto offered, auto requested,
                 dds::core::policy::QosPolicyId id) {
    Incompatible c{what, writer_qos(), dds::sub::qos::DataReaderQos(), id};
    c.offered << offered;
    c.requested << requested;
    out.push_back(c);
  };
  add("BEST_EFFORT writer, RELIABLE reader", policy::Reliability::BestEffort(),
      policy::Reliability::Reliable(), dds::core::policy::policy_id<policy::Reliability>::value);
  add("VOLATILE writer, TRANSIENT_LOCAL reader", policy::Durability::Volatile(),
      policy::Durability::TransientLocal(),
      dds::core::policy::policy_id<policy::Durability>::value);
  add("deadline 200 ms offered, 100 ms requested",
      policy::Deadline(dds::core::Duration::from_millisecs(200)),
      policy::Deadline(dds::core::Duration::from_millisecs(100)),
      dds::core::policy::policy_id<policy::Deadline>::value);
  add("SHARED writer, EXCLUSIVE reader", policy::Ownership::Shared(),
      policy::Ownership::Exclusive(), dds::core::policy::policy_id<policy::Ownership>::value);
  add("AUTOMATIC writer, MANUAL_BY_TOPIC reader", policy::Liveliness::Automatic(),
      policy::Liveliness::ManualByTopic(dds::core::Duration::from_secs(1)),
      dds::core::policy::policy_id<policy::Liveliness>::value);
  add("BY_RECEPTION writer, BY_SOURCE reader", policy::DestinationOrder::ReceptionTimestamp(),
      policy::DestinationOrder::SourceTimestamp(),
      dds::core::policy::policy_id<policy::DestinationOrder>::value);
  add("UNORDERED writer, ATOMIC reader", sp::Consistency::Unordered(), sp::Consistency::Atomic(),
      dds::core::policy::policy_id<sp::Consistency>::value);
  add("XCDR2 writer, XCDR1 reader",
      policy::DataRepresentation({policy::DataRepresentationId::XCDR2}),
      policy::DataRepresentation({policy::DataRepresentationId::XCDR1}),
      dds::core::policy::policy_id<policy::DataRepresentation>::value);
  return out;
}

TEST_CASE(
    "incompatible QoS raises OFFERED_ and REQUESTED_INCOMPATIBLE_QOS with the policy id, "
    "and no match",
    "[matching][incompatible]") {
  for (const auto& c : incompatible_cases()) {
    DYNAMIC_SECTION(c.what) {
      Participant p;
      auto writer = p.writer(c.offered);
      auto reader = p.reader(c.requested);
      REQUIRE(eventually([&] {
        return writer.offered_incompatible_qos_status().total_count() == 1 &&
               reader.requested_incompatible_qos_status().total_count() == 1;
      }));
      // The getters above reset the change fields but not the rest.
      const auto offered = writer.offered_incompatible_qos_status();
      CHECK(offered.total_count_change() == 0);
      CHECK(offered.last_policy_id() == c.id);
      REQUIRE(offered.policies().size() == 1);
      CHECK(offered.policies()[0].policy_id() == c.id);
      CHECK(offered.policies()[0].count() == 1);
      const auto requested = reader.requested_incompatible_qos_status();
      CHECK(requested.last_policy_id() == c.id);
      REQUIRE(requested.policies().size() == 1);
      CHECK(requested.policies()[0].policy_id() == c.id);

      CHECK(writer.matched_subscriptions().empty());
      CHECK(reader.matched_publications().empty());
      CHECK(writer.publication_matched_status().total_count() == 0);
      CHECK(reader.subscription_matched_status().total_count() == 0);
      deliver(writer, flight(1, 1));
      CHECK(stays([&] { return reader.read().length() == 0; }, 50ms));
    }
  }
}

// DataRepresentation (DDS-XTypes 1.3): a writer writes its first encoding, a reader that lists
// it (or lists none: the type's) matches and reads the samples.
TEST_CASE("a writer's DataRepresentation is the encoding its matched readers read",
          "[matching][representation]") {
  using Id = policy::DataRepresentationId;
  for (const auto& [what, offered, requested] :
       {std::tuple{"XCDR2 writer, default reader", policy::DataRepresentation({Id::XCDR2}),
                   policy::DataRepresentation()},
        std::tuple{"XCDR2 writer, XCDR1|XCDR2 reader", policy::DataRepresentation({Id::XCDR2}),
                   policy::DataRepresentation({Id::XCDR1, Id::XCDR2})},
        std::tuple{"default writer (the type's XCDR1), XCDR1 reader", policy::DataRepresentation(),
                   policy::DataRepresentation({Id::XCDR1})}}) {
    DYNAMIC_SECTION(what) {
      Participant p;
      auto wq = writer_qos();
      wq << offered;
      dds::sub::qos::DataReaderQos rq;
      rq << requested;
      auto writer = p.writer(wq);
      auto reader = p.reader(rq);
      REQUIRE(eventually([&] { return writer.matched_subscriptions().size() == 1; }));
      CHECK(writer.offered_incompatible_qos_status().total_count() == 0);
      const auto sent = flight(7, 3);
      deliver(writer, sent);
      REQUIRE(eventually([&] { return reader.read().length() == 1; }));
      CHECK(reader.take()[0].data() == sent);
      CHECK(writer.qos().policy<policy::DataRepresentation>() == offered);  // as given
    }
  }
}

TEST_CASE("DataRepresentation XML is refused where the entity is created",
          "[matching][representation]") {
  Participant p;
  auto wq = writer_qos();
  wq << policy::DataRepresentation({policy::DataRepresentationId::XML});
  CHECK_THROWS_WITH(p.writer(wq), Catch::Contains("DataRepresentation XML is not supported"));
  dds::sub::qos::DataReaderQos rq;
  rq << policy::DataRepresentation({policy::DataRepresentationId::XML});
  CHECK_THROWS_AS(p.reader(rq), dds::core::UnsupportedError);
  CHECK_THROWS_WITH(p.reader(rq), Catch::Contains("DataReader<") &&
                                      Catch::Contains("DataRepresentation XML is not supported"));
}

// Gaps::Plain1 is @data_representation(XCDR1): an entity asking for XCDR2 alone is refused.
TEST_CASE("DataRepresentation outside the type's @data_representation is refused",
          "[matching][representation]") {
  Participant p;
  dds::topic::Topic<Gaps::Plain1> topic(p.dp, "Plain1");
  auto wq = writer_qos();
  wq << policy::DataRepresentation({policy::DataRepresentationId::XCDR2});
  CHECK_THROWS_AS(dds::pub::DataWriter<Gaps::Plain1>(p.pub, topic, wq),
                  dds::core::InconsistentPolicyError);
  CHECK_THROWS_WITH(dds::pub::DataWriter<Gaps::Plain1>(p.pub, topic, wq),
                    Catch::Contains("DataRepresentation XCDR2 is not among the type's data "
                                    "representations"));
  dds::sub::qos::DataReaderQos rq;
  rq << policy::DataRepresentation({policy::DataRepresentationId::XCDR2});
  CHECK_THROWS_AS(dds::sub::DataReader<Gaps::Plain1>(p.sub, topic, rq),
                  dds::core::InconsistentPolicyError);
  CHECK_THROWS_WITH(dds::sub::DataReader<Gaps::Plain1>(p.sub, topic, rq),
                    Catch::Contains("lists none of the type's data representations"));
  // XCDR1, or the type's choice, is fine.
  rq << policy::DataRepresentation(
      {policy::DataRepresentationId::XCDR2, policy::DataRepresentationId::XCDR1});
  CHECK_NOTHROW(dds::sub::DataReader<Gaps::Plain1>(p.sub, topic, rq));
  CHECK_NOTHROW(dds::pub::DataWriter<Gaps::Plain1>(p.pub, topic, writer_qos()));
}

TEST_CASE("a writer and a reader whose partitions do not match neither match nor complain",
          "[matching][partition]") {
  Participant p;
  dds::pub::qos::PublisherQos pq;
  pq << policy::Partition("cockpit");
  dds::sub::qos::SubscriberQos other;
  other << policy::Partition("cabin");
  dds::sub::qos::SubscriberQos wildcard;
  wildcard << policy::Partition("cock*");
  dds::pub::Publisher pub(p.dp, pq);
  dds::sub::Subscriber elsewhere(p.dp, other);
  dds::sub::Subscriber matching(p.dp, wildcard);
  Writer writer(pub, p.topic, writer_qos());
  Reader apart(elsewhere, p.topic, reader_qos());
  Reader together(matching, p.topic, reader_qos());
  Reader default_partition = p.reader();

  wait_matched(writer, together);
  deliver(writer, flight(1, 1));
  CHECK(seqs(together.take()) == std::vector<std::uint64_t>{1});
  CHECK(apart.read().length() == 0);
  CHECK(default_partition.read().length() == 0);
  CHECK(apart.matched_publications().empty());
  CHECK(default_partition.matched_publications().empty());
  CHECK(apart.requested_incompatible_qos_status().total_count() == 0);
  CHECK(writer.offered_incompatible_qos_status().total_count() == 0);
  CHECK(writer.matched_subscriptions() == dds::core::InstanceHandleSeq{together.instance_handle()});
}

}  // namespace
}  // namespace dcps_api

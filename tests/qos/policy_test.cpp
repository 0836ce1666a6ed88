// Policies and entity QoS classes: the specification's defaults, the PSM's composition
// operators, named constructors, policy ids, and which entity holds which policy.
#include <catch2/catch.hpp>

#include "qos_names.hpp"

namespace {

// Exactly these policies: each is held, and there are no others.
template <class Q, class... P>
constexpr bool holds_exactly =
    (Q::template holds<P> && ...) && std::tuple_size_v<typename Q::policy_types> == sizeof...(P);

// DDS 1.4 §2.2.3, the "Concerns" column, plus the Spindle policies on topic/writer/reader and
// DDS-XTypes 1.3's DataRepresentation.
static_assert(holds_exactly<DomainParticipantQos, UserData, EntityFactory>);
static_assert(
    holds_exactly<TopicQos, TopicData, Durability, DurabilityService, Deadline, LatencyBudget,
                  Liveliness, Reliability, DestinationOrder, History, ResourceLimits,
                  TransportPriority, Lifespan, Ownership, Consistency, Engine, DataRepresentation>);
static_assert(holds_exactly<PublisherQos, Presentation, Partition, GroupData, EntityFactory>);
static_assert(holds_exactly<SubscriberQos, Presentation, Partition, GroupData, EntityFactory>);
static_assert(
    holds_exactly<DataWriterQos, UserData, Durability, DurabilityService, Deadline, LatencyBudget,
                  Liveliness, Reliability, DestinationOrder, History, ResourceLimits,
                  TransportPriority, Lifespan, Ownership, OwnershipStrength, WriterDataLifecycle,
                  Consistency, Engine, DataRepresentation>);
static_assert(
    holds_exactly<DataReaderQos, UserData, Durability, Deadline, LatencyBudget, Liveliness,
                  Reliability, DestinationOrder, History, ResourceLimits, Ownership,
                  TimeBasedFilter, ReaderDataLifecycle, Consistency, Engine, DataRepresentation>);
static_assert(!DataReaderQos::holds<OwnershipStrength>);
static_assert(!TopicQos::holds<Partition>);

// The DDS specification's QosPolicyId values.
static_assert(policy_id<UserData>::value == 1 && policy_id<Durability>::value == 2 &&
              policy_id<Presentation>::value == 3 && policy_id<Deadline>::value == 4 &&
              policy_id<LatencyBudget>::value == 5 && policy_id<Ownership>::value == 6 &&
              policy_id<OwnershipStrength>::value == 7 && policy_id<Liveliness>::value == 8 &&
              policy_id<TimeBasedFilter>::value == 9 && policy_id<Partition>::value == 10 &&
              policy_id<Reliability>::value == 11 && policy_id<DestinationOrder>::value == 12 &&
              policy_id<History>::value == 13 && policy_id<ResourceLimits>::value == 14 &&
              policy_id<EntityFactory>::value == 15 &&
              policy_id<WriterDataLifecycle>::value == 16 &&
              policy_id<ReaderDataLifecycle>::value == 17 && policy_id<TopicData>::value == 18 &&
              policy_id<GroupData>::value == 19 && policy_id<TransportPriority>::value == 20 &&
              policy_id<Lifespan>::value == 21 && policy_id<DurabilityService>::value == 22 &&
              policy_id<DataRepresentation>::value == 23);
// Vendor policies sit outside the standard range.
static_assert(policy_id<Consistency>::value >= 0x8000 && policy_id<Engine>::value >= 0x8000 &&
              policy_id<Consistency>::value != policy_id<Engine>::value);

}  // namespace

TEST_CASE("policies: constructors default to the specification's values", "[policy]") {
  CHECK(UserData().value().empty());
  CHECK(EntityFactory().autoenable_created_entities());
  CHECK(TransportPriority().value() == 0);
  CHECK(Lifespan().duration() == Duration::infinite());
  CHECK(Durability().kind() == DurabilityKind::VOLATILE);
  const DurabilityService ds;
  CHECK(ds.service_cleanup_delay() == Duration::zero());
  CHECK(ds.history_kind() == HistoryKind::KEEP_LAST);
  CHECK(ds.history_depth() == 1);
  CHECK(ds.max_samples() == dds::core::LENGTH_UNLIMITED);
  CHECK(ds.max_instances() == dds::core::LENGTH_UNLIMITED);
  CHECK(ds.max_samples_per_instance() == dds::core::LENGTH_UNLIMITED);
  const Presentation p;
  CHECK(p.access_scope() == PresentationAccessScopeKind::INSTANCE);
  CHECK_FALSE(p.coherent_access());
  CHECK_FALSE(p.ordered_access());
  CHECK(Deadline().period() == Duration::infinite());
  CHECK(LatencyBudget().duration() == Duration::zero());
  CHECK(Ownership().kind() == OwnershipKind::SHARED);
  CHECK(OwnershipStrength().value() == 0);
  CHECK(Liveliness().kind() == LivelinessKind::AUTOMATIC);
  CHECK(Liveliness().lease_duration() == Duration::infinite());
  CHECK(TimeBasedFilter().minimum_separation() == Duration::zero());
  CHECK(Partition().name().empty());
  CHECK(Reliability().kind() == ReliabilityKind::BEST_EFFORT);
  CHECK(Reliability().max_blocking_time() == Duration::from_millisecs(100));
  CHECK(DestinationOrder().kind() == DestinationOrderKind::BY_RECEPTION_TIMESTAMP);
  CHECK(History().kind() == HistoryKind::KEEP_LAST);
  CHECK(History().depth() == 1);
  CHECK(ResourceLimits().max_samples() == dds::core::LENGTH_UNLIMITED);
  CHECK(WriterDataLifecycle().autodispose_unregistered_instances());
  CHECK(ReaderDataLifecycle().autopurge_nowriter_samples_delay() == Duration::infinite());
  CHECK(ReaderDataLifecycle().autopurge_disposed_samples_delay() == Duration::infinite());
  CHECK(Consistency().kind() == ConsistencyKind::ATOMIC);
  CHECK(Engine().window_size() == 100);
  CHECK(Engine().max_payload() == 1024);
  CHECK(Engine().rdmc_algorithm() == spindle::policy::RdmcAlgorithm::BINOMIAL_PIPELINE);
}

TEST_CASE("policies: named constructors and chainable setters", "[policy]") {
  CHECK(Durability::TransientLocal().kind() == DurabilityKind::TRANSIENT_LOCAL);
  CHECK(Durability::Transient().kind() == DurabilityKind::TRANSIENT);
  CHECK(Durability::Persistent().kind() == DurabilityKind::PERSISTENT);
  CHECK(Durability::Volatile() == Durability());
  CHECK(Ownership::Exclusive().kind() == OwnershipKind::EXCLUSIVE);
  CHECK(Ownership::Shared() == Ownership());
  CHECK(Liveliness::ManualByParticipant(Duration(2, 0)).kind() ==
        LivelinessKind::MANUAL_BY_PARTICIPANT);
  CHECK(Liveliness::ManualByTopic(Duration(3, 0)).lease_duration() == Duration(3, 0));
  CHECK(Liveliness::Automatic() == Liveliness());
  CHECK(Reliability::Reliable(Duration::from_millisecs(5)).kind() == ReliabilityKind::RELIABLE);
  CHECK(Reliability::Reliable(Duration::from_millisecs(5)).max_blocking_time() ==
        Duration::from_millisecs(5));
  CHECK(Reliability::BestEffort().kind() == ReliabilityKind::BEST_EFFORT);
  CHECK(DestinationOrder::SourceTimestamp().kind() == DestinationOrderKind::BY_SOURCE_TIMESTAMP);
  CHECK(DestinationOrder::ReceptionTimestamp() == DestinationOrder());
  CHECK(History::KeepLast(8).depth() == 8);
  CHECK(History::KeepAll().kind() == HistoryKind::KEEP_ALL);
  CHECK_FALSE(WriterDataLifecycle::ManuallyDisposeUnregisteredInstances()
                  .autodispose_unregistered_instances());
  CHECK(WriterDataLifecycle::AutoDisposeUnregisteredInstances() == WriterDataLifecycle());
  CHECK(ReaderDataLifecycle::AutoPurgeDisposedSamples(Duration(1, 0))
            .autopurge_disposed_samples_delay() == Duration(1, 0));
  CHECK(ReaderDataLifecycle::NoAutoPurgeDisposedSamples() == ReaderDataLifecycle());
  CHECK(Presentation::GroupAccessScope(true, true).access_scope() ==
        PresentationAccessScopeKind::GROUP);
  CHECK(Presentation::TopicAccessScope(false, true).ordered_access());
  CHECK(Presentation::InstanceAccessScope(true).coherent_access());
  CHECK_FALSE(EntityFactory::ManuallyEnable().autoenable_created_entities());
  CHECK(Consistency::Unordered().kind() == ConsistencyKind::UNORDERED);
  CHECK(Consistency::Volatile().kind() == ConsistencyKind::VOLATILE);
  CHECK(Consistency::LoggedPeriodicFsync(Duration::from_millisecs(10)).fsync() ==
        spindle::policy::FsyncKind::PERIODIC);
  CHECK(Consistency::LoggedNoFsync().fsync() == spindle::policy::FsyncKind::NEVER);
  CHECK(Consistency::Logged().fsync() == spindle::policy::FsyncKind::EVERY_SAMPLE);

  ResourceLimits rl;
  rl.max_samples(100).max_instances(10).max_samples_per_instance(10);
  CHECK(rl == ResourceLimits(100, 10, 10));
  const dds::core::ByteSeq bytes{1, 2, 3};
  CHECK(UserData(bytes).value() == bytes);
  CHECK(TopicData(bytes.begin(), bytes.end()).value() == bytes);
  const GroupData group(bytes);
  CHECK(std::vector<std::uint8_t>(group.begin(), group.end()) == bytes);
  CHECK(Partition("a").name() == dds::core::StringSeq{"a"});
  CHECK(Partition().name(dds::core::StringSeq{"a", "b*"}).name().size() == 2);
  Engine e;
  e.window_size(64).max_payload(256).rdmc_block_size(4096).rdmc_algorithm(
      spindle::policy::RdmcAlgorithm::CHAIN);
  CHECK(e == Engine(64, 256, 4096, spindle::policy::RdmcAlgorithm::CHAIN));
}

TEST_CASE("policies: kinds are PSM safe enums ordered by strength", "[policy]") {
  const ReliabilityKind k = ReliabilityKind::RELIABLE;
  CHECK(k == ReliabilityKind::RELIABLE);
  CHECK(k != ReliabilityKind::BEST_EFFORT);
  CHECK(ReliabilityKind(ReliabilityKind::BEST_EFFORT) < k);
  CHECK(DurabilityKind(DurabilityKind::TRANSIENT_LOCAL) < DurabilityKind::PERSISTENT);
  CHECK(ConsistencyKind(ConsistencyKind::UNORDERED) < ConsistencyKind::ATOMIC);
  CHECK(ConsistencyKind(ConsistencyKind::VOLATILE) < ConsistencyKind::LOGGED);
  CHECK(k.underlying() == ReliabilityKind::RELIABLE);
  CHECK(policy_name<Reliability>::name() == "Reliability");
  CHECK(policy_name<DurabilityService>::name() == "DurabilityService");
  CHECK(policy_name<Consistency>::name() == "Consistency");
}

TEST_CASE("entity QoS: each class has the specification's defaults", "[policy]") {
  const DataWriterQos w;
  CHECK(w.policy<Reliability>().kind() == ReliabilityKind::RELIABLE);
  CHECK(w.policy<Reliability>().max_blocking_time() == Duration::from_millisecs(100));
  CHECK(w.policy<History>() == History::KeepLast(1));
  CHECK(w.policy<Durability>() == Durability::Volatile());
  CHECK(w.policy<WriterDataLifecycle>().autodispose_unregistered_instances());
  CHECK(w.policy<OwnershipStrength>().value() == 0);
  CHECK(w.policy<Consistency>().kind() == ConsistencyKind::ATOMIC);

  const DataReaderQos r;
  CHECK(r.policy<Reliability>().kind() == ReliabilityKind::BEST_EFFORT);
  CHECK(r.policy<History>() == History::KeepLast(1));
  CHECK(r.policy<TimeBasedFilter>().minimum_separation() == Duration::zero());
  CHECK(r.policy<ReaderDataLifecycle>() == ReaderDataLifecycle());
  CHECK(r.policy<Consistency>().kind() == ConsistencyKind::UNORDERED);

  const TopicQos t;
  CHECK(t.policy<Reliability>().kind() == ReliabilityKind::BEST_EFFORT);
  CHECK(t.policy<Deadline>().period() == Duration::infinite());
  CHECK(t.policy<Consistency>().kind() == ConsistencyKind::ATOMIC);
  CHECK(t.policy<ResourceLimits>() == ResourceLimits());

  CHECK(DomainParticipantQos().policy<EntityFactory>().autoenable_created_entities());
  CHECK(PublisherQos().policy<Presentation>() == Presentation());
  CHECK(SubscriberQos().policy<Partition>().name().empty());
  CHECK(PublisherQos() == PublisherQos());
}

TEST_CASE("entity QoS: << and >> compose, policy<P>() reads and edits in place", "[policy]") {
  DataWriterQos q;
  q << History::KeepLast(8) << Durability::TransientLocal() << OwnershipStrength(5);
  History h;
  Durability d;
  q >> h >> d;
  CHECK(h.depth() == 8);
  CHECK(d.kind() == DurabilityKind::TRANSIENT_LOCAL);
  q.policy<History>().depth(16);
  CHECK(q.policy<History>().depth() == 16);
  q.policy(Reliability::BestEffort());
  CHECK(q.policy<Reliability>().kind() == ReliabilityKind::BEST_EFFORT);
  DataWriterQos other;
  CHECK(q != other);
  other << History::KeepLast(16) << Durability::TransientLocal() << OwnershipStrength(5)
        << Reliability::BestEffort();
  CHECK(q == other);
  // The PSM idiom: modify a copy returned by value in one expression.
  const DataReaderQos r = DataReaderQos()
                          << Reliability::Reliable() << History::KeepAll() << Consistency::Logged();
  CHECK(r.policy<History>().kind() == HistoryKind::KEEP_ALL);
  CHECK(r.policy<Consistency>().kind() == ConsistencyKind::LOGGED);
}

TEST_CASE("entity QoS: writer and reader QoS take the shared policies of a TopicQos", "[policy]") {
  TopicQos t;
  t << Reliability::Reliable(Duration::from_millisecs(7)) << History::KeepLast(4)
    << TopicData(dds::core::ByteSeq{9}) << Consistency::Volatile() << Engine(32);
  const DataWriterQos w = t;
  CHECK(w.policy<Reliability>().max_blocking_time() == Duration::from_millisecs(7));
  CHECK(w.policy<History>().depth() == 4);
  CHECK(w.policy<Consistency>().kind() == ConsistencyKind::VOLATILE);
  CHECK(w.policy<Engine>().window_size() == 32);
  CHECK(w.policy<UserData>().value().empty());  // TopicData is not UserData

  // Assignment keeps the reader-only policies.
  DataReaderQos r;
  r << TimeBasedFilter(Duration::from_millisecs(20)) << Reliability::BestEffort();
  r = t;
  CHECK(r.policy<TimeBasedFilter>().minimum_separation() == Duration::from_millisecs(20));
  CHECK(r.policy<Reliability>().kind() == ReliabilityKind::RELIABLE);
  CHECK(r.policy<History>().depth() == 4);

  DataWriterQos w2;
  w2 << OwnershipStrength(3);
  w2 = t;
  CHECK(w2.policy<OwnershipStrength>().value() == 3);
  CHECK(w2.policy<History>().depth() == 4);
}

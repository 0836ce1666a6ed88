// QoS consistency, request/offered compatibility (every rule, both ways), partition
// matching with wildcards, effective consistency and changeability.
#include <catch2/catch.hpp>

#include <dds/core/Exception.hpp>

#include "qos/checks.hpp"
#include "qos/schema.hpp"
#include "qos_names.hpp"
#include "support.hpp"

namespace sq = spindle::qos;

namespace {

template <class Q>
std::string message_of(const Q& q) {
  return qos_test::error_of<dds::core::InconsistentPolicyError>([&] { sq::check_consistent(q); });
}

// Every key an inconsistency names exists in the profile schema of that QoS, so the
// profile loader can point at the line that set it.
template <class Q>
void require_known_keys(const Q& q) {
  const auto bad = sq::find_inconsistency(q);
  REQUIRE(bad);
  for (const auto& k : bad->keys) {
    const auto& fields = sq::section_fields<Q>();
    INFO(k);
    CHECK(std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return f.key == k; }));
  }
}

std::vector<QosPolicyId> ids(std::initializer_list<QosPolicyId> l) {
  return l;
}

// One request/offered rule: `weak` offered against `strong` requested breaks it; swapped
// (`strong` offered, `weak` requested) it holds.
struct Rule {
  const char* name;
  QosPolicyId id;
  std::function<void(DataWriterQos&, DataReaderQos&, bool swapped)> apply;
};

template <class P>
Rule rule(const char* name, const P& weak, const P& strong) {
  return {name, policy_id<P>::value,
          [weak, strong](DataWriterQos& w, DataReaderQos& r, bool swapped) {
            w << (swapped ? strong : weak);
            r << (swapped ? weak : strong);
          }};
}

std::vector<Rule> rxo_rules() {
  return {
      rule("durability", Durability::Volatile(), Durability::TransientLocal()),
      rule("durability transient < persistent", Durability::Transient(), Durability::Persistent()),
      rule("deadline", Deadline(ms(20)), Deadline(ms(10))),
      rule("latency budget", LatencyBudget(ms(5)), LatencyBudget(ms(1))),
      rule("ownership", Ownership::Shared(), Ownership::Exclusive()),
      rule("liveliness kind", Liveliness::Automatic(), Liveliness::ManualByParticipant()),
      rule("liveliness manual kinds", Liveliness::ManualByParticipant(),
           Liveliness::ManualByTopic()),
      rule("liveliness lease", Liveliness::Automatic().lease_duration(ms(200)),
           Liveliness::Automatic().lease_duration(ms(100))),
      rule("reliability", Reliability::BestEffort(), Reliability::Reliable()),
      rule("destination order", DestinationOrder::ReceptionTimestamp(),
           DestinationOrder::SourceTimestamp()),
      rule("consistency unordered < atomic", Consistency::Unordered(), Consistency::Atomic()),
      rule("consistency atomic < volatile", Consistency::Atomic(), Consistency::Volatile()),
      rule("consistency volatile < logged", Consistency::Volatile(), Consistency::Logged()),
  };
}

}  // namespace

TEST_CASE("consistency: defaults and shipped-style settings are consistent", "[checks]") {
  CHECK_FALSE(sq::find_inconsistency(TopicQos()));
  CHECK_FALSE(sq::find_inconsistency(DataWriterQos()));
  CHECK_FALSE(sq::find_inconsistency(DataReaderQos()));
  CHECK_FALSE(sq::find_inconsistency(PublisherQos()));
  CHECK_FALSE(sq::find_inconsistency(SubscriberQos()));
  CHECK_FALSE(sq::find_inconsistency(dds::domain::qos::DomainParticipantQos()));
  DataWriterQos w;
  w << History::KeepLast(16) << ResourceLimits(4096, 256, 16) << Deadline(ms(10));
  CHECK_NOTHROW(sq::check_consistent(w));
}

TEST_CASE("consistency: history depth against resource limits", "[checks]") {
  DataWriterQos w;
  w << History::KeepLast(8) << ResourceLimits(100, dds::core::LENGTH_UNLIMITED, 4);
  CHECK(message_of(w) == "History.depth (8) > ResourceLimits.max_samples_per_instance (4)");
  CHECK(sq::find_inconsistency(w)->keys ==
        std::vector<std::string>{"history.depth", "resource_limits.max_samples_per_instance"});
  require_known_keys(w);
  // KEEP_ALL ignores depth.
  w << History::KeepAll();
  CHECK(message_of(w).empty());

  DataReaderQos r;
  r << History::KeepLast(0);
  CHECK(message_of(r) == "History.depth must be >= 1 with KEEP_LAST, got 0");
  require_known_keys(r);
}

TEST_CASE("consistency: resource limits among themselves", "[checks]") {
  TopicQos t;
  t << ResourceLimits(10, 5, 20);
  CHECK(message_of(t) ==
        "ResourceLimits.max_samples (10) < ResourceLimits.max_samples_per_instance (20)");
  require_known_keys(t);
  t << ResourceLimits(0, 5, 5);
  CHECK(message_of(t) == "ResourceLimits.max_samples must be > 0 or LENGTH_UNLIMITED, got 0");
  t << ResourceLimits(10, -7, 5);
  CHECK(message_of(t) == "ResourceLimits.max_instances must be > 0 or LENGTH_UNLIMITED, got -7");
  // Unlimited total with a per-instance bound is fine.
  t << ResourceLimits(dds::core::LENGTH_UNLIMITED, 5, 5);
  CHECK(message_of(t).empty());
}

TEST_CASE("consistency: durability service history and limits", "[checks]") {
  DataWriterQos w;
  w << DurabilityService(Duration::zero(), HistoryKind::KEEP_LAST, 10, 100, 10, 5);
  CHECK(message_of(w) ==
        "DurabilityService.history_depth (10) > DurabilityService.max_samples_per_instance (5)");
  require_known_keys(w);
  w << DurabilityService(Duration::zero(), HistoryKind::KEEP_LAST, 1, 3, 10, 5);
  CHECK(message_of(w) ==
        "DurabilityService.max_samples (3) < DurabilityService.max_samples_per_instance (5)");
  w << DurabilityService(Duration::zero(), HistoryKind::KEEP_LAST, 0);
  CHECK(message_of(w) == "DurabilityService.history_depth must be >= 1 with KEEP_LAST, got 0");
}

TEST_CASE("consistency: deadline against time-based filter, zero periods", "[checks]") {
  DataReaderQos r;
  r << Deadline(ms(10)) << TimeBasedFilter(ms(20));
  CHECK(message_of(r) == "Deadline.period (10ms) < TimeBasedFilter.minimum_separation (20ms)");
  require_known_keys(r);
  r << Deadline(ms(20));
  CHECK(message_of(r).empty());
  r << Deadline(Duration::zero()) << TimeBasedFilter();
  CHECK(message_of(r) == "Deadline.period must be > 0 (use infinite for no deadline)");
  DataWriterQos w;
  w << Liveliness::ManualByTopic(Duration::zero());
  CHECK(message_of(w) == "Liveliness.lease_duration must be > 0 (use infinite for no lease)");
  require_known_keys(w);
}

TEST_CASE("consistency: KEEP_ALL with volatile consistency needs a per-instance bound",
          "[checks]") {
  DataWriterQos w;
  w << History::KeepAll() << Consistency::Volatile();
  CHECK(message_of(w) ==
        "History KEEP_ALL with Consistency VOLATILE needs a finite "
        "ResourceLimits.max_samples_per_instance (the retained history is kept in memory)");
  require_known_keys(w);
  w << ResourceLimits(1000, 10, 100);
  CHECK(message_of(w).empty());
}

TEST_CASE("consistency: logged with periodic fsync needs a period", "[checks]") {
  TopicQos t;
  t << Consistency::LoggedPeriodicFsync(Duration::zero());
  CHECK(message_of(t) ==
        "Consistency.fsync_period must be finite and > 0 with fsync PERIODIC, got 0");
  require_known_keys(t);
  t << Consistency::LoggedPeriodicFsync(Duration::infinite());
  CHECK(message_of(t) ==
        "Consistency.fsync_period must be finite and > 0 with fsync PERIODIC, got infinite");
  t << Consistency::LoggedPeriodicFsync(ms(10));
  CHECK(message_of(t).empty());
  // Fsync settings are ignored below LOGGED.
  t << Consistency(spindle::policy::ConsistencyKind::ATOMIC, spindle::policy::FsyncKind::PERIODIC);
  CHECK(message_of(t).empty());
}

TEST_CASE("consistency: engine knobs within the SMC limits", "[checks]") {
  DataReaderQos r;
  r << Engine(0);
  CHECK(message_of(r) == "Engine.window_size must be in 1..65536, got 0");
  r << Engine(100, 2u << 20);
  CHECK(message_of(r) == "Engine.max_payload must be in 1..1048576, got 2097152");
  r << Engine(100, 1024, 512);
  CHECK(message_of(r) == "Engine.rdmc_block_size must be in 1024..67108864, got 512");
  r << Engine(65536, 1u << 20);
  CHECK(message_of(r) ==
        "Engine.window_size (65536) x Engine.max_payload (1048576) = 68719476736 bytes per "
        "sender ring, more than the limit of 268435456");
  require_known_keys(r);
}

TEST_CASE("RxO: defaults match; every rule fails one way and holds the other", "[checks]") {
  CHECK(sq::incompatible_policies(DataWriterQos(), DataReaderQos()).empty());

  for (const auto& rule : rxo_rules()) {
    INFO(rule.name);
    DataWriterQos w;
    DataReaderQos r;
    rule.apply(w, r, false);
    CHECK(sq::incompatible_policies(w, r) == ids({rule.id}));
    // Offer the stronger value and request the weaker one: compatible, except for
    // ownership, which must be equal.
    DataWriterQos w2;
    DataReaderQos r2;
    rule.apply(w2, r2, true);
    if (rule.id == policy_id<Ownership>::value) {
      CHECK(sq::incompatible_policies(w2, r2) == ids({rule.id}));
    } else {
      CHECK(sq::incompatible_policies(w2, r2).empty());
    }
  }
}

TEST_CASE("RxO: several broken rules are all reported, in policy id order", "[checks]") {
  DataWriterQos w;
  DataReaderQos r;
  w << Reliability::BestEffort() << Consistency::Unordered() << Deadline(ms(50));
  r << Reliability::Reliable() << Consistency::Logged() << Durability::Persistent()
    << Deadline(ms(10));
  CHECK(sq::incompatible_policies(w, r) == ids({2, 4, 11, 0x8001}));
  // Equal values are compatible.
  r << Deadline(ms(50)) << Reliability::BestEffort() << Consistency::Unordered()
    << Durability::Volatile();
  CHECK(sq::incompatible_policies(w, r).empty());
}

TEST_CASE("RxO: presentation of publisher against subscriber", "[checks]") {
  const DataWriterQos w;
  const DataReaderQos r;
  PublisherQos pub;
  SubscriberQos sub;
  CHECK(sq::incompatible_policies(pub, w, sub, r).empty());
  sub << Presentation::TopicAccessScope();
  CHECK(sq::incompatible_policies(pub, w, sub, r) == ids({3}));
  pub << Presentation::GroupAccessScope();
  CHECK(sq::incompatible_policies(pub, w, sub, r).empty());
  sub << Presentation::TopicAccessScope(true, false);
  CHECK(sq::incompatible_policies(pub, w, sub, r) == ids({3}));
  pub << Presentation::GroupAccessScope(true, false);
  CHECK(sq::incompatible_policies(pub, w, sub, r).empty());
  sub << Presentation::TopicAccessScope(false, true);
  CHECK(sq::incompatible_policies(pub, w, sub, r) == ids({3}));
  pub << Presentation::GroupAccessScope(true, true);
  CHECK(sq::incompatible_policies(pub, w, sub, r).empty());
  // Offering coherent/ordered access when none is requested is fine.
  sub << Presentation::InstanceAccessScope();
  CHECK(sq::incompatible_policies(pub, w, sub, r).empty());
  // Presentation sorts among the writer/reader ids.
  DataReaderQos strict;
  strict << Reliability::Reliable() << Durability::Persistent();
  DataWriterQos weak;
  weak << Reliability::BestEffort();
  sub << Presentation::GroupAccessScope(false, false);
  pub << Presentation::InstanceAccessScope();
  CHECK(sq::incompatible_policies(pub, weak, sub, strict) == ids({2, 3, 11}));
}

TEST_CASE("partitions: names, wildcards, and the default partition", "[checks]") {
  CHECK(sq::partition_names_match("sensors", "sensors"));
  CHECK_FALSE(sq::partition_names_match("sensors", "Sensors"));
  CHECK(sq::partition_names_match("sens*", "sensors"));
  CHECK(sq::partition_names_match("sensors", "sens*"));
  CHECK(sq::partition_names_match("flight/?", "flight/1"));
  CHECK(sq::partition_names_match("[ab]x", "bx"));
  CHECK_FALSE(sq::partition_names_match("[ab]x", "cx"));
  // Two names with wildcards never match, not even equal ones.
  CHECK_FALSE(sq::partition_names_match("sens*", "sens*"));
  CHECK_FALSE(sq::partition_names_match("a*", "*"));
  // An escaped wildcard character is literal.
  CHECK(sq::partition_names_match("a\\*", "a*"));
  CHECK_FALSE(sq::partition_names_match("a\\*", "ab"));

  CHECK(sq::partitions_match(Partition(), Partition()));
  CHECK(sq::partitions_match(Partition(), Partition("")));
  CHECK(sq::partitions_match(Partition("*"), Partition()));  // "*" matches ""
  CHECK_FALSE(sq::partitions_match(Partition("a"), Partition()));
  CHECK(sq::partitions_match(Partition(dds::core::StringSeq{"x", "y"}),
                             Partition(dds::core::StringSeq{"z", "y"})));
  CHECK_FALSE(sq::partitions_match(Partition(dds::core::StringSeq{"x", "y"}),
                                   Partition(dds::core::StringSeq{"z"})));
  CHECK(sq::partitions_match(Partition("engine.*"), Partition("engine.left")));
  CHECK_FALSE(sq::partitions_match(Partition("engine.*"), Partition("engine?left")));
}

TEST_CASE("effective consistency: durability raises the level", "[checks]") {
  CHECK(sq::effective_consistency(Durability::Volatile(), Consistency::Unordered()) ==
        ConsistencyKind::UNORDERED);
  CHECK(sq::effective_consistency(Durability::TransientLocal(), Consistency::Atomic()) ==
        ConsistencyKind::VOLATILE);
  CHECK(sq::effective_consistency(Durability::Transient(), Consistency::Atomic()) ==
        ConsistencyKind::LOGGED);
  CHECK(sq::effective_consistency(Durability::Persistent(), Consistency::Volatile()) ==
        ConsistencyKind::LOGGED);
  CHECK(sq::effective_consistency(Durability::Volatile(), Consistency::Logged()) ==
        ConsistencyKind::LOGGED);
}

TEST_CASE("changeability: mutable policies may change after enable, others may not", "[checks]") {
  DataWriterQos a;
  DataWriterQos b = a;
  b << Deadline(ms(5)) << LatencyBudget(ms(1)) << OwnershipStrength(9) << Lifespan(ms(100))
    << TransportPriority(3) << UserData(dds::core::ByteSeq{1})
    << WriterDataLifecycle::ManuallyDisposeUnregisteredInstances();
  CHECK_FALSE(sq::immutable_change(a, b));
  CHECK_NOTHROW(sq::check_changeable(a, b));
  b << History::KeepLast(3);
  CHECK(sq::immutable_change(a, b) == QosPolicyId{13});
  CHECK(qos_test::error_of<dds::core::ImmutablePolicyError>([&] { sq::check_changeable(a, b); }) ==
        "History cannot change once the entity is enabled");
  DataReaderQos r1;
  DataReaderQos r2 = r1;
  r2 << Consistency::Logged();
  CHECK(sq::immutable_change(r1, r2) == QosPolicyId{0x8001});
  PublisherQos p1;
  PublisherQos p2;
  p2 << Partition("x") << GroupData(dds::core::ByteSeq{2});
  CHECK_FALSE(sq::immutable_change(p1, p2));
  p2 << Presentation::GroupAccessScope();
  CHECK(sq::immutable_change(p1, p2) == QosPolicyId{3});
}

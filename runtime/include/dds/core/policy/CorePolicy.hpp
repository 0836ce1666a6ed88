// The standard DDS QoS policies (DDS 1.4 §2.2.3) in the ISO C++ PSM's shape
// (DDS-PSM-Cxx §7.5.2): value classes with PSM-style getters and chainable setters
// (`kind()`, `kind(k)`, `depth()`, `max_blocking_time()`, ...), named constructors for the
// common settings (`Reliability::Reliable()`, `History::KeepLast(8)`, ...), and the
// constructors' defaults are the specification's defaults. Which entity takes which policy,
// and the entity-specific defaults (writers are RELIABLE, readers BEST_EFFORT), are in the
// entity QoS classes (dds/pub/qos/DataWriterQos.hpp, ...). policy_id<P>::value is the
// specification's QosPolicyId; policy_name<P>::name() its name.
//
// Setters store what they are given; contradictions between policies (history depth above
// max_samples_per_instance, ...) are detected when a QoS is applied to an entity and
// reported as dds::core::InconsistentPolicyError.
//
// Threading: value types; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <dds/core/Duration.hpp>
#include <dds/core/policy/PolicyKind.hpp>
#include <dds/core/policy/QosPolicyCount.hpp>
#include <dds/core/types.hpp>

namespace dds::core::policy {

namespace detail {

// USER_DATA, TOPIC_DATA and GROUP_DATA: opaque bytes the application attaches to an entity
// and reads back through discovery. One implementation, three distinct policy types.
template <class Derived>
class ByteData {
 public:
  ByteData() = default;
  explicit ByteData(const dds::core::ByteSeq& value) : value_(value) {}
  ByteData(const std::uint8_t* value_begin, const std::uint8_t* value_end)
      : value_(value_begin, value_end) {}
  template <class Iter>
  ByteData(Iter begin, Iter end) : value_(begin, end) {}

  Derived& value(const dds::core::ByteSeq& value) {
    value_ = value;
    return static_cast<Derived&>(*this);
  }
  template <class Iter>
  Derived& value(Iter begin, Iter end) {
    value_.assign(begin, end);
    return static_cast<Derived&>(*this);
  }
  [[nodiscard]] const dds::core::ByteSeq& value() const noexcept { return value_; }
  [[nodiscard]] const std::uint8_t* begin() const noexcept { return value_.data(); }
  [[nodiscard]] const std::uint8_t* end() const noexcept { return value_.data() + value_.size(); }

  friend bool operator==(const ByteData&, const ByteData&) = default;

 private:
  dds::core::ByteSeq value_;
};

}  // namespace detail

// Bytes attached to a participant, writer or reader.
class UserData : public detail::ByteData<UserData> {
 public:
  using ByteData::ByteData;
};

// Bytes attached to a topic.
class TopicData : public detail::ByteData<TopicData> {
 public:
  using ByteData::ByteData;
};

// Bytes attached to a publisher or subscriber.
class GroupData : public detail::ByteData<GroupData> {
 public:
  using ByteData::ByteData;
};

// Whether entities created by this one are enabled at creation.
class EntityFactory {
 public:
  explicit EntityFactory(bool autoenable_created_entities = true) noexcept
      : autoenable_(autoenable_created_entities) {}
  static EntityFactory AutoEnable() noexcept { return EntityFactory(true); }
  static EntityFactory ManuallyEnable() noexcept { return EntityFactory(false); }

  EntityFactory& autoenable_created_entities(bool on) noexcept {
    autoenable_ = on;
    return *this;
  }
  [[nodiscard]] bool autoenable_created_entities() const noexcept { return autoenable_; }
  friend bool operator==(const EntityFactory&, const EntityFactory&) = default;

 private:
  bool autoenable_;
};

// A hint to the transport about the importance of a writer's data.
class TransportPriority {
 public:
  explicit TransportPriority(std::int32_t priority = 0) noexcept : value_(priority) {}
  TransportPriority& value(std::int32_t priority) noexcept {
    value_ = priority;
    return *this;
  }
  [[nodiscard]] std::int32_t value() const noexcept { return value_; }
  friend bool operator==(const TransportPriority&, const TransportPriority&) = default;

 private:
  std::int32_t value_;
};

// How long a written sample stays valid; expired samples are dropped from histories.
class Lifespan {
 public:
  explicit Lifespan(const dds::core::Duration& duration = dds::core::Duration::infinite())
      : duration_(duration) {}
  Lifespan& duration(const dds::core::Duration& d) {
    duration_ = d;
    return *this;
  }
  [[nodiscard]] const dds::core::Duration& duration() const noexcept { return duration_; }
  friend bool operator==(const Lifespan&, const Lifespan&) = default;

 private:
  dds::core::Duration duration_;
};

// Whether samples outlive their writer's delivery: VOLATILE (no), TRANSIENT_LOCAL (kept by
// the writer for late joiners), TRANSIENT (kept by the service), PERSISTENT (kept on disk).
class Durability {
 public:
  explicit Durability(DurabilityKind::Type kind = DurabilityKind::VOLATILE) noexcept
      : kind_(kind) {}
  static Durability Volatile() noexcept { return Durability(DurabilityKind::VOLATILE); }
  static Durability TransientLocal() noexcept {
    return Durability(DurabilityKind::TRANSIENT_LOCAL);
  }
  static Durability Transient() noexcept { return Durability(DurabilityKind::TRANSIENT); }
  static Durability Persistent() noexcept { return Durability(DurabilityKind::PERSISTENT); }

  Durability& kind(DurabilityKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  [[nodiscard]] DurabilityKind kind() const noexcept { return kind_; }
  friend bool operator==(const Durability&, const Durability&) = default;

 private:
  DurabilityKind kind_;
};

// The history the durability service keeps for TRANSIENT and PERSISTENT topics.
class DurabilityService {
 public:
  explicit DurabilityService(
      const dds::core::Duration& service_cleanup_delay = dds::core::Duration::zero(),
      HistoryKind::Type history_kind = HistoryKind::KEEP_LAST, std::int32_t history_depth = 1,
      std::int32_t max_samples = dds::core::LENGTH_UNLIMITED,
      std::int32_t max_instances = dds::core::LENGTH_UNLIMITED,
      std::int32_t max_samples_per_instance = dds::core::LENGTH_UNLIMITED)
      : cleanup_delay_(service_cleanup_delay),
        history_kind_(history_kind),
        history_depth_(history_depth),
        max_samples_(max_samples),
        max_instances_(max_instances),
        max_samples_per_instance_(max_samples_per_instance) {}

  DurabilityService& service_cleanup_delay(const dds::core::Duration& d) {
    cleanup_delay_ = d;
    return *this;
  }
  DurabilityService& history_kind(HistoryKind::Type kind) noexcept {
    history_kind_ = kind;
    return *this;
  }
  DurabilityService& history_depth(std::int32_t depth) noexcept {
    history_depth_ = depth;
    return *this;
  }
  DurabilityService& max_samples(std::int32_t n) noexcept {
    max_samples_ = n;
    return *this;
  }
  DurabilityService& max_instances(std::int32_t n) noexcept {
    max_instances_ = n;
    return *this;
  }
  DurabilityService& max_samples_per_instance(std::int32_t n) noexcept {
    max_samples_per_instance_ = n;
    return *this;
  }
  [[nodiscard]] const dds::core::Duration& service_cleanup_delay() const noexcept {
    return cleanup_delay_;
  }
  [[nodiscard]] HistoryKind history_kind() const noexcept { return history_kind_; }
  [[nodiscard]] std::int32_t history_depth() const noexcept { return history_depth_; }
  [[nodiscard]] std::int32_t max_samples() const noexcept { return max_samples_; }
  [[nodiscard]] std::int32_t max_instances() const noexcept { return max_instances_; }
  [[nodiscard]] std::int32_t max_samples_per_instance() const noexcept {
    return max_samples_per_instance_;
  }
  friend bool operator==(const DurabilityService&, const DurabilityService&) = default;

 private:
  dds::core::Duration cleanup_delay_;
  HistoryKind history_kind_;
  std::int32_t history_depth_;
  std::int32_t max_samples_;
  std::int32_t max_instances_;
  std::int32_t max_samples_per_instance_;
};

// How changes from one publisher are presented to a subscriber: the scope over which
// order and coherent sets are kept (instance, topic, group).
class Presentation {
 public:
  explicit Presentation(
      PresentationAccessScopeKind::Type access_scope = PresentationAccessScopeKind::INSTANCE,
      bool coherent_access = false, bool ordered_access = false) noexcept
      : scope_(access_scope), coherent_(coherent_access), ordered_(ordered_access) {}
  static Presentation GroupAccessScope(bool coherent_access = false,
                                       bool ordered_access = false) noexcept {
    return Presentation(PresentationAccessScopeKind::GROUP, coherent_access, ordered_access);
  }
  static Presentation InstanceAccessScope(bool coherent_access = false,
                                          bool ordered_access = false) noexcept {
    return Presentation(PresentationAccessScopeKind::INSTANCE, coherent_access, ordered_access);
  }
  static Presentation TopicAccessScope(bool coherent_access = false,
                                       bool ordered_access = false) noexcept {
    return Presentation(PresentationAccessScopeKind::TOPIC, coherent_access, ordered_access);
  }

  Presentation& access_scope(PresentationAccessScopeKind::Type scope) noexcept {
    scope_ = scope;
    return *this;
  }
  Presentation& coherent_access(bool on) noexcept {
    coherent_ = on;
    return *this;
  }
  Presentation& ordered_access(bool on) noexcept {
    ordered_ = on;
    return *this;
  }
  [[nodiscard]] PresentationAccessScopeKind access_scope() const noexcept { return scope_; }
  [[nodiscard]] bool coherent_access() const noexcept { return coherent_; }
  [[nodiscard]] bool ordered_access() const noexcept { return ordered_; }
  friend bool operator==(const Presentation&, const Presentation&) = default;

 private:
  PresentationAccessScopeKind scope_;
  bool coherent_;
  bool ordered_;
};

// The longest gap between two samples of an instance a writer promises / a reader expects.
class Deadline {
 public:
  explicit Deadline(const dds::core::Duration& period = dds::core::Duration::infinite())
      : period_(period) {}
  Deadline& period(const dds::core::Duration& d) {
    period_ = d;
    return *this;
  }
  [[nodiscard]] const dds::core::Duration& period() const noexcept { return period_; }
  friend bool operator==(const Deadline&, const Deadline&) = default;

 private:
  dds::core::Duration period_;
};

// The delay from write to delivery the application accepts (a hint for batching).
class LatencyBudget {
 public:
  explicit LatencyBudget(const dds::core::Duration& duration = dds::core::Duration::zero())
      : duration_(duration) {}
  LatencyBudget& duration(const dds::core::Duration& d) {
    duration_ = d;
    return *this;
  }
  [[nodiscard]] const dds::core::Duration& duration() const noexcept { return duration_; }
  friend bool operator==(const LatencyBudget&, const LatencyBudget&) = default;

 private:
  dds::core::Duration duration_;
};

// Whether several writers may update one instance (SHARED) or only the strongest
// (EXCLUSIVE, by OwnershipStrength).
class Ownership {
 public:
  explicit Ownership(OwnershipKind::Type kind = OwnershipKind::SHARED) noexcept : kind_(kind) {}
  static Ownership Shared() noexcept { return Ownership(OwnershipKind::SHARED); }
  static Ownership Exclusive() noexcept { return Ownership(OwnershipKind::EXCLUSIVE); }
  Ownership& kind(OwnershipKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  [[nodiscard]] OwnershipKind kind() const noexcept { return kind_; }
  friend bool operator==(const Ownership&, const Ownership&) = default;

 private:
  OwnershipKind kind_;
};

// A writer's strength under EXCLUSIVE ownership: the strongest live writer owns an instance.
class OwnershipStrength {
 public:
  explicit OwnershipStrength(std::int32_t strength = 0) noexcept : value_(strength) {}
  OwnershipStrength& value(std::int32_t strength) noexcept {
    value_ = strength;
    return *this;
  }
  [[nodiscard]] std::int32_t value() const noexcept { return value_; }
  friend bool operator==(const OwnershipStrength&, const OwnershipStrength&) = default;

 private:
  std::int32_t value_;
};

// How a writer shows it is alive, and how long it may stay silent before it is not.
class Liveliness {
 public:
  explicit Liveliness(LivelinessKind::Type kind = LivelinessKind::AUTOMATIC,
                      const dds::core::Duration& lease_duration = dds::core::Duration::infinite())
      : kind_(kind), lease_(lease_duration) {}
  static Liveliness Automatic() { return Liveliness(LivelinessKind::AUTOMATIC); }
  static Liveliness ManualByParticipant(
      const dds::core::Duration& lease = dds::core::Duration::infinite()) {
    return Liveliness(LivelinessKind::MANUAL_BY_PARTICIPANT, lease);
  }
  static Liveliness ManualByTopic(
      const dds::core::Duration& lease = dds::core::Duration::infinite()) {
    return Liveliness(LivelinessKind::MANUAL_BY_TOPIC, lease);
  }
  Liveliness& kind(LivelinessKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  Liveliness& lease_duration(const dds::core::Duration& d) {
    lease_ = d;
    return *this;
  }
  [[nodiscard]] LivelinessKind kind() const noexcept { return kind_; }
  [[nodiscard]] const dds::core::Duration& lease_duration() const noexcept { return lease_; }
  friend bool operator==(const Liveliness&, const Liveliness&) = default;

 private:
  LivelinessKind kind_;
  dds::core::Duration lease_;
};

// The shortest interval between two samples of an instance a reader wants to see.
class TimeBasedFilter {
 public:
  explicit TimeBasedFilter(
      const dds::core::Duration& minimum_separation = dds::core::Duration::zero())
      : separation_(minimum_separation) {}
  TimeBasedFilter& minimum_separation(const dds::core::Duration& d) {
    separation_ = d;
    return *this;
  }
  [[nodiscard]] const dds::core::Duration& minimum_separation() const noexcept {
    return separation_;
  }
  friend bool operator==(const TimeBasedFilter&, const TimeBasedFilter&) = default;

 private:
  dds::core::Duration separation_;
};

// The logical partitions a publisher or subscriber belongs to. Names may hold fnmatch
// wildcards; an empty list is the default partition "".
class Partition {
 public:
  Partition() = default;
  explicit Partition(const std::string& name) : names_{name} {}
  explicit Partition(const dds::core::StringSeq& names) : names_(names) {}
  Partition& name(const std::string& name) {
    names_ = {name};
    return *this;
  }
  Partition& name(const dds::core::StringSeq& names) {
    names_ = names;
    return *this;
  }
  [[nodiscard]] const dds::core::StringSeq& name() const noexcept { return names_; }
  friend bool operator==(const Partition&, const Partition&) = default;

 private:
  dds::core::StringSeq names_;
};

// Whether every sample must arrive (RELIABLE) and how long write() may block when the
// writer's resources are full.
class Reliability {
 public:
  explicit Reliability(
      ReliabilityKind::Type kind = ReliabilityKind::BEST_EFFORT,
      const dds::core::Duration& max_blocking_time = dds::core::Duration::from_millisecs(100))
      : kind_(kind), max_blocking_(max_blocking_time) {}
  static Reliability Reliable(
      const dds::core::Duration& max_blocking_time = dds::core::Duration::from_millisecs(100)) {
    return Reliability(ReliabilityKind::RELIABLE, max_blocking_time);
  }
  static Reliability BestEffort(
      const dds::core::Duration& max_blocking_time = dds::core::Duration::from_millisecs(100)) {
    return Reliability(ReliabilityKind::BEST_EFFORT, max_blocking_time);
  }
  Reliability& kind(ReliabilityKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  Reliability& max_blocking_time(const dds::core::Duration& d) {
    max_blocking_ = d;
    return *this;
  }
  [[nodiscard]] ReliabilityKind kind() const noexcept { return kind_; }
  [[nodiscard]] const dds::core::Duration& max_blocking_time() const noexcept {
    return max_blocking_;
  }
  friend bool operator==(const Reliability&, const Reliability&) = default;

 private:
  ReliabilityKind kind_;
  dds::core::Duration max_blocking_;
};

// Which timestamp orders the samples of an instance from several writers.
class DestinationOrder {
 public:
  explicit DestinationOrder(
      DestinationOrderKind::Type kind = DestinationOrderKind::BY_RECEPTION_TIMESTAMP) noexcept
      : kind_(kind) {}
  static DestinationOrder ReceptionTimestamp() noexcept {
    return DestinationOrder(DestinationOrderKind::BY_RECEPTION_TIMESTAMP);
  }
  static DestinationOrder SourceTimestamp() noexcept {
    return DestinationOrder(DestinationOrderKind::BY_SOURCE_TIMESTAMP);
  }
  DestinationOrder& kind(DestinationOrderKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  [[nodiscard]] DestinationOrderKind kind() const noexcept { return kind_; }
  friend bool operator==(const DestinationOrder&, const DestinationOrder&) = default;

 private:
  DestinationOrderKind kind_;
};

// How many samples per instance a writer or reader keeps: the last `depth`, or all (up to
// ResourceLimits).
class History {
 public:
  explicit History(HistoryKind::Type kind = HistoryKind::KEEP_LAST, std::int32_t depth = 1) noexcept
      : kind_(kind), depth_(depth) {}
  static History KeepAll() noexcept { return History(HistoryKind::KEEP_ALL, 1); }
  static History KeepLast(std::int32_t depth) noexcept {
    return History(HistoryKind::KEEP_LAST, depth);
  }
  History& kind(HistoryKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  History& depth(std::int32_t depth) noexcept {
    depth_ = depth;
    return *this;
  }
  [[nodiscard]] HistoryKind kind() const noexcept { return kind_; }
  [[nodiscard]] std::int32_t depth() const noexcept { return depth_; }
  friend bool operator==(const History&, const History&) = default;

 private:
  HistoryKind kind_;
  std::int32_t depth_;
};

// Upper bounds on a history cache; LENGTH_UNLIMITED means no bound.
class ResourceLimits {
 public:
  explicit ResourceLimits(std::int32_t max_samples = dds::core::LENGTH_UNLIMITED,
                          std::int32_t max_instances = dds::core::LENGTH_UNLIMITED,
                          std::int32_t max_samples_per_instance = dds::core::LENGTH_UNLIMITED)
      : max_samples_(max_samples),
        max_instances_(max_instances),
        max_samples_per_instance_(max_samples_per_instance) {}
  ResourceLimits& max_samples(std::int32_t n) noexcept {
    max_samples_ = n;
    return *this;
  }
  ResourceLimits& max_instances(std::int32_t n) noexcept {
    max_instances_ = n;
    return *this;
  }
  ResourceLimits& max_samples_per_instance(std::int32_t n) noexcept {
    max_samples_per_instance_ = n;
    return *this;
  }
  [[nodiscard]] std::int32_t max_samples() const noexcept { return max_samples_; }
  [[nodiscard]] std::int32_t max_instances() const noexcept { return max_instances_; }
  [[nodiscard]] std::int32_t max_samples_per_instance() const noexcept {
    return max_samples_per_instance_;
  }
  friend bool operator==(const ResourceLimits&, const ResourceLimits&) = default;

 private:
  std::int32_t max_samples_;
  std::int32_t max_instances_;
  std::int32_t max_samples_per_instance_;
};

// Whether unregistering an instance also disposes it.
class WriterDataLifecycle {
 public:
  explicit WriterDataLifecycle(bool autodispose_unregistered_instances = true) noexcept
      : autodispose_(autodispose_unregistered_instances) {}
  static WriterDataLifecycle AutoDisposeUnregisteredInstances() noexcept {
    return WriterDataLifecycle(true);
  }
  static WriterDataLifecycle ManuallyDisposeUnregisteredInstances() noexcept {
    return WriterDataLifecycle(false);
  }
  WriterDataLifecycle& autodispose_unregistered_instances(bool on) noexcept {
    autodispose_ = on;
    return *this;
  }
  [[nodiscard]] bool autodispose_unregistered_instances() const noexcept { return autodispose_; }
  friend bool operator==(const WriterDataLifecycle&, const WriterDataLifecycle&) = default;

 private:
  bool autodispose_;
};

// When a reader purges instances that lost all writers or were disposed.
class ReaderDataLifecycle {
 public:
  explicit ReaderDataLifecycle(
      const dds::core::Duration& autopurge_nowriter_samples_delay = dds::core::Duration::infinite(),
      const dds::core::Duration& autopurge_disposed_samples_delay = dds::core::Duration::infinite())
      : nowriter_delay_(autopurge_nowriter_samples_delay),
        disposed_delay_(autopurge_disposed_samples_delay) {}
  static ReaderDataLifecycle NoAutoPurgeDisposedSamples() { return ReaderDataLifecycle(); }
  static ReaderDataLifecycle AutoPurgeDisposedSamples(const dds::core::Duration& delay) {
    return ReaderDataLifecycle(dds::core::Duration::infinite(), delay);
  }
  ReaderDataLifecycle& autopurge_nowriter_samples_delay(const dds::core::Duration& d) {
    nowriter_delay_ = d;
    return *this;
  }
  ReaderDataLifecycle& autopurge_disposed_samples_delay(const dds::core::Duration& d) {
    disposed_delay_ = d;
    return *this;
  }
  [[nodiscard]] const dds::core::Duration& autopurge_nowriter_samples_delay() const noexcept {
    return nowriter_delay_;
  }
  [[nodiscard]] const dds::core::Duration& autopurge_disposed_samples_delay() const noexcept {
    return disposed_delay_;
  }
  friend bool operator==(const ReaderDataLifecycle&, const ReaderDataLifecycle&) = default;

 private:
  dds::core::Duration nowriter_delay_;
  dds::core::Duration disposed_delay_;
};

// The encodings a writer may use and a reader accepts (DDS-XTypes 1.3, 7.6.3.1): a writer
// writes in the first, a reader takes any listed, and a writer matches a reader only when
// the reader lists the writer's first. Empty (the default) is the topic type's own choice:
// a writer uses the type's default encoding, a reader takes every encoding the type allows
// (spindle docs/cdr.md, "Which encoding"). XML is not supported (refused where an entity
// is created).
enum class DataRepresentationId : std::int16_t { XCDR1 = 0, XML = 1, XCDR2 = 2 };
using DataRepresentationIdSeq = std::vector<DataRepresentationId>;

class DataRepresentation {
 public:
  DataRepresentation() = default;
  explicit DataRepresentation(const DataRepresentationIdSeq& value) : value_(value) {}
  DataRepresentation& value(const DataRepresentationIdSeq& value) {
    value_ = value;
    return *this;
  }
  [[nodiscard]] const DataRepresentationIdSeq& value() const noexcept { return value_; }
  friend bool operator==(const DataRepresentation&, const DataRepresentation&) = default;

 private:
  DataRepresentationIdSeq value_;
};

// policy_id<P>::value: the specification's QosPolicyId of P; policy_name<P>::name(): its
// name as the specification writes it without "QosPolicy" ("Reliability"). Vendor policies
// (spindle/policy/...) specialize both, with ids from 0x8000 up, through
// SPINDLE_DDS_POLICY_TRAITS (used inside namespace dds::core::policy).
template <class Policy>
struct policy_id;
template <class Policy>
struct policy_name;

#define SPINDLE_DDS_POLICY_TRAITS(Policy, Id, Name)       \
  template <>                                             \
  struct policy_id<Policy> {                              \
    static constexpr QosPolicyId value = Id;              \
  };                                                      \
  template <>                                             \
  struct policy_name<Policy> {                            \
    static const std::string& name() {                    \
      static const std::string policy_name_string = Name; \
      return policy_name_string;                          \
    }                                                     \
  }

SPINDLE_DDS_POLICY_TRAITS(UserData, 1, "UserData");
SPINDLE_DDS_POLICY_TRAITS(Durability, 2, "Durability");
SPINDLE_DDS_POLICY_TRAITS(Presentation, 3, "Presentation");
SPINDLE_DDS_POLICY_TRAITS(Deadline, 4, "Deadline");
SPINDLE_DDS_POLICY_TRAITS(LatencyBudget, 5, "LatencyBudget");
SPINDLE_DDS_POLICY_TRAITS(Ownership, 6, "Ownership");
SPINDLE_DDS_POLICY_TRAITS(OwnershipStrength, 7, "OwnershipStrength");
SPINDLE_DDS_POLICY_TRAITS(Liveliness, 8, "Liveliness");
SPINDLE_DDS_POLICY_TRAITS(TimeBasedFilter, 9, "TimeBasedFilter");
SPINDLE_DDS_POLICY_TRAITS(Partition, 10, "Partition");
SPINDLE_DDS_POLICY_TRAITS(Reliability, 11, "Reliability");
SPINDLE_DDS_POLICY_TRAITS(DestinationOrder, 12, "DestinationOrder");
SPINDLE_DDS_POLICY_TRAITS(History, 13, "History");
SPINDLE_DDS_POLICY_TRAITS(ResourceLimits, 14, "ResourceLimits");
SPINDLE_DDS_POLICY_TRAITS(EntityFactory, 15, "EntityFactory");
SPINDLE_DDS_POLICY_TRAITS(WriterDataLifecycle, 16, "WriterDataLifecycle");
SPINDLE_DDS_POLICY_TRAITS(ReaderDataLifecycle, 17, "ReaderDataLifecycle");
SPINDLE_DDS_POLICY_TRAITS(TopicData, 18, "TopicData");
SPINDLE_DDS_POLICY_TRAITS(GroupData, 19, "GroupData");
SPINDLE_DDS_POLICY_TRAITS(TransportPriority, 20, "TransportPriority");
SPINDLE_DDS_POLICY_TRAITS(Lifespan, 21, "Lifespan");
SPINDLE_DDS_POLICY_TRAITS(DurabilityService, 22, "DurabilityService");
SPINDLE_DDS_POLICY_TRAITS(DataRepresentation, 23, "DataRepresentation");

}  // namespace dds::core::policy

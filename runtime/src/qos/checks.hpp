// The QoS rules the entity layer enforces (DDS 1.4 §2.2.3), for the six entity QoS classes:
//
//  - consistency of one QoS (find_inconsistency / check_consistent): history depth within
//    resource limits, max_samples >= max_samples_per_instance, deadline period not shorter
//    than the time-based filter, fsync period with periodic fsync, engine ring limits, ...
//    Violations throw dds::core::InconsistentPolicyError naming the policies and values.
//  - request/offered compatibility of a writer and a reader (incompatible_policies): the
//    QosPolicyIds of every policy that fails the specification's RxO rule; empty = match.
//    The entity layer raises OFFERED_/REQUESTED_INCOMPATIBLE_QOS with these ids.
//  - partition matching with fnmatch wildcards (partitions_match).
//  - which policies may change after enable() (check_changeable).
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dds/core/policy/CorePolicy.hpp>
#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/policy/Consistency.hpp>

namespace spindle::qos {

// A contradiction inside one QoS. `keys` are the profile-schema keys of the values
// involved ("history.depth", "resource_limits.max_samples_per_instance"), so the profile
// loader can point at the line that set them; `message` names policies and values:
// "History.depth (8) > ResourceLimits.max_samples_per_instance (4)".
struct Inconsistency {
  std::vector<std::string> keys;
  std::string message;
};

[[nodiscard]] std::optional<Inconsistency> find_inconsistency(
    const dds::domain::qos::DomainParticipantQos& qos);
[[nodiscard]] std::optional<Inconsistency> find_inconsistency(const dds::topic::qos::TopicQos& qos);
[[nodiscard]] std::optional<Inconsistency> find_inconsistency(
    const dds::pub::qos::PublisherQos& qos);
[[nodiscard]] std::optional<Inconsistency> find_inconsistency(
    const dds::sub::qos::SubscriberQos& qos);
[[nodiscard]] std::optional<Inconsistency> find_inconsistency(
    const dds::pub::qos::DataWriterQos& qos);
[[nodiscard]] std::optional<Inconsistency> find_inconsistency(
    const dds::sub::qos::DataReaderQos& qos);

// Throws dds::core::InconsistentPolicyError with the message of find_inconsistency().
[[noreturn]] void throw_inconsistent(const Inconsistency& bad);
template <class Q>
void check_consistent(const Q& qos) {
  if (auto bad = find_inconsistency(qos)) throw_inconsistent(*bad);
}

// The ids (policy_id<P>::value, ascending) of the policies whose requested/offered rule a
// writer with `offered` and a reader with `requested` break; empty when they match.
// Durability, Deadline, LatencyBudget, Liveliness (kind and lease), Reliability,
// DestinationOrder, Ownership and Consistency are compared.
[[nodiscard]] std::vector<dds::core::policy::QosPolicyId> incompatible_policies(
    const dds::pub::qos::DataWriterQos& offered, const dds::sub::qos::DataReaderQos& requested);
// The same, plus Presentation of the writer's publisher against the reader's subscriber.
[[nodiscard]] std::vector<dds::core::policy::QosPolicyId> incompatible_policies(
    const dds::pub::qos::PublisherQos& publisher, const dds::pub::qos::DataWriterQos& offered,
    const dds::sub::qos::SubscriberQos& subscriber, const dds::sub::qos::DataReaderQos& requested);

// One partition name against another: equal strings match; a name with wildcards (*, ?,
// [...], fnmatch rules) matches a name without; two names that both have wildcards never
// match (DDS 1.4 §2.2.3.13).
[[nodiscard]] bool partition_names_match(std::string_view a, std::string_view b) noexcept;
// Whether a publisher and a subscriber share a partition: some name of one matches some
// name of the other; an empty list stands for the default partition "".
[[nodiscard]] bool partitions_match(const dds::core::policy::Partition& publisher,
                                    const dds::core::policy::Partition& subscriber);

// The consistency level the data path must provide for an entity: its Consistency kind,
// raised to what its Durability implies (TRANSIENT_LOCAL -> VOLATILE, TRANSIENT and
// PERSISTENT -> LOGGED), so standard DDS code asking for durability gets the matching
// Spindle level.
[[nodiscard]] spindle::policy::ConsistencyKind effective_consistency(
    const dds::core::policy::Durability& durability,
    const spindle::policy::Consistency& consistency) noexcept;

// The first policy (in the QoS's order) that differs between `current` and `next` and may
// not change once the entity is enabled; nullopt when `next` may replace `current`.
// Changeable: Deadline, LatencyBudget, TransportPriority, Lifespan, UserData, TopicData,
// GroupData, Partition, OwnershipStrength, EntityFactory, WriterDataLifecycle,
// ReaderDataLifecycle, TimeBasedFilter.
template <class Q>
[[nodiscard]] std::optional<dds::core::policy::QosPolicyId> immutable_change(const Q& current,
                                                                             const Q& next);
// Throws dds::core::ImmutablePolicyError naming the first such policy.
template <class Q>
void check_changeable(const Q& current, const Q& next);

}  // namespace spindle::qos

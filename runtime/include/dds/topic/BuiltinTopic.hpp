// The DDS built-in topic types (DDS-PSM-Cxx §7.5.4, DCPS §2.2.5): what a participant
// discovers about the domain, read through the four readers of its built-in subscriber
// (dds::sub::builtin_subscriber): "DCPSParticipant", "DCPSTopic", "DCPSPublication" and
// "DCPSSubscription". Each sample describes one participant, topic, writer or reader with
// its QoS as discovered; an entity that goes makes its instance NOT_ALIVE_DISPOSED.
//
// The data comes from discovery (runtime/src/discovery/records.hpp), never over the wire as
// samples of these types: they have no CDR codec, and their TypeSupport (below) only gives
// the type name and the instance key.
//
// BuiltinTopicKey: three int32, {member id, entity serial, 0}; a writer's or reader's key
// names the same entity as its instance handle (the handle matched_publications() gives).
//
// Threading: plain values.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <dds/core/policy/CorePolicy.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

class BuiltinTopicKey {
 public:
  BuiltinTopicKey() = default;
  BuiltinTopicKey(std::int32_t a, std::int32_t b, std::int32_t c) : value_{a, b, c} {}
  [[nodiscard]] const std::int32_t* value() const noexcept { return value_.data(); }
  void value(const std::int32_t v[3]) { value_ = {v[0], v[1], v[2]}; }
  friend bool operator==(const BuiltinTopicKey&, const BuiltinTopicKey&) = default;

 private:
  std::array<std::int32_t, 3> value_{};
};

// Accessors as the PSM names them; the setters are Spindle's (the runtime fills the data).
#define SPINDLE_BUILTIN_FIELD(Type, name)           \
 public:                                            \
  [[nodiscard]] const Type& name() const noexcept { \
    return name##_;                                 \
  }                                                 \
  void name(const Type& v) {                        \
    name##_ = v;                                    \
  }                                                 \
                                                    \
 private:                                           \
  Type name##_{};

class ParticipantBuiltinTopicData {
  SPINDLE_BUILTIN_FIELD(BuiltinTopicKey, key)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::UserData, user_data)
};

class TopicBuiltinTopicData {
  SPINDLE_BUILTIN_FIELD(BuiltinTopicKey, key)
  SPINDLE_BUILTIN_FIELD(std::string, name)
  SPINDLE_BUILTIN_FIELD(std::string, type_name)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Durability, durability)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::DurabilityService, durability_service)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Deadline, deadline)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::LatencyBudget, latency_budget)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Liveliness, liveliness)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Reliability, reliability)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::TransportPriority, transport_priority)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Lifespan, lifespan)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::DestinationOrder, destination_order)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::History, history)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::ResourceLimits, resource_limits)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Ownership, ownership)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::TopicData, topic_data)
};

class PublicationBuiltinTopicData {
  SPINDLE_BUILTIN_FIELD(BuiltinTopicKey, key)
  SPINDLE_BUILTIN_FIELD(BuiltinTopicKey, participant_key)
  SPINDLE_BUILTIN_FIELD(std::string, topic_name)
  SPINDLE_BUILTIN_FIELD(std::string, type_name)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Durability, durability)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::DurabilityService, durability_service)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Deadline, deadline)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::LatencyBudget, latency_budget)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Liveliness, liveliness)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Reliability, reliability)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Lifespan, lifespan)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::UserData, user_data)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Ownership, ownership)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::OwnershipStrength, ownership_strength)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::DestinationOrder, destination_order)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Presentation, presentation)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Partition, partition)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::TopicData, topic_data)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::GroupData, group_data)
};

class SubscriptionBuiltinTopicData {
  SPINDLE_BUILTIN_FIELD(BuiltinTopicKey, key)
  SPINDLE_BUILTIN_FIELD(BuiltinTopicKey, participant_key)
  SPINDLE_BUILTIN_FIELD(std::string, topic_name)
  SPINDLE_BUILTIN_FIELD(std::string, type_name)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Durability, durability)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Deadline, deadline)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::LatencyBudget, latency_budget)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Liveliness, liveliness)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Reliability, reliability)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Ownership, ownership)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::DestinationOrder, destination_order)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::UserData, user_data)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::TimeBasedFilter, time_based_filter)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Presentation, presentation)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::Partition, partition)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::TopicData, topic_data)
  SPINDLE_BUILTIN_FIELD(dds::core::policy::GroupData, group_data)
};

#undef SPINDLE_BUILTIN_FIELD

}  // namespace dds::topic

namespace spindle::detail {

// The built-in types' TypeSupport: a type name and the key hash (the key's three int32,
// big-endian, then zeros); no codec — the samples never travel as bytes. A writer on one
// of these types is refused (Publisher::create_writer).
template <class T>
const TypeSupport& builtin_type_support(std::string_view name) {
  static const TypeSupport table{
      name,
      true,
      0,
      cdr::kXcdr1Bit | cdr::kXcdr2Bit,
      cdr::Encoding::Xcdr1,
      nullptr,
      nullptr,
      [](const void* s) {
        cdr::KeyHash h{};
        const std::int32_t* v = static_cast<const T*>(s)->key().value();
        for (std::size_t i = 0; i < 3; ++i)
          for (std::size_t b = 0; b < 4; ++b)
            h[i * 4 + b] =
                static_cast<std::uint8_t>(static_cast<std::uint32_t>(v[i]) >> (24 - 8 * b));
        return h;
      },
      nullptr,
      0,
      nullptr,
      nullptr,
  };
  return table;
}

template <>
inline const TypeSupport& type_support<dds::topic::ParticipantBuiltinTopicData>() {
  return builtin_type_support<dds::topic::ParticipantBuiltinTopicData>(
      "DDS::ParticipantBuiltinTopicData");
}
template <>
inline const TypeSupport& type_support<dds::topic::TopicBuiltinTopicData>() {
  return builtin_type_support<dds::topic::TopicBuiltinTopicData>("DDS::TopicBuiltinTopicData");
}
template <>
inline const TypeSupport& type_support<dds::topic::PublicationBuiltinTopicData>() {
  return builtin_type_support<dds::topic::PublicationBuiltinTopicData>(
      "DDS::PublicationBuiltinTopicData");
}
template <>
inline const TypeSupport& type_support<dds::topic::SubscriptionBuiltinTopicData>() {
  return builtin_type_support<dds::topic::SubscriptionBuiltinTopicData>(
      "DDS::SubscriptionBuiltinTopicData");
}

}  // namespace spindle::detail

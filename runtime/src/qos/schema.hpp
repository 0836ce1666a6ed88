// The YAML schema of QoS profile files, defined once (STYLE 10). Every policy the entity
// QoS classes hold has a table of fields (YAML key, type, range, documentation, accessors);
// a profile section's keys are "<policy>.<field>" for exactly the policies of that
// section's QoS class, so a policy cannot be set where the DDS specification does not put
// it. The profile loader (profiles.cpp) reads through these tables, defaults come from the
// QoS classes' constructors, and schema_markdown() renders qos-profiles/schema.md from the
// same tables (a test fails when the checked-in file differs).
//
// Threading: the tables are built once on first use (thread-safe static initialization) and
// immutable afterwards.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>

#include "core/yaml_schema.hpp"

namespace spindle::qos {

// The name of the profile section that configures entity QoS class Q.
template <class Q>
inline constexpr std::string_view section_name = std::string_view();
template <>
inline constexpr std::string_view section_name<dds::domain::qos::DomainParticipantQos> =
    "participant";
template <>
inline constexpr std::string_view section_name<dds::topic::qos::TopicQos> = "topic";
template <>
inline constexpr std::string_view section_name<dds::pub::qos::PublisherQos> = "publisher";
template <>
inline constexpr std::string_view section_name<dds::sub::qos::SubscriberQos> = "subscriber";
template <>
inline constexpr std::string_view section_name<dds::pub::qos::DataWriterQos> = "writer";
template <>
inline constexpr std::string_view section_name<dds::sub::qos::DataReaderQos> = "reader";

// The fields of the profile section for entity QoS class Q (one of the six entity QoS
// classes), in the order of Q's policies.
template <class Q>
[[nodiscard]] const std::vector<core::Field<Q>>& section_fields();

extern template const std::vector<core::Field<dds::domain::qos::DomainParticipantQos>>&
section_fields<dds::domain::qos::DomainParticipantQos>();
extern template const std::vector<core::Field<dds::topic::qos::TopicQos>>&
section_fields<dds::topic::qos::TopicQos>();
extern template const std::vector<core::Field<dds::pub::qos::PublisherQos>>&
section_fields<dds::pub::qos::PublisherQos>();
extern template const std::vector<core::Field<dds::sub::qos::SubscriberQos>>&
section_fields<dds::sub::qos::SubscriberQos>();
extern template const std::vector<core::Field<dds::pub::qos::DataWriterQos>>&
section_fields<dds::pub::qos::DataWriterQos>();
extern template const std::vector<core::Field<dds::sub::qos::DataReaderQos>>&
section_fields<dds::sub::qos::DataReaderQos>();

// A structural key of the file or of a profile, with what it holds.
struct KeyDoc {
  std::string_view key;
  std::string_view type;
  std::string_view doc;
};
// Top level of a profile file: version, include, profiles.
[[nodiscard]] const std::vector<KeyDoc>& file_keys();
// Keys of one profile: base, description, and the six entity sections.
[[nodiscard]] const std::vector<KeyDoc>& profile_keys();

// The only file format version this loader reads.
inline constexpr int kProfileFormatVersion = 1;

// The schema document (qos-profiles/schema.md).
[[nodiscard]] std::string schema_markdown();

}  // namespace spindle::qos

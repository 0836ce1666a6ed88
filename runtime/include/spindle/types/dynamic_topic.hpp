// Topics, writers and readers of types known only at run time, through the standard API:
// `dds::topic::Topic<spindle::types::DynamicSample>` made by create_topic() below, then
// `dds::pub::DataWriter<DynamicSample>` and `dds::sub::DataReader<DynamicSample>` as for any
// generated type. A DynamicSample is the type and a JSON value (<spindle/types/dynamic_data.hpp>);
// on the wire it is exactly what generated code of the same IDL writes, so dynamic and
// generated participants share a topic (same type name, same bytes, same key hash).
//
// The TypeLibrary that holds the type must outlive every entity made from it.
// What a dynamic topic does not have: loans (a DynamicSample is not trivially copyable) and
// content filters (no member tables); both are refused as for such generated types.
//
// Threading: as the entities; a DynamicSample is a plain value.
#pragma once

#include <dds/domain/DomainParticipant.hpp>
#include <dds/topic/Topic.hpp>
#include <spindle/detail/type_support.hpp>
#include <spindle/types/dynamic_data.hpp>

#include <memory>
#include <string>
#include <vector>

namespace spindle::types {

struct DynamicSample {
  const Type* type = nullptr;
  Json value;
  // Optional: `value` already encoded (encapsulated, as encode() writes it). A writer whose
  // encoding is the one these bytes are in sends them as they are, without encoding `value`
  // again — whoever sets it vouches that they are `value`'s bytes (a relay passing on what
  // it read). Readers set it to the bytes they received. Not compared by ==.
  std::shared_ptr<const std::vector<std::byte>> encoded = nullptr;
  friend bool operator==(const DynamicSample& a, const DynamicSample& b) {
    return a.type == b.type && a.value == b.value;
  }
};

// What readers put in a DynamicSample's value.
enum class Decoding {
  full,      // the whole sample as JSON
  key_only,  // its key members alone (decode_key_of): for a relay that passes `encoded` on
};

// The runtime's table for `type` (a struct or union): encodes in the type's default encoding
// unless a writer's DataRepresentation says otherwise, decodes either; readers' samples carry
// `encoded` and, as `decoding` says, the whole value or its key. Throws
// std::invalid_argument for a type that cannot be a topic's.
[[nodiscard]] const spindle::detail::TypeSupport& type_support(const Type& type,
                                                               Decoding decoding = Decoding::full);

// A topic of `type` named `name`: as dds::topic::Topic<T>(dp, name, qos) for generated T. The
// topic's type name is the type's scoped name (what idlc-generated code registers).
[[nodiscard]] dds::topic::Topic<DynamicSample> create_topic(
    const dds::domain::DomainParticipant& dp, const std::string& name, const Type& type,
    const dds::topic::qos::TopicQos& qos);
[[nodiscard]] dds::topic::Topic<DynamicSample> create_topic(
    const dds::domain::DomainParticipant& dp, const std::string& name, const Type& type);
// As above; its readers decode as `decoding` says.
[[nodiscard]] dds::topic::Topic<DynamicSample> create_topic(
    const dds::domain::DomainParticipant& dp, const std::string& name, const Type& type,
    const dds::topic::qos::TopicQos& qos, Decoding decoding);

// The type of a topic found in the running domain, built into `library` from the XTypes type
// information its Topic records carried (every Topic of a generated or dynamic type announces
// it; <spindle/types/type_object.hpp>). Null when no member has announced the topic, or none
// with type information. Throws TypeObjectError when the information cannot be used, and
// std::invalid_argument when it names a type the library holds differently.
[[nodiscard]] const Type* discovered_type(const dds::domain::DomainParticipant& dp,
                                          const std::string& topic_name, TypeLibrary& library);

}  // namespace spindle::types

// dds::pub::qos::PublisherQos: the policies of a Publisher (DDS 1.4 §2.2.3: PRESENTATION,
// PARTITION, GROUP_DATA, ENTITY_FACTORY) with the specification's defaults.
//
// Threading: a value type.
#pragma once

#include <dds/core/EntityQos.hpp>
#include <dds/core/policy/CorePolicy.hpp>

namespace dds::pub::qos {

class PublisherQos
    : public dds::core::TEntityQos<PublisherQos, dds::core::policy::Presentation,
                                   dds::core::policy::Partition, dds::core::policy::GroupData,
                                   dds::core::policy::EntityFactory> {};

}  // namespace dds::pub::qos

// dds::sub::qos::SubscriberQos: the policies of a Subscriber (DDS 1.4 §2.2.3: PRESENTATION,
// PARTITION, GROUP_DATA, ENTITY_FACTORY) with the specification's defaults.
//
// Threading: a value type.
#pragma once

#include <dds/core/EntityQos.hpp>
#include <dds/core/policy/CorePolicy.hpp>

namespace dds::sub::qos {

class SubscriberQos
    : public dds::core::TEntityQos<SubscriberQos, dds::core::policy::Presentation,
                                   dds::core::policy::Partition, dds::core::policy::GroupData,
                                   dds::core::policy::EntityFactory> {};

}  // namespace dds::sub::qos

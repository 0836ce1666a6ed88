// dds::domain::qos::DomainParticipantQos: the policies of a DomainParticipant (DDS 1.4
// §2.2.3: USER_DATA, ENTITY_FACTORY) with the specification's defaults.
//
// Threading: a value type.
#pragma once

#include <dds/core/EntityQos.hpp>
#include <dds/core/policy/CorePolicy.hpp>

namespace dds::domain::qos {

class DomainParticipantQos
    : public dds::core::TEntityQos<DomainParticipantQos, dds::core::policy::UserData,
                                   dds::core::policy::EntityFactory> {};

}  // namespace dds::domain::qos

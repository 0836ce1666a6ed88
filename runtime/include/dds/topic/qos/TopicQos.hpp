// dds::topic::qos::TopicQos: the policies of a Topic (DDS 1.4 §2.2.3) plus the Spindle
// Consistency and Engine policies, with the specification's defaults (Reliability
// BEST_EFFORT, History KEEP_LAST 1, Durability VOLATILE, ...) and Consistency ATOMIC.
// DataWriterQos and DataReaderQos are assignable from it (the shared policies are copied).
//
// Threading: a value type.
#pragma once

#include <dds/core/EntityQos.hpp>
#include <dds/core/policy/CorePolicy.hpp>
#include <spindle/policy/Consistency.hpp>
#include <spindle/policy/Engine.hpp>

namespace dds::topic::qos {

class TopicQos : public dds::core::TEntityQos<
                     TopicQos, dds::core::policy::TopicData, dds::core::policy::Durability,
                     dds::core::policy::DurabilityService, dds::core::policy::Deadline,
                     dds::core::policy::LatencyBudget, dds::core::policy::Liveliness,
                     dds::core::policy::Reliability, dds::core::policy::DestinationOrder,
                     dds::core::policy::History, dds::core::policy::ResourceLimits,
                     dds::core::policy::TransportPriority, dds::core::policy::Lifespan,
                     dds::core::policy::Ownership, spindle::policy::Consistency,
                     spindle::policy::Engine, dds::core::policy::DataRepresentation> {};

}  // namespace dds::topic::qos

// dds::pub::qos::DataWriterQos: the policies of a DataWriter (DDS 1.4 §2.2.3) plus the
// Spindle Consistency and Engine policies. Defaults are the specification's, where a
// writer differs from a topic: Reliability RELIABLE with 100 ms max_blocking_time.
// Consistency defaults to ATOMIC (what a writer offers).
//
// Constructing or assigning from a TopicQos copies the policies the two share (the PSM's
// `DataWriterQos q = topic.qos();`); assignment keeps the writer-only policies (UserData,
// OwnershipStrength, WriterDataLifecycle).
//
// Threading: a value type.
#pragma once

#include <dds/core/EntityQos.hpp>
#include <dds/core/policy/CorePolicy.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/policy/Consistency.hpp>
#include <spindle/policy/Engine.hpp>

namespace dds::pub::qos {

class DataWriterQos : public dds::core::TEntityQos<
                          DataWriterQos, dds::core::policy::UserData, dds::core::policy::Durability,
                          dds::core::policy::DurabilityService, dds::core::policy::Deadline,
                          dds::core::policy::LatencyBudget, dds::core::policy::Liveliness,
                          dds::core::policy::Reliability, dds::core::policy::DestinationOrder,
                          dds::core::policy::History, dds::core::policy::ResourceLimits,
                          dds::core::policy::TransportPriority, dds::core::policy::Lifespan,
                          dds::core::policy::Ownership, dds::core::policy::OwnershipStrength,
                          dds::core::policy::WriterDataLifecycle, spindle::policy::Consistency,
                          spindle::policy::Engine, dds::core::policy::DataRepresentation> {
 public:
  DataWriterQos() { policy(dds::core::policy::Reliability::Reliable()); }
  DataWriterQos(const dds::topic::qos::TopicQos& topic_qos)  // NOLINT(google-explicit-*)
      : DataWriterQos() {
    copy_shared_policies(topic_qos);
  }
  DataWriterQos& operator=(const dds::topic::qos::TopicQos& topic_qos) {
    copy_shared_policies(topic_qos);
    return *this;
  }
};

}  // namespace dds::pub::qos

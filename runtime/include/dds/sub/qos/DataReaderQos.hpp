// dds::sub::qos::DataReaderQos: the policies of a DataReader (DDS 1.4 §2.2.3) plus the
// Spindle Consistency and Engine policies, with the specification's defaults (Reliability
// BEST_EFFORT, History KEEP_LAST 1, ...). Consistency defaults to UNORDERED: like the
// standard request/offered policies, a default reader requests the least, so it matches
// every writer and receives whatever order the writers' subgroup provides.
//
// Constructing or assigning from a TopicQos copies the policies the two share (the PSM's
// `DataReaderQos q = topic.qos();`); assignment keeps the reader-only policies (UserData,
// TimeBasedFilter, ReaderDataLifecycle).
//
// Threading: a value type.
#pragma once

#include <dds/core/EntityQos.hpp>
#include <dds/core/policy/CorePolicy.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/policy/Consistency.hpp>
#include <spindle/policy/Engine.hpp>

namespace dds::sub::qos {

class DataReaderQos : public dds::core::TEntityQos<
                          DataReaderQos, dds::core::policy::UserData, dds::core::policy::Durability,
                          dds::core::policy::Deadline, dds::core::policy::LatencyBudget,
                          dds::core::policy::Liveliness, dds::core::policy::Reliability,
                          dds::core::policy::DestinationOrder, dds::core::policy::History,
                          dds::core::policy::ResourceLimits, dds::core::policy::Ownership,
                          dds::core::policy::TimeBasedFilter,
                          dds::core::policy::ReaderDataLifecycle, spindle::policy::Consistency,
                          spindle::policy::Engine, dds::core::policy::DataRepresentation> {
 public:
  DataReaderQos() { policy(spindle::policy::Consistency::Unordered()); }
  DataReaderQos(const dds::topic::qos::TopicQos& topic_qos)  // NOLINT(google-explicit-*)
      : DataReaderQos() {
    copy_shared_policies(topic_qos);
  }
  DataReaderQos& operator=(const dds::topic::qos::TopicQos& topic_qos) {
    copy_shared_policies(topic_qos);
    return *this;
  }
};

}  // namespace dds::sub::qos

// The names the QoS tests use unqualified: every policy, the entity QoS classes, the
// Spindle policies, and ms() for durations.
#pragma once

#include <cstdint>

#include <dds/core/Duration.hpp>
#include <dds/core/policy/CorePolicy.hpp>
#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/policy/Consistency.hpp>
#include <spindle/policy/Engine.hpp>

using namespace dds::core::policy;  // NOLINT(google-build-using-namespace): test shorthand
using dds::core::Duration;
using dds::domain::qos::DomainParticipantQos;
using dds::pub::qos::DataWriterQos;
using dds::pub::qos::PublisherQos;
using dds::sub::qos::DataReaderQos;
using dds::sub::qos::SubscriberQos;
using dds::topic::qos::TopicQos;
using spindle::policy::Consistency;
using spindle::policy::ConsistencyKind;
using spindle::policy::Engine;
using spindle::policy::FsyncKind;

inline Duration ms(std::uint64_t n) {
  return Duration::from_millisecs(n);
}

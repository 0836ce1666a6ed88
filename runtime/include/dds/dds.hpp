// The Spindle DDS umbrella header: the whole ISO C++ PSM API (DDS-PSM-Cxx) — core types,
// QoS and policies, conditions and WaitSets, the domain, topics, publication and
// subscription — plus the Spindle consistency policies. `#include <dds/dds.hpp>` and link
// the CMake target Spindle::dds.
//
// Threading: see each entity's header; every DCPS operation may be called from any thread.
#pragma once

#include <dds/core/Duration.hpp>
#include <dds/core/Entity.hpp>
#include <dds/core/Exception.hpp>
#include <dds/core/InstanceHandle.hpp>
#include <dds/core/QosProvider.hpp>
#include <dds/core/Time.hpp>
#include <dds/core/WeakReference.hpp>
#include <dds/core/cond/Condition.hpp>
#include <dds/core/cond/GuardCondition.hpp>
#include <dds/core/cond/StatusCondition.hpp>
#include <dds/core/cond/WaitSet.hpp>
#include <dds/core/policy/CorePolicy.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/status/Status.hpp>
#include <dds/core/types.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/domain/DomainParticipantListener.hpp>
#include <dds/domain/discovery.hpp>
#include <dds/domain/find.hpp>
#include <dds/pub/AnyDataWriter.hpp>
#include <dds/pub/CoherentSet.hpp>
#include <dds/pub/DataWriter.hpp>
#include <dds/pub/DataWriterListener.hpp>
#include <dds/pub/Publisher.hpp>
#include <dds/pub/discovery.hpp>
#include <dds/pub/find.hpp>
#include <dds/sub/AnyDataReader.hpp>
#include <dds/sub/CoherentAccess.hpp>
#include <dds/sub/DataReader.hpp>
#include <dds/sub/DataReaderListener.hpp>
#include <dds/sub/LoanedSamples.hpp>
#include <dds/sub/Query.hpp>
#include <dds/sub/Sample.hpp>
#include <dds/sub/SampleInfo.hpp>
#include <dds/sub/SharedSamples.hpp>
#include <dds/sub/Subscriber.hpp>
#include <dds/sub/cond/QueryCondition.hpp>
#include <dds/sub/cond/ReadCondition.hpp>
#include <dds/sub/discovery.hpp>
#include <dds/sub/find.hpp>
#include <dds/sub/status/DataState.hpp>
#include <dds/topic/BuiltinTopic.hpp>
#include <dds/topic/ContentFilteredTopic.hpp>
#include <dds/topic/Filter.hpp>
#include <dds/topic/Topic.hpp>
#include <dds/topic/TopicDescription.hpp>
#include <dds/topic/TopicInstance.hpp>
#include <dds/topic/TopicListener.hpp>
#include <dds/topic/discovery.hpp>
#include <dds/topic/find.hpp>
#include <spindle/policy/Consistency.hpp>
#include <spindle/policy/Engine.hpp>

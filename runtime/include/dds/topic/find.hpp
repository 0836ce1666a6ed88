// dds::topic::find: the topic of a given name that a participant already has
// (DDS-PSM-Cxx §7.5.2; DCPS lookup_topicdescription). Lets one part of a program reach a
// topic another part created without passing it around:
//
//   auto t = dds::topic::find<dds::topic::Topic<Sensors::Reading>>(participant, "Readings");
//   if (t == dds::core::null) ...   // no such topic in this participant
//
// Threading: may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include <dds/core/Exception.hpp>
#include <dds/core/types.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/topic/Topic.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

// The participant's topic `topic_name` as TOPIC (Topic<T> or AnyTopic), or dds::core::null
// when it has none — or has it with a type other than T (as the main implementations do).
template <typename TOPIC>
TOPIC find(const dds::domain::DomainParticipant& dp, const std::string& topic_name) {
  std::shared_ptr<spindle::detail::TopicCore> core = dp.core().find_topic(topic_name);
  if (!core) return TOPIC(dds::core::null);
  if constexpr (requires { typename TOPIC::DataType; }) {
    if (core->type().type_name !=
        spindle::detail::type_support<typename TOPIC::DataType>().type_name)
      return TOPIC(dds::core::null);
  }
  return TOPIC(std::move(core));
}

}  // namespace dds::topic

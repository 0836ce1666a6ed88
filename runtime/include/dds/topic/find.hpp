// dds::topic::find: the topic of a given name that a participant already has
// (DDS-PSM-Cxx §7.5.2; DCPS lookup_topicdescription). Lets one part of a program reach a
// topic another part created without passing it around:
//
//   auto t = dds::topic::find<dds::topic::Topic<Sensors::Reading>>(participant, "Readings");
//   if (t == dds::core::null) ...   // no such topic in this participant
//
// Threading: may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <dds/core/Exception.hpp>
#include <dds/core/types.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/sub/DataReader.hpp>
#include <dds/sub/find.hpp>
#include <dds/topic/BuiltinTopic.hpp>
#include <dds/topic/Topic.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

// The participant's topic `topic_name` as TOPIC (Topic<T> or AnyTopic), or dds::core::null
// when it has none. InvalidDowncastError when the topic exists with a type other than T.
template <typename TOPIC>
TOPIC find(const dds::domain::DomainParticipant& dp, const std::string& topic_name) {
  std::shared_ptr<spindle::detail::TopicCore> core = dp.core().find_topic(topic_name);
  if (!core) return TOPIC(dds::core::null);
  if constexpr (requires { typename TOPIC::DataType; }) {
    const auto wanted = spindle::detail::type_support<typename TOPIC::DataType>().type_name;
    if (core->type().type_name != wanted) {
      std::string msg = "dds::topic::find: topic '";
      msg += topic_name + "' has type '" + std::string(core->type().type_name) + "', not '" +
             std::string(wanted) + "'";
      throw dds::core::InvalidDowncastError(msg);
    }
  }
  return TOPIC(std::move(core));
}

// The topic `topic_name`: this participant's, or — once some member of the domain has an
// endpoint on it (the DCPSTopic built-in topic) — a new Topic<T> of this participant made
// for it. Waits up to `timeout`; dds::core::null when none appeared. InvalidDowncastError
// when the domain's topic has a type other than T. (AnyTopic finds local topics only: a new
// topic needs its type.)
template <typename TOPIC>
TOPIC discover(const dds::domain::DomainParticipant& dp, const std::string& topic_name,
               const dds::core::Duration& timeout = dds::core::Duration::infinite()) {
  const auto until = timeout.is_infinite() ? std::chrono::steady_clock::time_point::max()
                                           : std::chrono::steady_clock::now() + timeout.to_chrono();
  std::vector<dds::sub::DataReader<TopicBuiltinTopicData>> topics;
  for (;;) {
    if (TOPIC local = find<TOPIC>(dp, topic_name); local != dds::core::null) return local;
    if constexpr (requires { typename TOPIC::DataType; }) {
      if (topics.empty()) {
        dds::sub::find<dds::sub::DataReader<TopicBuiltinTopicData>>(
            dds::sub::builtin_subscriber(dp), "DCPSTopic", std::back_inserter(topics));
      }
      const auto want = spindle::detail::type_support<typename TOPIC::DataType>().type_name;
      for (auto& r : topics) {
        for (const auto& s : r.select().state(dds::sub::status::DataState::any()).read()) {
          if (!s.info().valid() || s.data().name() != topic_name) continue;
          if (s.data().type_name() != want) {
            throw dds::core::InvalidDowncastError("dds::topic::discover: topic '" + topic_name +
                                                  "' has type '" + s.data().type_name() + "'");
          }
          return TOPIC(dp, topic_name);
        }
      }
    }
    if (std::chrono::steady_clock::now() >= until) return TOPIC(dds::core::null);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace dds::topic

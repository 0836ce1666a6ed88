// Topic discovery (DDS-PSM-Cxx §7.5.2, dds/topic/discovery.hpp): the topics of the domain,
// as discovery knows them, as Topics of a participant; and ignore.
//
// What "the domain's topics" are: every member announces each Topic it creates (a topic
// record: names and TopicQos) and each writer and reader (their records name the topic), so
// a topic is discovered from the moment some member has a Topic or an endpoint on it, until
// the last of those goes (the DCPSTopic built-in topic shows the same set).
//
//   auto t = dds::topic::discover<dds::topic::Topic<Sensors::Reading>>(dp, "Readings",
//                                                                     dds::core::Duration(5));
//   std::vector<dds::topic::Topic<Sensors::Reading>> all;
//   dds::topic::discover_all<dds::topic::Topic<Sensors::Reading>>(dp, std::back_inserter(all));
//
// A discovered topic is returned as a Topic of `dp`: `dp`'s own one when it has the name,
// else one made for it (with `dp`'s default TopicQos). That needs the type: Topic<T> finds
// the domain's topics of T's type; AnyTopic and TopicDescription, which carry no type, find
// those whose type this program uses (some Topic, writer or reader of it was made here:
// spindle::detail::find_type). The others are data in DCPSTopic; discovering one of them by
// name is an UnsupportedError naming its type.
//
// ignore: tells a participant to act as if a remote Topic did not exist (DCPS
// ignore_topic). Topics match nothing by themselves (endpoints match), so an ignored topic
// handle is kept, irreversibly, and has no effect on matching, as DCPS allows (ignoring a
// topic does not ignore its endpoints). A handle not seen yet is kept and applies once it
// appears. A nil handle is an InvalidArgumentError, a closed participant an
// AlreadyClosedError.
//
// Threading: may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <dds/core/Duration.hpp>
#include <dds/core/Exception.hpp>
#include <dds/core/InstanceHandle.hpp>
#include <dds/core/types.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/topic/Topic.hpp>
#include <dds/topic/TopicDescription.hpp>
#include <dds/topic/find.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

namespace detail {

template <typename TOPIC>
inline constexpr bool is_typed = requires {
  typename TOPIC::DataType;
};

// What a domain topic of type `type_name` is made with as a TOPIC of this program: T's type
// for a Topic<T> of that type; for AnyTopic and TopicDescription, the program's type of that
// name. Null when there is none.
template <typename TOPIC>
const spindle::detail::TypeSupport* type_for(const std::string& type_name) {
  if constexpr (is_typed<TOPIC>) {
    const auto& t = spindle::detail::type_support<typename TOPIC::DataType>();
    return t.type_name == type_name ? &t : nullptr;
  } else {
    return spindle::detail::find_type(type_name);
  }
}

// Up to `max` of the domain's topics as TOPIC, by name: dp's own topic of the name (for
// Topic<T>, only of T's type), else a new one when the type allows.
template <typename TOPIC>
std::vector<TOPIC> discovered(const dds::domain::DomainParticipant& dp, std::uint32_t max) {
  std::vector<TOPIC> out;
  for (const auto& t : dp.core().discovered_topics()) {
    if (out.size() >= max) break;
    const auto* type = type_for<TOPIC>(t.type_name);
    if (auto local = dp.core().find_topic(t.name)) {
      if (!is_typed<TOPIC> || (type != nullptr && local->type().type_name == type->type_name))
        out.push_back(TOPIC(std::move(local)));
    } else if (type != nullptr) {
      out.push_back(TOPIC(dp.core().create_topic(t.name, *type, dp.default_topic_qos())));
    }
  }
  return out;
}

}  // namespace detail

// The topic `topic_name`: `dp`'s own, or — once some member of the domain has a Topic or an
// endpoint on it — a new Topic of `dp` made for it. Waits up to `timeout` for a topic of
// that name (and, for Topic<T>, of T's type: one of another type is not it) and gives
// dds::core::null when none appeared — at once when `dp` has the name with another type. AnyTopic
// and TopicDescription: UnsupportedError when the domain's topic has a type this program does not
// use (see above).
template <typename TOPIC>
TOPIC discover(const dds::domain::DomainParticipant& dp, const std::string& topic_name,
               const dds::core::Duration& timeout = dds::core::Duration::infinite()) {
  const auto until = timeout.is_infinite() ? std::chrono::steady_clock::time_point::max()
                                           : std::chrono::steady_clock::now() + timeout.to_chrono();
  for (;;) {
    if (TOPIC local = find<TOPIC>(dp, topic_name); local != dds::core::null) return local;
    // dp has the name with another type: no topic of T's can appear in it.
    if (dp.core().find_topic(topic_name)) return TOPIC(dds::core::null);
    for (const auto& t : dp.core().discovered_topics()) {
      if (t.name != topic_name) continue;
      if (const auto* type = detail::type_for<TOPIC>(t.type_name))
        return TOPIC(dp.core().create_topic(topic_name, *type, dp.default_topic_qos()));
      if constexpr (!detail::is_typed<TOPIC>) {
        throw dds::core::UnsupportedError(
            "dds::topic::discover: topic '" + topic_name + "' has type '" + t.type_name +
            "', which this program does not use: discover it as a Topic of that type");
      }
    }
    if (std::chrono::steady_clock::now() >= until) return TOPIC(dds::core::null);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Up to `max_size` of the domain's topics (see above), by name, written to `begin`
// onwards; returns how many.
template <typename ANYTOPIC, typename FwdIterator>
std::uint32_t discover(const dds::domain::DomainParticipant& dp, FwdIterator begin,
                       std::uint32_t max_size) {
  auto found = detail::discovered<ANYTOPIC>(dp, max_size);
  for (auto& t : found)
    *begin++ = std::move(t);
  return static_cast<std::uint32_t>(found.size());
}

// Every one of the domain's topics (see above), by name, into `begin` (a back inserter);
// returns how many.
template <typename ANYTOPIC, typename BinIterator>
std::uint32_t discover_all(const dds::domain::DomainParticipant& dp, BinIterator begin) {
  auto found = detail::discovered<ANYTOPIC>(dp, UINT32_MAX);
  for (auto& t : found)
    *begin++ = std::move(t);
  return static_cast<std::uint32_t>(found.size());
}

inline void ignore(const dds::domain::DomainParticipant& dp,
                   const dds::core::InstanceHandle& handle) {
  dp.core().ignore(spindle::detail::ParticipantCore::Ignored::topic, handle);
}

// Each handle of [begin, end), in order; stops at the first that throws.
template <typename FwdIterator>
void ignore(const dds::domain::DomainParticipant& dp, FwdIterator begin, FwdIterator end) {
  for (auto it = begin; it != end; ++it)
    dds::topic::ignore(dp, *it);
}

}  // namespace dds::topic

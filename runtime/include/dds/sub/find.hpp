// dds::sub::find: the readers of a subscriber on a topic, or holding samples in some states
// (DDS-PSM-Cxx §7.5.5; DCPS lookup_datareader / get_datareaders). READER is DataReader<T> or
// AnyDataReader; a reader whose type is not a typed READER's T is not found (as the main
// implementations do).
//
// Threading: may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dds/core/Exception.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/sub/Subscriber.hpp>
#include <dds/sub/status/DataState.hpp>
#include <dds/topic/BuiltinTopic.hpp>
#include <dds/topic/Topic.hpp>
#include <dds/topic/TopicDescription.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::sub {

namespace detail {
template <typename READER, typename Out>
std::uint32_t put_readers(const std::vector<std::shared_ptr<spindle::detail::ReaderCore>>& all,
                          const std::string* topic_name, Out out, std::uint32_t max_size) {
  std::uint32_t n = 0;
  for (const auto& r : all) {
    if (n == max_size) break;
    if (topic_name != nullptr && r->topic()->name() != *topic_name) continue;
    if constexpr (requires { typename READER::DataType; }) {
      const auto want = spindle::detail::type_support<typename READER::DataType>().type_name;
      if (r->type().type_name != want) continue;  // not a READER: not found
    }
    *out++ = READER(r);
    ++n;
  }
  return n;
}
}  // namespace detail

template <typename READER, typename FwdIterator>
std::uint32_t find(const Subscriber& sub, const std::string& topic_name, FwdIterator begin,
                   std::uint32_t max_size) {
  return detail::put_readers<READER>(sub.core().readers(), &topic_name, begin, max_size);
}
template <typename READER, typename BinIterator>
std::uint32_t find(const Subscriber& sub, const std::string& topic_name, BinIterator begin) {
  return detail::put_readers<READER>(sub.core().readers(), &topic_name, begin, UINT32_MAX);
}
// The same, naming the topic by a TopicDescription (a Topic, a ContentFilteredTopic): its
// name.
template <typename READER, typename FwdIterator>
std::uint32_t find(const Subscriber& sub, const dds::topic::TopicDescription& topic,
                   FwdIterator begin, std::uint32_t max_size) {
  return find<READER>(sub, topic.name(), begin, max_size);
}
template <typename READER, typename BinIterator>
std::uint32_t find(const Subscriber& sub, const dds::topic::TopicDescription& topic,
                   BinIterator begin) {
  return find<READER>(sub, topic.name(), begin);
}

// The readers holding samples in `state` (DCPS get_datareaders).
template <typename READER, typename FwdIterator>
std::uint32_t find(const Subscriber& sub, const dds::sub::status::DataState& state,
                   FwdIterator begin, std::uint32_t max_size) {
  return detail::put_readers<READER>(sub.core().readers_with(state), nullptr, begin, max_size);
}
template <typename READER, typename BinIterator>
std::uint32_t find(const Subscriber& sub, const dds::sub::status::DataState& state,
                   BinIterator begin) {
  return detail::put_readers<READER>(sub.core().readers_with(state), nullptr, begin, UINT32_MAX);
}

// The participant's built-in subscriber (DDS-PSM-Cxx §7.5.5, DCPS §2.2.5): its readers of
// "DCPSParticipant", "DCPSTopic", "DCPSPublication" and "DCPSSubscription" (found with find()
// above, types in dds/topic/BuiltinTopic.hpp) hold the domain as this participant discovered
// it — every entity known when the subscriber was made, then each change. The subscriber and
// its readers last while the application holds one of them; the participant keeps them
// for it, so a later call gives the same subscriber. AlreadyClosedError for a closed
// participant.
inline Subscriber builtin_subscriber(const dds::domain::DomainParticipant& dp) {
  return Subscriber(dp.core().builtin_subscriber());
}

}  // namespace dds::sub

// dds::pub::find: the writers of a publisher on a topic (DDS-PSM-Cxx §7.5.3; DCPS
// lookup_datawriter). WRITER is DataWriter<T> or AnyDataWriter:
//
//   std::vector<dds::pub::DataWriter<Msg>> ws;
//   dds::pub::find<dds::pub::DataWriter<Msg>>(publisher, "Chat", std::back_inserter(ws));
//
// A writer of the topic whose type is not T is not found (as the main implementations do).
//
// Threading: may be called from any thread.
#pragma once

#include <cstdint>
#include <string>

#include <dds/core/Exception.hpp>
#include <dds/pub/Publisher.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::pub {

namespace detail {
template <typename WRITER, typename Out>
std::uint32_t find_writers(const Publisher& pub, const std::string& topic_name, Out out,
                           std::uint32_t max_size) {
  std::uint32_t n = 0;
  for (auto& w : pub.core().writers()) {
    if (n == max_size) break;
    if (w->topic()->name() != topic_name) continue;
    if constexpr (requires { typename WRITER::DataType; }) {
      const auto want = spindle::detail::type_support<typename WRITER::DataType>().type_name;
      if (w->type().type_name != want) continue;  // not a WRITER: not found
    }
    *out++ = WRITER(w);
    ++n;
  }
  return n;
}
}  // namespace detail

// Up to `max_size` writers into [begin, ...); returns how many.
template <typename WRITER, typename FwdIterator>
std::uint32_t find(const Publisher& pub, const std::string& topic_name, FwdIterator begin,
                   std::uint32_t max_size) {
  return detail::find_writers<WRITER>(pub, topic_name, begin, max_size);
}
// Every such writer through a back-insert iterator; returns how many.
template <typename WRITER, typename BinIterator>
std::uint32_t find(const Publisher& pub, const std::string& topic_name, BinIterator begin) {
  return detail::find_writers<WRITER>(pub, topic_name, begin, UINT32_MAX);
}

}  // namespace dds::pub

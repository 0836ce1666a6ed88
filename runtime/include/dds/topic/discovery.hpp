// dds::topic::ignore: tells a participant to act as if
// a remote Topic did not exist (DCPS 2.2.2.2.1.15 ignore_topic). Spindle discovers no topics of
// their own (a topic is known through its writers and readers: DCPSTopic shows those), so an
// ignored topic handle is kept, irreversibly, and has no effect on matching, as DCPS allows
// (ignoring a topic does not ignore its endpoints).
//
// A handle not seen yet is kept and applies once it appears. A nil handle is an
// InvalidArgumentError, a closed participant an AlreadyClosedError.
//
// Threading: may be called from any thread.
#pragma once

#include <dds/core/InstanceHandle.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::topic {

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

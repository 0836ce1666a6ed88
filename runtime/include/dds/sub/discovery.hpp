// dds::sub::ignore: tells a participant to act as if a remote DataReader did not exist
// (DCPS 2.2.2.2.1.17 ignore_subscription). The handle is a reader's instance_handle() — what
// matched_subscriptions() gives. From the call on, this participant's writers end their match with
// that reader (when the call returns: docs/dcps.md) and never match it again; it is irreversible.
// (Samples still travel to the reader's member: the ignored side is not told, DCPS.) A writer's
// handle is an InvalidArgumentError.
//
// A handle not seen yet is kept and applies once it appears. A nil handle is an
// InvalidArgumentError, a closed participant an AlreadyClosedError.
//
// Threading: may be called from any thread.
#pragma once

#include <dds/core/InstanceHandle.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::sub {

inline void ignore(const dds::domain::DomainParticipant& dp,
                   const dds::core::InstanceHandle& handle) {
  dp.core().ignore(spindle::detail::ParticipantCore::Ignored::subscription, handle);
}

// Each handle of [begin, end), in order; stops at the first that throws.
template <typename FwdIterator>
void ignore(const dds::domain::DomainParticipant& dp, FwdIterator begin, FwdIterator end) {
  for (auto it = begin; it != end; ++it)
    dds::sub::ignore(dp, *it);
}

}  // namespace dds::sub

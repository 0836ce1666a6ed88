// dds::domain::ignore: tells a participant to act as if a remote participant did not exist
// (DDS-PSM-Cxx §7.5.1; DCPS 2.2.2.2.1.14 ignore_participant). The handle is a participant's
// instance_handle(). From the call on, this participant's writers and readers end their
// matches with that participant's endpoints (when the call returns: docs/dcps.md) and match none of
// them again; it is irreversible. The ignored participant is not told and its own endpoints still
// count ours as matched.
//
// A handle not seen yet is kept and applies once such a participant appears. A nil handle,
// or one that is not a participant's, is an InvalidArgumentError; the participant's own
// handle a PreconditionNotMetError; a closed participant an AlreadyClosedError.
//
// Threading: may be called from any thread.
#pragma once

#include <dds/core/InstanceHandle.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::domain {

inline void ignore(const DomainParticipant& dp, const dds::core::InstanceHandle& handle) {
  dp.core().ignore(spindle::detail::ParticipantCore::Ignored::participant, handle);
}

// Each handle of [begin, end), in order; stops at the first that throws.
template <typename FwdIterator>
void ignore(const DomainParticipant& dp, FwdIterator begin, FwdIterator end) {
  for (auto it = begin; it != end; ++it)
    dds::domain::ignore(dp, *it);
}

}  // namespace dds::domain

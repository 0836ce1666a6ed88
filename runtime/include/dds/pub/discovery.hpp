// dds::pub::ignore: tells a participant to act as if a remote DataWriter did not exist
// (DCPS 2.2.2.2.1.16 ignore_publication). The handle is a writer's instance_handle() — what
// matched_publications() and SampleInfo::publication_handle() give. From the call on, this
// participant's readers end their match with that writer when the call returns (docs/dcps.md), take
// none of its samples from then on, and never match it again; it is irreversible. A reader's handle
// is an InvalidArgumentError.
//
// A handle not seen yet is kept and applies once it appears. A nil handle is an
// InvalidArgumentError, a closed participant an AlreadyClosedError.
//
// Threading: may be called from any thread.
#pragma once

#include <dds/core/InstanceHandle.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::pub {

inline void ignore(const dds::domain::DomainParticipant& dp,
                   const dds::core::InstanceHandle& handle) {
  dp.core().ignore(spindle::detail::ParticipantCore::Ignored::publication, handle);
}

// Each handle of [begin, end), in order; stops at the first that throws.
template <typename FwdIterator>
void ignore(const dds::domain::DomainParticipant& dp, FwdIterator begin, FwdIterator end) {
  for (auto it = begin; it != end; ++it)
    dds::pub::ignore(dp, *it);
}

}  // namespace dds::pub

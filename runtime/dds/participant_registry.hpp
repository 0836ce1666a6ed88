// The participants of this process and their default QoS: the PSM's DomainParticipantFactory
// (DCPS 2.2.2.2.2), which dds::domain::find (lookup_participant) and
// DomainParticipant::default_participant_qos need. This is the one process-wide table in
// Spindle, and only because the specification defines these operations on the process
// rather than on an object the application holds (STYLE 4 otherwise forbids it). It holds
// participants weakly and never keeps one alive or open.
//
// Threading: every function may be called from any thread; one leaf mutex guards the table
// and the default QoS, never held while calling into a participant other than is_closed().
#pragma once

#include <cstdint>
#include <memory>

#include <spindle/detail/dcps.hpp>

namespace spindle::detail {

// Records a participant created for `requested_id` (which may be kDefaultDomain); it is
// found under that id and under the domain id it joined.
void register_participant(std::uint32_t requested_id,
                          const std::shared_ptr<ParticipantCore>& participant);

}  // namespace spindle::detail

// dds::domain::find: a participant this process already has in a domain (DDS-PSM-Cxx
// §7.5.1; DCPS DomainParticipantFactory::lookup_participant). Lets one part of a program
// reach the participant another part created without passing it around:
//
//   auto dp = dds::domain::find(7);
//   if (dp == dds::core::null) ...   // no open participant of this process in domain 7
//
// Only open participants that something still references are found (the process-wide table
// is weak: spindle/detail/dcps.hpp find_participant). A participant created with
// dds::domain::default_id() is found under that id and under the id it joined. With
// several participants in the domain, which one is found is unspecified (DCPS).
//
// Threading: may be called from any thread.
#pragma once

#include <cstdint>

#include <dds/core/types.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::domain {

[[nodiscard]] inline DomainParticipant find(std::uint32_t domain_id) {
  auto core = spindle::detail::find_participant(domain_id);
  if (!core) return DomainParticipant(dds::core::null);
  return DomainParticipant(std::move(core));
}

}  // namespace dds::domain

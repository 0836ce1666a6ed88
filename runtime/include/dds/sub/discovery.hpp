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
#include <dds/sub/AnyDataReader.hpp>
#include <dds/topic/BuiltinTopic.hpp>
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

// The handles of the publications reader `e` is matched with (DDS-PSM-Cxx §7.5.5; DCPS
// get_matched_publications).
inline dds::core::InstanceHandleSeq matched_publications(const AnyDataReader& e) {
  return e.matched_publications();
}
// Each of them into `begin`, at most `max_size`; returns how many.
template <typename FwdIterator>
std::uint32_t matched_publications(const AnyDataReader& e, FwdIterator begin,
                                   std::uint32_t max_size) {
  std::uint32_t n = 0;
  for (const auto& h : e.matched_publications()) {
    if (n == max_size) break;
    *begin++ = h;
    ++n;
  }
  return n;
}

// The built-in data (dds/topic/BuiltinTopic.hpp) of the writer with handle `h` that `e` is
// matched with (DCPS get_matched_publication_data). InvalidArgumentError when `e` is not
// matched with it (DCPS BAD_PARAMETER).
inline dds::topic::PublicationBuiltinTopicData matched_publication_data(
    const AnyDataReader& e, const dds::core::InstanceHandle& h) {
  const auto matched = e.matched_publications();
  bool found = false;
  for (const auto& m : matched)
    found = found || m == h;
  const auto data = found ? e.core().subscriber()->participant()->publication_data(h) : nullptr;
  if (!data) {
    throw dds::core::InvalidArgumentError(
        "matched_publication_data: this reader is not matched with writer " +
        std::to_string(h.value()));
  }
  return *data;
}
}  // namespace dds::sub

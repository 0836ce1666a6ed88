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
#include <dds/pub/AnyDataWriter.hpp>
#include <dds/topic/BuiltinTopic.hpp>
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

// The handles of the subscriptions writer `e` is matched with (DDS-PSM-Cxx §7.5.3; DCPS
// get_matched_subscriptions).
inline dds::core::InstanceHandleSeq matched_subscriptions(const AnyDataWriter& e) {
  return e.matched_subscriptions();
}
// Each of them into `begin`, at most `max_size`; returns how many.
template <typename FwdIterator>
std::uint32_t matched_subscriptions(const AnyDataWriter& e, FwdIterator begin,
                                    std::uint32_t max_size) {
  std::uint32_t n = 0;
  for (const auto& h : e.matched_subscriptions()) {
    if (n == max_size) break;
    *begin++ = h;
    ++n;
  }
  return n;
}

// The built-in data (dds/topic/BuiltinTopic.hpp) of the reader with handle `h` that `e` is
// matched with (DCPS get_matched_subscription_data). InvalidArgumentError when `e` is not
// matched with it (DCPS BAD_PARAMETER).
inline dds::topic::SubscriptionBuiltinTopicData matched_subscription_data(
    const AnyDataWriter& e, const dds::core::InstanceHandle& h) {
  const auto matched = e.matched_subscriptions();
  bool found = false;
  for (const auto& m : matched)
    found = found || m == h;
  const auto data = found ? e.core().publisher()->participant()->subscription_data(h) : nullptr;
  if (!data) {
    throw dds::core::InvalidArgumentError(
        "matched_subscription_data: this writer is not matched with reader " +
        std::to_string(h.value()));
  }
  return *data;
}
}  // namespace dds::pub

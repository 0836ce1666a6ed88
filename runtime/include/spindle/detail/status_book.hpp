// spindle::detail::StatusBook: every communication status of one entity, its changed-status
// mask (Entity::status_changes()), and the StatusCondition watching it. The entity layer
// records events here (a sample lost, a writer matched, ...); the PSM getters
// (`reader.sample_lost_status()`) hand out a status with read<S>(), which — as DCPS
// §2.2.4.1 says — resets the status's *_change fields and clears its changed flag.
//
// Listeners: an event recorded with `consume = true` is reported to the caller (which
// passes the returned status to the listener) instead of being left pending: the change
// fields reset and the flag stays clear at once, so a StatusCondition does not also fire
// for it (DCPS: a listener that is called takes precedence over the condition).
//
// Not part of the DDS API. Threading: every member may be called from any thread; the
// book has one leaf lock (mu_), released before the StatusCondition is notified, so event
// recorders must not be called with a WaitSet or condition lock held (lock order:
// spindle/detail/condition_delegate.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <tuple>

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/policy/QosPolicyCount.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/status/Status.hpp>
#include <spindle/detail/condition_delegate.hpp>
#include <spindle/detail/thread_annotations.hpp>

namespace spindle::detail {

class StatusBook {
 public:
  StatusBook() = default;
  StatusBook(const StatusBook&) = delete;
  StatusBook& operator=(const StatusBook&) = delete;

  // The statuses changed since they were last read.
  [[nodiscard]] dds::core::status::StatusMask status_changes() const SPINDLE_EXCLUDES(mu_);
  // Raises flag-only statuses (DATA_AVAILABLE, DATA_ON_READERS) and wakes the condition.
  void set_changes(const dds::core::status::StatusMask& mask) SPINDLE_EXCLUDES(mu_);
  // Clears flags without reading the statuses: DATA_AVAILABLE when the reader is read or
  // taken, DATA_ON_READERS when any reader of the subscriber is.
  void clear_changes(const dds::core::status::StatusMask& mask) SPINDLE_EXCLUDES(mu_);

  // ---- events; each returns the status after the event (see `consume` above)
  dds::core::status::InconsistentTopicStatus inconsistent_topic(bool consume = false);
  dds::core::status::SampleLostStatus sample_lost(std::int32_t count, bool consume = false);
  dds::core::status::SampleRejectedStatus sample_rejected(
      const dds::core::status::SampleRejectedState& reason, dds::core::InstanceHandle instance,
      bool consume = false);
  dds::core::status::LivelinessLostStatus liveliness_lost(bool consume = false);
  // A matched writer changed liveliness: alive_delta/not_alive_delta are +1/-1/0 (a new
  // alive writer: +1/0; alive -> not alive: -1/+1; a not-alive writer unmatched: 0/-1).
  dds::core::status::LivelinessChangedStatus liveliness_changed(
      std::int32_t alive_delta, std::int32_t not_alive_delta, dds::core::InstanceHandle publication,
      bool consume = false);
  dds::core::status::OfferedDeadlineMissedStatus offered_deadline_missed(
      dds::core::InstanceHandle instance, bool consume = false);
  dds::core::status::RequestedDeadlineMissedStatus requested_deadline_missed(
      dds::core::InstanceHandle instance, bool consume = false);
  // One incompatible remote entity; `policies` are the ids that failed (the first is
  // reported as last_policy_id()). Each id's count in policies() goes up by one.
  dds::core::status::OfferedIncompatibleQosStatus offered_incompatible_qos(
      std::span<const dds::core::policy::QosPolicyId> policies, bool consume = false);
  dds::core::status::RequestedIncompatibleQosStatus requested_incompatible_qos(
      std::span<const dds::core::policy::QosPolicyId> policies, bool consume = false);
  // A reader matched (+1) or unmatched (-1); total_count counts matches only.
  dds::core::status::PublicationMatchedStatus publication_matched(
      std::int32_t current_delta, dds::core::InstanceHandle subscription, bool consume = false);
  dds::core::status::SubscriptionMatchedStatus subscription_matched(
      std::int32_t current_delta, dds::core::InstanceHandle publication, bool consume = false);

  // The PSM getter: the status now; resets its change fields and clears its flag.
  // Instantiated for each status class of <dds/core/status/Status.hpp>.
  template <class S>
  [[nodiscard]] S read() SPINDLE_EXCLUDES(mu_);
  // The status now, without resetting anything.
  template <class S>
  [[nodiscard]] S peek() const SPINDLE_EXCLUDES(mu_);

  // The StatusCondition registers here.
  [[nodiscard]] ConditionObservers& observers() noexcept { return observers_; }

 private:
  template <class S, class Mutate>
  S record(bool consume, Mutate&& mutate) SPINDLE_EXCLUDES(mu_);
  template <class S>
  S deadline_missed(dds::core::InstanceHandle instance, bool consume);
  template <class S>
  S incompatible_qos(std::span<const dds::core::policy::QosPolicyId> policies, bool consume);
  template <class S>
  S matched(std::int32_t current_delta, dds::core::InstanceHandle peer, bool consume);

  using Statuses = std::tuple<
      dds::core::status::InconsistentTopicStatus, dds::core::status::SampleLostStatus,
      dds::core::status::SampleRejectedStatus, dds::core::status::LivelinessLostStatus,
      dds::core::status::LivelinessChangedStatus, dds::core::status::OfferedDeadlineMissedStatus,
      dds::core::status::RequestedDeadlineMissedStatus,
      dds::core::status::OfferedIncompatibleQosStatus,
      dds::core::status::RequestedIncompatibleQosStatus,
      dds::core::status::PublicationMatchedStatus, dds::core::status::SubscriptionMatchedStatus>;

  mutable Mutex mu_;
  Statuses statuses_ SPINDLE_GUARDED_BY(mu_);
  std::uint32_t changes_ SPINDLE_GUARDED_BY(mu_) = 0;
  ConditionObservers observers_;
};

}  // namespace spindle::detail

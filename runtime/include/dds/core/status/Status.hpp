// The communication statuses of DDS entities (DDS-PSM-Cxx §7.5.2, DCPS §2.2.4.1): what an
// application gets from `reader.sample_lost_status()` and friends, and what listeners
// receive. Each is a value holding the counts as of the moment it was read; the *_change
// fields count what happened since the previous read (the DCPS rule), which the entity's
// status book (spindle::detail::StatusBook) resets when it hands a status out.
//
// Applications only read these; the runtime updates them through StatusBook, the one
// friend of every status. Threading: value types.
#pragma once

#include <cstdint>

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/policy/QosPolicyCount.hpp>
#include <dds/core/status/State.hpp>

namespace spindle::detail {
class StatusBook;
}

namespace dds::core::status {

namespace detail {

// total_count / total_count_change, shared by most statuses.
class TotalCountStatus {
 public:
  [[nodiscard]] std::int32_t total_count() const noexcept { return total_; }
  [[nodiscard]] std::int32_t total_count_change() const noexcept { return total_change_; }

 private:
  friend class spindle::detail::StatusBook;
  void count(std::int32_t n) noexcept {
    total_ += n;
    total_change_ += n;
  }
  std::int32_t total_ = 0;
  std::int32_t total_change_ = 0;

 protected:
  void reset_total_change() noexcept { total_change_ = 0; }
};

// A deadline missed on some instance: the count plus the instance that missed last.
class DeadlineMissedStatus : public TotalCountStatus {
 public:
  [[nodiscard]] dds::core::InstanceHandle last_instance_handle() const noexcept {
    return last_instance_;
  }

 private:
  friend class spindle::detail::StatusBook;
  void reset_changes() noexcept { reset_total_change(); }
  dds::core::InstanceHandle last_instance_;
};

// Incompatible QoS with a remote entity: the count, the policy that failed last, and how
// often each policy failed.
class IncompatibleQosStatus : public TotalCountStatus {
 public:
  [[nodiscard]] dds::core::policy::QosPolicyId last_policy_id() const noexcept {
    return last_policy_;
  }
  [[nodiscard]] const dds::core::policy::QosPolicyCountSeq& policies() const noexcept {
    return policies_;
  }

 private:
  friend class spindle::detail::StatusBook;
  void reset_changes() noexcept { reset_total_change(); }
  dds::core::policy::QosPolicyId last_policy_ = 0;
  dds::core::policy::QosPolicyCountSeq policies_;
};

// Matching with remote entities: how many ever matched (total) and how many match now
// (current), each with its change since the last read.
class MatchedStatus : public TotalCountStatus {
 public:
  [[nodiscard]] std::int32_t current_count() const noexcept { return current_; }
  [[nodiscard]] std::int32_t current_count_change() const noexcept { return current_change_; }

 protected:
  [[nodiscard]] dds::core::InstanceHandle last_peer() const noexcept { return last_peer_; }

 private:
  friend class spindle::detail::StatusBook;
  void reset_changes() noexcept {
    reset_total_change();
    current_change_ = 0;
  }
  std::int32_t current_ = 0;
  std::int32_t current_change_ = 0;
  dds::core::InstanceHandle last_peer_;
};

// The statuses that are nothing but a count.
class CountOnlyStatus : public TotalCountStatus {
 private:
  friend class spindle::detail::StatusBook;
  void reset_changes() noexcept { reset_total_change(); }
};

}  // namespace detail

// Topic: another participant has a topic of the same name with another type.
class InconsistentTopicStatus : public detail::CountOnlyStatus {};

// DataReader: samples that never reached the cache (a gap in the writer's stream).
class SampleLostStatus : public detail::CountOnlyStatus {};

// DataWriter: the writer failed to assert its liveliness in time.
class LivelinessLostStatus : public detail::CountOnlyStatus {};

// DataReader: samples refused for lack of resources (ResourceLimits under KEEP_ALL).
class SampleRejectedStatus : public detail::TotalCountStatus {
 public:
  [[nodiscard]] const SampleRejectedState& last_reason() const noexcept { return last_reason_; }
  [[nodiscard]] dds::core::InstanceHandle last_instance_handle() const noexcept {
    return last_instance_;
  }

 private:
  friend class spindle::detail::StatusBook;
  void reset_changes() noexcept { reset_total_change(); }
  SampleRejectedState last_reason_;
  dds::core::InstanceHandle last_instance_;
};

// DataReader: matched writers became alive or not alive.
class LivelinessChangedStatus {
 public:
  [[nodiscard]] std::int32_t alive_count() const noexcept { return alive_; }
  [[nodiscard]] std::int32_t not_alive_count() const noexcept { return not_alive_; }
  [[nodiscard]] std::int32_t alive_count_change() const noexcept { return alive_change_; }
  [[nodiscard]] std::int32_t not_alive_count_change() const noexcept { return not_alive_change_; }
  [[nodiscard]] dds::core::InstanceHandle last_publication_handle() const noexcept {
    return last_publication_;
  }

 private:
  friend class spindle::detail::StatusBook;
  void reset_changes() noexcept {
    alive_change_ = 0;
    not_alive_change_ = 0;
  }
  std::int32_t alive_ = 0;
  std::int32_t not_alive_ = 0;
  std::int32_t alive_change_ = 0;
  std::int32_t not_alive_change_ = 0;
  dds::core::InstanceHandle last_publication_;
};

// DataWriter: an instance was not written within the deadline period.
class OfferedDeadlineMissedStatus : public detail::DeadlineMissedStatus {};

// DataReader: an instance was not updated within the deadline period.
class RequestedDeadlineMissedStatus : public detail::DeadlineMissedStatus {};

// DataWriter: a reader requested QoS this writer does not offer.
class OfferedIncompatibleQosStatus : public detail::IncompatibleQosStatus {};

// DataReader: a writer offers QoS weaker than this reader requests.
class RequestedIncompatibleQosStatus : public detail::IncompatibleQosStatus {};

// DataWriter: matched readers.
class PublicationMatchedStatus : public detail::MatchedStatus {
 public:
  [[nodiscard]] dds::core::InstanceHandle last_subscription_handle() const noexcept {
    return last_peer();
  }
};

// DataReader: matched writers.
class SubscriptionMatchedStatus : public detail::MatchedStatus {
 public:
  [[nodiscard]] dds::core::InstanceHandle last_publication_handle() const noexcept {
    return last_peer();
  }
};

}  // namespace dds::core::status

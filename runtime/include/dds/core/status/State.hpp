// dds::core::status::StatusMask (which communication statuses a listener or a
// StatusCondition cares about) and SampleRejectedState (why a sample was rejected),
// DDS-PSM-Cxx §7.5.1. Bit positions are the DCPS specification's StatusKind values, so a
// mask means the same thing here as in any other DDS.
//
// Threading: value types.
#pragma once

#include <bitset>
#include <cstdint>

namespace dds::core::status {

// A bit per communication status. Derives from std::bitset as the PSM does, so test(),
// any(), count() and to_ulong() are available.
class StatusMask : public std::bitset<32> {
 public:
  using MaskType = std::bitset<32>;

  StatusMask() = default;
  explicit StatusMask(std::uint32_t mask) : MaskType(mask) {}
  StatusMask(const MaskType& bits) : MaskType(bits) {}  // NOLINT(google-explicit-constructor)

  // The DCPS StatusKind bits.
  static constexpr std::uint32_t kInconsistentTopic = 1u << 0;
  static constexpr std::uint32_t kOfferedDeadlineMissed = 1u << 1;
  static constexpr std::uint32_t kRequestedDeadlineMissed = 1u << 2;
  static constexpr std::uint32_t kOfferedIncompatibleQos = 1u << 5;
  static constexpr std::uint32_t kRequestedIncompatibleQos = 1u << 6;
  static constexpr std::uint32_t kSampleLost = 1u << 7;
  static constexpr std::uint32_t kSampleRejected = 1u << 8;
  static constexpr std::uint32_t kDataOnReaders = 1u << 9;
  static constexpr std::uint32_t kDataAvailable = 1u << 10;
  static constexpr std::uint32_t kLivelinessLost = 1u << 11;
  static constexpr std::uint32_t kLivelinessChanged = 1u << 12;
  static constexpr std::uint32_t kPublicationMatched = 1u << 13;
  static constexpr std::uint32_t kSubscriptionMatched = 1u << 14;
  static constexpr std::uint32_t kAll =
      kInconsistentTopic | kOfferedDeadlineMissed | kRequestedDeadlineMissed |
      kOfferedIncompatibleQos | kRequestedIncompatibleQos | kSampleLost | kSampleRejected |
      kDataOnReaders | kDataAvailable | kLivelinessLost | kLivelinessChanged | kPublicationMatched |
      kSubscriptionMatched;

  static StatusMask all() { return StatusMask(kAll); }
  static StatusMask none() { return StatusMask(0u); }
  static StatusMask inconsistent_topic() { return StatusMask(kInconsistentTopic); }
  static StatusMask offered_deadline_missed() { return StatusMask(kOfferedDeadlineMissed); }
  static StatusMask requested_deadline_missed() { return StatusMask(kRequestedDeadlineMissed); }
  static StatusMask offered_incompatible_qos() { return StatusMask(kOfferedIncompatibleQos); }
  static StatusMask requested_incompatible_qos() { return StatusMask(kRequestedIncompatibleQos); }
  static StatusMask sample_lost() { return StatusMask(kSampleLost); }
  static StatusMask sample_rejected() { return StatusMask(kSampleRejected); }
  static StatusMask data_on_readers() { return StatusMask(kDataOnReaders); }
  static StatusMask data_available() { return StatusMask(kDataAvailable); }
  static StatusMask liveliness_lost() { return StatusMask(kLivelinessLost); }
  static StatusMask liveliness_changed() { return StatusMask(kLivelinessChanged); }
  static StatusMask publication_matched() { return StatusMask(kPublicationMatched); }
  static StatusMask subscription_matched() { return StatusMask(kSubscriptionMatched); }

  // PSM idiom: `mask << StatusMask::data_available()` adds, `>>` removes.
  StatusMask& operator<<(const StatusMask& other) {
    *this |= other;
    return *this;
  }
  StatusMask& operator>>(const StatusMask& other) {
    *this &= ~other;
    return *this;
  }
  StatusMask& operator|=(const StatusMask& other) {
    MaskType::operator|=(other);
    return *this;
  }
  StatusMask& operator&=(const StatusMask& other) {
    MaskType::operator&=(other);
    return *this;
  }
  StatusMask& operator^=(const StatusMask& other) {
    MaskType::operator^=(other);
    return *this;
  }
  StatusMask operator~() const { return StatusMask(MaskType::operator~()); }
  friend StatusMask operator|(const StatusMask& a, const StatusMask& b) {
    return StatusMask(static_cast<const MaskType&>(a) | static_cast<const MaskType&>(b));
  }
  friend StatusMask operator&(const StatusMask& a, const StatusMask& b) {
    return StatusMask(static_cast<const MaskType&>(a) & static_cast<const MaskType&>(b));
  }
  friend StatusMask operator^(const StatusMask& a, const StatusMask& b) {
    return StatusMask(static_cast<const MaskType&>(a) ^ static_cast<const MaskType&>(b));
  }
  // True when the two masks share a bit.
  [[nodiscard]] bool intersects(const StatusMask& other) const { return (*this & other).any(); }
};

// Why the last sample was rejected (SampleRejectedStatus::last_reason()); not_rejected()
// is the empty set.
class SampleRejectedState : public std::bitset<32> {
 public:
  using MaskType = std::bitset<32>;

  SampleRejectedState() = default;
  SampleRejectedState(const MaskType& bits) : MaskType(bits) {}  // NOLINT

  static SampleRejectedState not_rejected() { return SampleRejectedState(0u); }
  static SampleRejectedState rejected_by_instances_limit() { return SampleRejectedState(1u << 0); }
  static SampleRejectedState rejected_by_samples_limit() { return SampleRejectedState(1u << 1); }
  static SampleRejectedState rejected_by_samples_per_instance_limit() {
    return SampleRejectedState(1u << 2);
  }

 private:
  explicit SampleRejectedState(std::uint32_t bits) : MaskType(bits) {}
};

}  // namespace dds::core::status

// The states a reader's samples and instances are in, and masks over them (DDS-PSM-Cxx
// §7.5.3, DCPS §2.2.2.5.1.x):
//   SampleState    read / not_read                 — has this sample been read before?
//   ViewState      new_view / not_new_view         — is this instance new to the reader?
//   InstanceState  alive / not_alive_disposed / not_alive_no_writers
// A DataState is one mask of each. In a SampleInfo each mask has exactly one bit set; in
// a read/take selection or a ReadCondition a mask selects every state whose bit is set.
// The bit values are the DCPS specification's.
//
// Threading: value types.
#pragma once

#include <bitset>
#include <cstdint>

namespace dds::sub::status {

namespace detail {
// The bitset the three state masks share.
class StateBits : public std::bitset<32> {
 public:
  using MaskType = std::bitset<32>;
  StateBits(const MaskType& bits) : MaskType(bits) {}  // NOLINT(google-explicit-constructor)
  explicit StateBits(std::uint32_t bits) : MaskType(bits) {}
};
}  // namespace detail

class SampleState : public detail::StateBits {
 public:
  using StateBits::StateBits;
  static constexpr std::uint32_t kRead = 0x1;
  static constexpr std::uint32_t kNotRead = 0x2;
  static constexpr std::uint32_t kAny = 0xffff;
  SampleState() : StateBits(kAny) {}

  static SampleState read() { return SampleState(kRead); }
  static SampleState not_read() { return SampleState(kNotRead); }
  static SampleState any() { return SampleState(kAny); }
};

class ViewState : public detail::StateBits {
 public:
  using StateBits::StateBits;
  static constexpr std::uint32_t kNewView = 0x1;
  static constexpr std::uint32_t kNotNewView = 0x2;
  static constexpr std::uint32_t kAny = 0xffff;
  ViewState() : StateBits(kAny) {}

  static ViewState new_view() { return ViewState(kNewView); }
  static ViewState not_new_view() { return ViewState(kNotNewView); }
  static ViewState any() { return ViewState(kAny); }
};

class InstanceState : public detail::StateBits {
 public:
  using StateBits::StateBits;
  static constexpr std::uint32_t kAlive = 0x1;
  static constexpr std::uint32_t kNotAliveDisposed = 0x2;
  static constexpr std::uint32_t kNotAliveNoWriters = 0x4;
  static constexpr std::uint32_t kNotAliveMask = kNotAliveDisposed | kNotAliveNoWriters;
  static constexpr std::uint32_t kAny = 0xffff;
  InstanceState() : StateBits(kAny) {}

  static InstanceState alive() { return InstanceState(kAlive); }
  static InstanceState not_alive_disposed() { return InstanceState(kNotAliveDisposed); }
  static InstanceState not_alive_no_writers() { return InstanceState(kNotAliveNoWriters); }
  static InstanceState not_alive_mask() { return InstanceState(kNotAliveMask); }
  static InstanceState any() { return InstanceState(kAny); }
};

class DataState {
 public:
  // Every state (PSM: the default selects all samples).
  DataState() = default;
  DataState(const SampleState& ss)  // NOLINT(google-explicit-constructor)
      : ss_(ss) {}
  DataState(const ViewState& vs)  // NOLINT(google-explicit-constructor)
      : vs_(vs) {}
  DataState(const InstanceState& is)  // NOLINT(google-explicit-constructor)
      : is_(is) {}
  DataState(const SampleState& ss, const ViewState& vs, const InstanceState& is)
      : ss_(ss), vs_(vs), is_(is) {}

  // Unread samples of alive instances.
  static DataState new_data() {
    return {SampleState::not_read(), ViewState::any(), InstanceState::alive()};
  }
  // Every sample of alive instances.
  static DataState any_data() {
    return {SampleState::any(), ViewState::any(), InstanceState::alive()};
  }
  // Samples of alive instances the reader has not seen before.
  static DataState new_instance() {
    return {SampleState::any(), ViewState::new_view(), InstanceState::alive()};
  }
  static DataState any() { return {}; }

  [[nodiscard]] const SampleState& sample_state() const noexcept { return ss_; }
  [[nodiscard]] const ViewState& view_state() const noexcept { return vs_; }
  [[nodiscard]] const InstanceState& instance_state() const noexcept { return is_; }
  void sample_state(const SampleState& ss) { ss_ = ss; }
  void view_state(const ViewState& vs) { vs_ = vs; }
  void instance_state(const InstanceState& is) { is_ = is; }

  // PSM idiom: `state << SampleState::read()` sets that part; `>>` reads it out.
  DataState& operator<<(const SampleState& ss) {
    ss_ = ss;
    return *this;
  }
  DataState& operator<<(const ViewState& vs) {
    vs_ = vs;
    return *this;
  }
  DataState& operator<<(const InstanceState& is) {
    is_ = is;
    return *this;
  }
  const DataState& operator>>(SampleState& ss) const {
    ss = ss_;
    return *this;
  }
  const DataState& operator>>(ViewState& vs) const {
    vs = vs_;
    return *this;
  }
  const DataState& operator>>(InstanceState& is) const {
    is = is_;
    return *this;
  }

  // True when a sample whose three states are `state` (one bit each) is selected by this
  // mask.
  [[nodiscard]] bool matches(const DataState& state) const {
    return (ss_ & state.ss_).any() && (vs_ & state.vs_).any() && (is_ & state.is_).any();
  }

  friend bool operator==(const DataState& a, const DataState& b) {
    return a.ss_ == b.ss_ && a.vs_ == b.vs_ && a.is_ == b.is_;
  }

 private:
  SampleState ss_;
  ViewState vs_;
  InstanceState is_;
};

}  // namespace dds::sub::status

// dds::core::Time: a point in time (seconds + nanoseconds since the Unix epoch on the
// system clock), as carried in SampleInfo::source_timestamp (DDS-PSM-Cxx §7.3.4).
//
// Threading: a value type.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>

#include <dds/core/Duration.hpp>
#include <dds/core/Exception.hpp>

namespace dds::core {

class Time {
 public:
  static constexpr std::int64_t kInvalidSec = -1;
  static constexpr std::uint32_t kInvalidNsec = 0xffffffffu;

  constexpr Time() = default;
  constexpr Time(std::int64_t sec, std::uint32_t nanosec) : sec_(sec), nsec_(nanosec) {
    const bool invalid = sec == kInvalidSec && nanosec == kInvalidNsec;
    if (!invalid && (sec < 0 || nanosec >= 1'000'000'000u)) {
      throw InvalidArgumentError("dds::core::Time: sec must be >= 0 and nanosec < 1e9");
    }
  }

  // Whole seconds.
  constexpr explicit Time(std::int64_t sec) : Time(sec, 0) {}

  static constexpr Time invalid() { return {kInvalidSec, kInvalidNsec}; }
  static constexpr Time from_nanosecs(std::int64_t ns) {
    return {ns / 1'000'000'000, static_cast<std::uint32_t>(ns % 1'000'000'000)};
  }
  static constexpr Time from_microsecs(std::uint64_t us) {
    return from_nanosecs(static_cast<std::int64_t>(us) * 1000);
  }
  static constexpr Time from_millisecs(std::uint64_t ms) {
    return from_nanosecs(static_cast<std::int64_t>(ms) * 1'000'000);
  }
  static Time from_secs(double s) {
    if (!(s >= 0)) throw InvalidArgumentError("dds::core::Time: negative seconds");
    return from_nanosecs(static_cast<std::int64_t>(s * 1e9));
  }
  // The current time on the system clock (what write() stamps as the source timestamp).
  static Time now() {
    return from_nanosecs(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count());
  }

  [[nodiscard]] constexpr std::int64_t sec() const noexcept { return sec_; }
  [[nodiscard]] constexpr std::uint32_t nanosec() const noexcept { return nsec_; }
  void sec(std::int64_t s) { *this = Time(s, nsec_); }
  void nanosec(std::uint32_t ns) { *this = Time(sec_, ns); }
  [[nodiscard]] constexpr bool is_valid() const noexcept {
    return !(sec_ == kInvalidSec && nsec_ == kInvalidNsec);
  }
  [[nodiscard]] constexpr std::int64_t to_nanosecs() const noexcept {
    return sec_ * 1'000'000'000 + nsec_;
  }
  [[nodiscard]] constexpr std::int64_t to_microsecs() const noexcept {
    return to_nanosecs() / 1000;
  }
  [[nodiscard]] constexpr std::int64_t to_millisecs() const noexcept {
    return to_nanosecs() / 1'000'000;
  }
  [[nodiscard]] constexpr double to_secs() const noexcept {
    return static_cast<double>(sec_) + static_cast<double>(nsec_) * 1e-9;
  }

  constexpr int compare(const Time& o) const noexcept {
    return to_nanosecs() < o.to_nanosecs() ? -1 : (to_nanosecs() > o.to_nanosecs() ? 1 : 0);
  }
  friend constexpr bool operator==(const Time& a, const Time& b) noexcept {
    return a.sec_ == b.sec_ && a.nsec_ == b.nsec_;
  }
  friend constexpr auto operator<=>(const Time& a, const Time& b) noexcept {
    return a.to_nanosecs() <=> b.to_nanosecs();
  }
  friend constexpr Time operator+(const Time& t, const Duration& d) {
    return from_nanosecs(t.to_nanosecs() + d.to_nanosecs());
  }
  friend constexpr Time operator+(const Duration& d, const Time& t) { return t + d; }
  friend constexpr Time operator-(const Time& t, const Duration& d) {
    if (d.to_nanosecs() > t.to_nanosecs()) {
      throw InvalidArgumentError("dds::core::Time: subtraction before the epoch");
    }
    return from_nanosecs(t.to_nanosecs() - d.to_nanosecs());
  }
  // The span between two times; throws InvalidArgumentError if b is later than a.
  friend constexpr Duration operator-(const Time& a, const Time& b) {
    if (b > a) throw InvalidArgumentError("dds::core::Time: negative span between times");
    return Duration(std::chrono::nanoseconds(a.to_nanosecs() - b.to_nanosecs()));
  }
  Time& operator+=(const Duration& d) { return *this = *this + d; }
  Time& operator-=(const Duration& d) { return *this = *this - d; }

 private:
  std::int64_t sec_ = 0;
  std::uint32_t nsec_ = 0;
};

}  // namespace dds::core

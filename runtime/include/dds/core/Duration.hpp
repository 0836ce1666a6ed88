// dds::core::Duration: a span of time as seconds + nanoseconds (DDS-PSM-Cxx §7.3.3), with
// the special value infinite() used by QoS policies ("no deadline", "block forever").
//
// Threading: a value type.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>

#include <dds/core/Exception.hpp>

namespace dds::core {

class Duration {
 public:
  static constexpr std::int32_t kInfiniteSec = 0x7fffffff;
  static constexpr std::uint32_t kInfiniteNsec = 0x7fffffffu;

  constexpr Duration() = default;
  // Throws InvalidArgumentError for a negative span or nanoseconds >= 1e9 (other than the
  // infinite value's).
  constexpr Duration(std::int32_t sec, std::uint32_t nanosec) : sec_(sec), nsec_(nanosec) {
    const bool infinite = sec == kInfiniteSec && nanosec == kInfiniteNsec;
    if (!infinite && (sec < 0 || nanosec >= 1'000'000'000u)) {
      throw InvalidArgumentError("dds::core::Duration: sec must be >= 0 and nanosec < 1e9");
    }
  }
  // Whole seconds.
  constexpr explicit Duration(std::int32_t sec) : Duration(sec, 0) {}
  template <class Rep, class Period>
  constexpr Duration(std::chrono::duration<Rep, Period> d)  // NOLINT(google-explicit-constructor)
      : Duration(from_nanos(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count())) {}

  static constexpr Duration zero() { return {}; }
  static constexpr Duration infinite() { return {kInfiniteSec, kInfiniteNsec}; }
  static constexpr Duration from_microsecs(std::uint64_t us) {
    return from_nanos(static_cast<std::int64_t>(us) * 1000);
  }
  static constexpr Duration from_millisecs(std::uint64_t ms) {
    return from_nanos(static_cast<std::int64_t>(ms) * 1'000'000);
  }
  static Duration from_secs(double s) {
    if (!(s >= 0)) throw InvalidArgumentError("dds::core::Duration: negative seconds");
    return from_nanos(static_cast<std::int64_t>(s * 1e9));
  }

  [[nodiscard]] constexpr std::int32_t sec() const noexcept { return sec_; }
  [[nodiscard]] constexpr std::uint32_t nanosec() const noexcept { return nsec_; }
  void sec(std::int32_t s) { *this = Duration(s, nsec_); }
  void nanosec(std::uint32_t ns) { *this = Duration(sec_, ns); }
  [[nodiscard]] constexpr bool is_infinite() const noexcept {
    return sec_ == kInfiniteSec && nsec_ == kInfiniteNsec;
  }

  // Infinite saturates to the largest representable count.
  [[nodiscard]] constexpr std::int64_t to_nanosecs() const noexcept {
    if (is_infinite()) return INT64_MAX;
    return std::int64_t{sec_} * 1'000'000'000 + nsec_;
  }
  [[nodiscard]] constexpr std::int64_t to_microsecs() const noexcept {
    return is_infinite() ? INT64_MAX : to_nanosecs() / 1000;
  }
  [[nodiscard]] constexpr std::int64_t to_millisecs() const noexcept {
    return is_infinite() ? INT64_MAX : to_nanosecs() / 1'000'000;
  }
  [[nodiscard]] constexpr double to_secs() const noexcept {
    return static_cast<double>(sec_) + static_cast<double>(nsec_) * 1e-9;
  }
  [[nodiscard]] constexpr std::chrono::nanoseconds to_chrono() const noexcept {
    return std::chrono::nanoseconds(to_nanosecs());
  }

  constexpr int compare(const Duration& o) const noexcept {
    return to_nanosecs() < o.to_nanosecs() ? -1 : (to_nanosecs() > o.to_nanosecs() ? 1 : 0);
  }
  friend constexpr bool operator==(const Duration& a, const Duration& b) noexcept {
    return a.compare(b) == 0;
  }
  friend constexpr auto operator<=>(const Duration& a, const Duration& b) noexcept {
    return a.to_nanosecs() <=> b.to_nanosecs();
  }
  // Arithmetic saturates at infinite (a product too large for the type too); subtraction
  // below zero throws.
  friend constexpr Duration operator+(const Duration& a, const Duration& b) {
    if (a.is_infinite() || b.is_infinite()) return infinite();
    return from_nanos(a.to_nanosecs() + b.to_nanosecs());
  }
  friend constexpr Duration operator-(const Duration& a, const Duration& b) {
    if (a.is_infinite()) return infinite();
    if (b > a) throw InvalidArgumentError("dds::core::Duration: negative result of subtraction");
    return from_nanos(a.to_nanosecs() - b.to_nanosecs());
  }
  friend constexpr Duration operator*(const Duration& a, std::uint64_t k) {
    if (a.is_infinite()) return infinite();
    const auto ns = static_cast<std::uint64_t>(a.to_nanosecs());
    if (k != 0 && ns > static_cast<std::uint64_t>(INT64_MAX) / k) return infinite();
    return from_nanos(static_cast<std::int64_t>(ns * k));
  }
  friend constexpr Duration operator*(std::uint64_t k, const Duration& a) { return a * k; }
  // A k-th of the span (rounded down); infinite stays infinite; k = 0 throws.
  friend constexpr Duration operator/(const Duration& a, std::uint64_t k) {
    if (k == 0) throw InvalidArgumentError("dds::core::Duration: division by zero");
    if (a.is_infinite()) return infinite();
    return from_nanos(a.to_nanosecs() / static_cast<std::int64_t>(k));
  }
  Duration& operator*=(std::uint64_t k) { return *this = *this * k; }
  Duration& operator+=(const Duration& o) { return *this = *this + o; }
  Duration& operator-=(const Duration& o) { return *this = *this - o; }

 private:
  static constexpr Duration from_nanos(std::int64_t ns) {
    if (ns < 0) throw InvalidArgumentError("dds::core::Duration: negative span");
    const std::int64_t s = ns / 1'000'000'000;
    if (s >= kInfiniteSec) return infinite();
    return {static_cast<std::int32_t>(s), static_cast<std::uint32_t>(ns % 1'000'000'000)};
  }
  std::int32_t sec_ = 0;
  std::uint32_t nsec_ = 0;
};

}  // namespace dds::core

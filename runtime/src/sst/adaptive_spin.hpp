// AdaptiveSpin: how long a polling thread spins before it sleeps, from how its last spins
// ended (docs/user-guide.md, "Performance"). Spinning pays only when work comes back within
// the spin: back to back it saves the wake-up (tens of microseconds), at a low rate it
// burns the whole spin every time and catches nothing (at 100 round trips a second, a
// 1 ms spin costs 10 % of a core for the same latency as none).
//
// So it spins the full `max` (the engine.idle_spin knob) while traffic is recent, and
// only kShort once kMissesToShort spins in a row ran out without work. In that state
// every kProbeEvery-th spin is a full one again, and any spin that catches work (short or
// probe) brings the full spin back: traffic that returns to a fast pace is noticed
// within kProbeEvery waits.
//
// Not thread-safe: one owner (the predicate loop's token holder).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace spindle::sst {

class AdaptiveSpin {
 public:
  static constexpr std::chrono::nanoseconds kShort = std::chrono::microseconds(20);
  static constexpr std::uint32_t kMissesToShort = 2;
  static constexpr std::uint32_t kProbeEvery = 16;

  explicit AdaptiveSpin(std::chrono::nanoseconds max = {}) noexcept : max_(max) {}

  void set_max(std::chrono::nanoseconds max) noexcept { max_ = max; }
  [[nodiscard]] std::chrono::nanoseconds max() const noexcept { return max_; }

  // The spin for the next idle period.
  [[nodiscard]] std::chrono::nanoseconds next() noexcept {
    if (misses_ < kMissesToShort) return max_;
    if (++short_spins_ % kProbeEvery == 0) return max_;
    return std::min(max_, kShort);
  }
  // Work came within the spin.
  void hit() noexcept {
    misses_ = 0;
    short_spins_ = 0;
  }
  // The spin ran out without work.
  void miss() noexcept { misses_ = std::min(misses_ + 1, kMissesToShort); }

  [[nodiscard]] bool short_now() const noexcept { return misses_ >= kMissesToShort; }

 private:
  std::chrono::nanoseconds max_;
  std::uint32_t misses_ = 0;
  std::uint32_t short_spins_ = 0;
};

}  // namespace spindle::sst

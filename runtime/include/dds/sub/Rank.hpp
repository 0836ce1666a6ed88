// dds::sub::Rank: where a sample stands within the collection a read/take returned
// (DDS-PSM-Cxx §7.5.4, DCPS §2.2.2.5.5). For a sample S of instance I:
//   sample()              samples of I that follow S in the returned collection;
//   generation()          generations between S and the most recent sample of I in the
//                         collection;
//   absolute_generation() generations between S and the most recent sample of I the
//                         reader has received (whether returned or not).
// A generation is GenerationCount::disposed() + no_writers().
//
// Threading: a value type.
#pragma once

#include <cstdint>

namespace dds::sub {

class Rank {
 public:
  constexpr Rank() = default;
  constexpr Rank(std::int32_t sample_rank, std::int32_t generation_rank,
                 std::int32_t absolute_generation_rank) noexcept
      : sample_(sample_rank),
        generation_(generation_rank),
        absolute_generation_(absolute_generation_rank) {}

  [[nodiscard]] constexpr std::int32_t sample() const noexcept { return sample_; }
  [[nodiscard]] constexpr std::int32_t generation() const noexcept { return generation_; }
  [[nodiscard]] constexpr std::int32_t absolute_generation() const noexcept {
    return absolute_generation_;
  }
  friend constexpr bool operator==(const Rank&, const Rank&) = default;

 private:
  std::int32_t sample_ = 0;
  std::int32_t generation_ = 0;
  std::int32_t absolute_generation_ = 0;
};

}  // namespace dds::sub

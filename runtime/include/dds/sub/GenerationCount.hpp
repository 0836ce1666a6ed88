// dds::sub::GenerationCount: how many times an instance had come back to ALIVE when a
// sample was received — after being disposed (disposed()) and after losing all its
// writers (no_writers()) — as reported in SampleInfo (DDS-PSM-Cxx §7.5.4, DCPS
// §2.2.2.5.5).
//
// Threading: a value type.
#pragma once

#include <cstdint>

namespace dds::sub {

class GenerationCount {
 public:
  constexpr GenerationCount() = default;
  constexpr GenerationCount(std::int32_t disposed_generation_count,
                            std::int32_t no_writers_generation_count) noexcept
      : disposed_(disposed_generation_count), no_writers_(no_writers_generation_count) {}

  [[nodiscard]] constexpr std::int32_t disposed() const noexcept { return disposed_; }
  [[nodiscard]] constexpr std::int32_t no_writers() const noexcept { return no_writers_; }
  // disposed() + no_writers(): the generation the ranks are computed from.
  [[nodiscard]] constexpr std::int32_t sum() const noexcept { return disposed_ + no_writers_; }
  friend constexpr bool operator==(const GenerationCount&, const GenerationCount&) = default;

 private:
  std::int32_t disposed_ = 0;
  std::int32_t no_writers_ = 0;
};

}  // namespace dds::sub

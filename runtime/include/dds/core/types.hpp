// Basic DCPS types (DDS-PSM-Cxx §7.3.1): byte and string sequences, LENGTH_UNLIMITED, and
// `dds::core::null`, the value that stands for "no listener" or "no entity" in constructors.
//
// Threading: value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dds/core/conformance.hpp>

namespace dds::core {

using ByteSeq = std::vector<std::uint8_t>;
using StringSeq = std::vector<std::string>;

// "No limit" in ResourceLimits, DurabilityService and read/take max_samples.
inline constexpr std::int32_t LENGTH_UNLIMITED = -1;

class null_type {};
inline constexpr null_type null{};

}  // namespace dds::core

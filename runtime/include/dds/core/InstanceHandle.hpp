// dds::core::InstanceHandle: an opaque, process-local handle of an instance (a key value
// of a topic) or of an entity (DDS-PSM-Cxx §7.3.6). nil() names nothing.
//
// Threading: a value type.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <vector>

#include <dds/core/types.hpp>

namespace dds::core {

class InstanceHandle {
 public:
  constexpr InstanceHandle() = default;
  // The nil handle: `InstanceHandle h = dds::core::null;`, `h == dds::core::null`.
  constexpr InstanceHandle(const null_type&) noexcept {}  // NOLINT(google-explicit-constructor)
  // Spindle extension: handles are 64-bit values assigned by the runtime.
  constexpr explicit InstanceHandle(std::uint64_t value) noexcept : value_(value) {}
  static constexpr InstanceHandle nil() noexcept { return {}; }
  [[nodiscard]] constexpr bool is_nil() const noexcept { return value_ == 0; }
  [[nodiscard]] constexpr std::uint64_t value() const noexcept { return value_; }
  friend constexpr bool operator==(InstanceHandle, InstanceHandle) noexcept = default;
  friend constexpr auto operator<=>(InstanceHandle, InstanceHandle) noexcept = default;
  friend std::ostream& operator<<(std::ostream& os, InstanceHandle h) {
    return os << "InstanceHandle(" << h.value_ << ")";
  }

 private:
  std::uint64_t value_ = 0;
};

using InstanceHandleSeq = std::vector<InstanceHandle>;

}  // namespace dds::core

template <>
struct std::hash<dds::core::InstanceHandle> {
  std::size_t operator()(dds::core::InstanceHandle h) const noexcept {
    return std::hash<std::uint64_t>{}(h.value());
  }
};

// dds::core::safe_enum: the ISO C++ PSM's scoped enumeration (DDS-PSM-Cxx §7.3.7). A
// definition struct `XxxKind_def { enum Type { A, B }; }` becomes `XxxKind`, whose values
// are spelled `XxxKind::A` and whose setters take `XxxKind::Type`; the value does not
// convert to int silently (underlying() does that on purpose).
//
// Threading: a value type.
#pragma once

#include <compare>

namespace dds::core {

template <class Def, class Inner = typename Def::Type>
class safe_enum : public Def {
 public:
  using type = typename Def::Type;

  constexpr safe_enum() noexcept : value_(Inner{}) {}
  constexpr safe_enum(type v) noexcept : value_(v) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] constexpr Inner underlying() const noexcept { return value_; }

  friend constexpr bool operator==(const safe_enum& a, const safe_enum& b) noexcept {
    return a.value_ == b.value_;
  }
  friend constexpr std::strong_ordering operator<=>(const safe_enum& a,
                                                    const safe_enum& b) noexcept {
    return a.value_ <=> b.value_;
  }

 private:
  Inner value_;
};

}  // namespace dds::core

// spindle::reflect: what the runtime can see of a generated type's members at run time, for
// content filters and query conditions (DDS 1.4 annex B: `a.b > %0 AND name LIKE 'x%'`).
// idlc specializes `spindle::reflect::Reflect<T>` for every struct it generates; a member
// that a filter can read (a primitive, string, enum, nested struct, or an @optional of
// those) has a getter, the others are listed with Kind::other so a filter naming them gets
// a clear error instead of "no such member".
//
// Threading: the tables are immutable statics; the getters are pure.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace spindle::reflect {

enum class Kind : std::uint8_t {
  absent,        // an @optional member without a value (only in a Value)
  boolean,       // i
  character,     // u (the character's code)
  signed_int,    // i
  unsigned_int,  // u
  floating,      // f
  string,        // s
  enumeration,   // i (the enumerator's value); Member::enumerators names them
  structure,     // nested struct: Member::nested and Member::object
  other,         // sequence, array, map, union, bitset...: not readable by a filter
};

struct Value {
  Kind kind = Kind::absent;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
  std::string_view s;  // refers into the sample
};

struct Enumerator {
  std::string_view name;
  std::int32_t value;
};

struct StructInfo;

struct Member {
  std::string_view name;
  Kind kind = Kind::other;
  // Kind::boolean..enumeration: the member's value in `sample` (Kind::absent for an unset
  // optional).
  Value (*get)(const void* sample) = nullptr;
  // Kind::structure: the nested struct's table, and the nested object inside `sample`
  // (null for an unset optional).
  const StructInfo& (*nested)() = nullptr;
  const void* (*object)(const void* sample) = nullptr;
  // Kind::enumeration: the enumerators.
  std::span<const Enumerator> enumerators;
};

struct StructInfo {
  std::string_view name;  // scoped IDL name, "Module::Type"
  std::span<const Member> members;

  [[nodiscard]] const Member* find(std::string_view member) const noexcept {
    for (const auto& m : members)
      if (m.name == member) return &m;
    return nullptr;
  }
};

// A member's value as a filter sees it; generated getters are one call to this. Handles
// bool, characters, integers, floating point, std::string, enums and std::optional of those.
template <class T>
[[nodiscard]] Value value_of(const T& v) {
  Value out;
  if constexpr (std::is_same_v<T, bool>) {
    out.kind = Kind::boolean;
    out.i = v ? 1 : 0;
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, wchar_t>) {
    out.kind = Kind::character;
    out.u = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    out.kind = Kind::signed_int;
    out.i = static_cast<std::int64_t>(v);
  } else if constexpr (std::is_integral_v<T>) {
    out.kind = Kind::unsigned_int;
    out.u = static_cast<std::uint64_t>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    out.kind = Kind::floating;
    out.f = static_cast<double>(v);
  } else if constexpr (std::is_enum_v<T>) {
    out.kind = Kind::enumeration;
    out.i = static_cast<std::int64_t>(static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    out.kind = Kind::string;
    out.s = v;
  } else {
    static_assert(sizeof(T) == 0, "no filter value for this type");
  }
  return out;
}
template <class T>
[[nodiscard]] Value value_of(const std::optional<T>& v) {
  return v ? value_of(*v) : Value{};
}
// The nested object of a Kind::structure member (null for an unset optional).
template <class T>
[[nodiscard]] const void* object_of(const T& v) {
  return &v;
}
template <class T>
[[nodiscard]] const void* object_of(const std::optional<T>& v) {
  return v ? &*v : nullptr;
}

// Specialized by idlc for each struct: `static const StructInfo& info();`.
template <class T>
struct Reflect;

template <class T>
concept Reflected = requires {
  { Reflect<T>::info() } -> std::same_as<const StructInfo&>;
};

}  // namespace spindle::reflect

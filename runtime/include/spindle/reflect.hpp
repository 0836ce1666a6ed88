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
#include <span>
#include <string_view>

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

// Specialized by idlc for each struct: `static const StructInfo& info();`.
template <class T>
struct Reflect;

template <class T>
concept Reflected = requires {
  { Reflect<T>::info() } -> std::same_as<const StructInfo&>;
};

}  // namespace spindle::reflect

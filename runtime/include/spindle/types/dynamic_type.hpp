// Types known at run time: the model that dynamic encoding, JSON, type information in
// discovery (XTypes TypeObject) and the gateway share. A type comes from IDL text (the idlc
// front end as a library, <spindle/types/from_idl.hpp>), from discovered type information
// (<spindle/types/type_object.hpp>), or is built by hand through TypeLibrary.
//
// The model follows the IDL, not the C++ mapping: an alias stays an alias (type information
// names it), an array keeps its dimensions together, a struct keeps its base. What the wire
// needs (extensibility, member ids, optional and key flags, bounds) is all here, so that
// encoding a sample of a dynamic type gives the bytes generated code gives
// (<spindle/types/dynamic_data.hpp>).
//
// Ownership: a TypeLibrary owns every Type in it; Type pointers (members, elements, bases)
// are non-owning and stay valid for the library's lifetime. Types may refer to each other in
// cycles (a struct holding a sequence of itself).
//
// Threading: a library is built by one thread; once built, it and its types are immutable
// and may be read from any number of threads.
#pragma once

#include <spindle/cdr/codec.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace spindle::types {

enum class TypeKind : uint8_t {
  // primitives
  Boolean,
  Byte,  // octet
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float32,
  Float64,
  Float128,  // long double
  Char8,
  Char16,  // wchar
  // strings and collections (anonymous)
  String8,
  String16,  // wstring
  Sequence,
  Array,
  Map,
  // named
  Alias,
  Enum,
  Bitmask,
  Bitset,
  Struct,
  Union,
};

[[nodiscard]] constexpr bool is_primitive(TypeKind k) {
  return k <= TypeKind::Char16;
}
[[nodiscard]] constexpr bool is_named(TypeKind k) {
  return k >= TypeKind::Alias;
}
[[nodiscard]] const char* to_string(TypeKind k);

using cdr::Extensibility;

// A constant from the IDL (@default, @range bounds, union labels). Characters and
// enumerators are their integer codes; strings are UTF-8.
using Literal = std::variant<bool, int64_t, uint64_t, long double, std::string>;

struct Type;

struct Member {
  std::string name;
  uint32_t id = 0;  // @id / @autoid / position
  const Type* type = nullptr;
  bool key = false;
  bool optional = false;
  bool must_understand = false;
  bool external = false;
  std::optional<Literal> default_value;  // @default
  std::optional<Literal> min;            // @min / @range(min=)
  std::optional<Literal> max;            // @max / @range(max=)
};

struct UnionCase {
  std::vector<int64_t> labels;  // the discriminator values (enumerator values for enums)
  bool is_default = false;
  Member member;
};

struct Enumerator {
  std::string name;
  int32_t value = 0;
};

struct BitFlag {
  std::string name;
  uint32_t position = 0;
};

struct Bitfield {
  std::string name;  // empty for padding
  uint32_t width = 0;
  uint32_t offset = 0;                // of its lowest bit in the holder, base fields included
  TypeKind holder = TypeKind::UInt8;  // the C++ member type: Boolean, (U)Int8..(U)Int64
};

struct Type {
  TypeKind kind = TypeKind::Int32;
  std::string name;  // named kinds: the scoped name "A::B::T" (no leading "::")

  // String8/String16/Sequence/Map: 0 = unbounded. Bitmask/Enum: the @bit_bound.
  uint64_t bound = 0;
  std::vector<uint32_t> dims;     // Array: outermost first, each > 0
  const Type* element = nullptr;  // Sequence/Array: element; Map: value; Alias: target
  const Type* key = nullptr;      // Map
  const Type* base = nullptr;     // Struct: base struct; Bitset: base bitset

  // Struct and Union
  Extensibility extensibility = Extensibility::Final;
  bool extensibility_explicit = false;
  uint8_t representations = cdr::kXcdr1Bit | cdr::kXcdr2Bit;  // @data_representation
  bool nested = false;                                        // @nested
  std::vector<Member> members;  // Struct: own members (the base's come first on the wire)

  // Union
  const Type* discriminator = nullptr;
  std::vector<UnionCase> cases;
  std::optional<int64_t> implicit_default;  // a value selecting no case (no `default:`)

  std::vector<Enumerator> enumerators;  // Enum
  std::vector<BitFlag> flags;           // Bitmask
  std::vector<Bitfield> bitfields;      // Bitset: own fields, padding included
  uint32_t total_bits = 0;              // Bitset: base included
};

// Follows aliases to the type underneath.
[[nodiscard]] const Type& resolve(const Type& t);

// All members of a struct, the base's first.
[[nodiscard]] std::vector<const Member*> all_members(const Type& s);
// All bitfields of a bitset, the base's first, padding included.
[[nodiscard]] std::vector<const Bitfield*> all_bitfields(const Type& b);

// The key of a struct flattened to its leaves: each path starts at a member of the struct
// (or its base) and goes through nested struct members down to a key leaf. A key member of
// a struct type with no keys of its own contributes every member of that struct.
[[nodiscard]] std::vector<std::vector<const Member*>> key_paths(const Type& s);

// The encoding a writer of the type uses unless told otherwise, as generated code chooses
// it (docs/cdr.md, "Which encoding"), and the representation id of its samples.
[[nodiscard]] cdr::Encoding default_encoding(const Type& t);
[[nodiscard]] uint8_t representation_id(const Type& t, cdr::Encoding e, cdr::Endianness order);

// Owns a set of types; named types are found by scoped name.
class TypeLibrary {
 public:
  TypeLibrary() = default;
  TypeLibrary(const TypeLibrary&) = delete;
  TypeLibrary& operator=(const TypeLibrary&) = delete;
  TypeLibrary(TypeLibrary&&) = default;
  TypeLibrary& operator=(TypeLibrary&&) = default;

  // The primitive of that kind, or a string (String8/String16) of that bound.
  const Type* primitive(TypeKind k);
  const Type* string(TypeKind k, uint64_t bound);
  const Type* sequence(const Type* element, uint64_t bound);
  const Type* array(const Type* element, std::vector<uint32_t> dims);
  const Type* map(const Type* key, const Type* value, uint64_t bound);

  // A new named type; fill it, then do not change it once samples are encoded. Throws
  // std::invalid_argument when the name is taken.
  Type* add_named(TypeKind kind, std::string scoped_name);

  // A named type by scoped name (with or without a leading "::"); nullptr when unknown.
  [[nodiscard]] const Type* find(std::string_view scoped_name) const;
  // Named types in the order they were added.
  [[nodiscard]] const std::vector<const Type*>& named() const { return named_order_; }

 private:
  Type* own(Type t);

  std::vector<std::unique_ptr<Type>> storage_;
  std::unordered_map<std::string, Type*> by_name_;
  std::vector<const Type*> named_order_;
};

}  // namespace spindle::types

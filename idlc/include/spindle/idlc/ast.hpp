// The idlc abstract syntax tree: what the front end (preprocessor, parser, semantic
// checks) hands to the generators.
//
// Ownership: a Specification owns every Decl of one compilation (the main file and
// everything it includes) through `storage`; all other pointers in the tree are
// non-owning and stay valid for the Specification's lifetime. Types are immutable
// values shared through TypePtr.
//
// After a successful semantic pass every invariant written on a field below holds;
// a generator never has to re-check names, bounds or constants.
//
// Threading: built and read by one thread; no synchronization.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace spindle::idlc {

// A position in an original (pre-preprocessing) source file; line and column are 1-based.
struct SourceLocation {
  std::shared_ptr<const std::string> file;
  uint32_t line = 0;
  uint32_t column = 0;

  [[nodiscard]] std::string str() const;  // "file:line:col"
};

struct Decl;
struct EnumDecl;
struct EnumeratorDecl;

// ----------------------------------------------------------------------------- values
struct CharValue {
  char32_t value = 0;
  bool wide = false;
};
struct StringValue {
  std::string utf8;
  bool wide = false;
};
// The value of a constant expression after evaluation. Integers are kept as int64_t when
// negative-capable and uint64_t when above INT64_MAX; sema checks they fit the target type.
using ConstValue = std::variant<bool, int64_t, uint64_t, long double, CharValue, StringValue,
                                const EnumeratorDecl*>;

// ----------------------------------------------------------------------------- types
enum class PrimitiveKind : uint8_t {
  Boolean,
  Char,
  WChar,
  Octet,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float,
  Double,
  LongDouble,
};

struct Type;
using TypePtr = std::shared_ptr<const Type>;

struct Type {
  enum class Kind : uint8_t { Primitive, String, Sequence, Map, Named };
  Kind kind = Kind::Primitive;
  PrimitiveKind primitive = PrimitiveKind::Int32;  // Kind::Primitive
  bool wide = false;                               // Kind::String: wstring
  uint64_t bound = 0;          // String / Sequence / Map: 0 = unbounded, else > 0
  TypePtr element;             // Sequence: the element; Map: the value
  TypePtr key;                 // Map: the key (an integer, character, string or enum type)
  const Decl* decl = nullptr;  // Named: a Struct/Union/Enum/Bitmask/Typedef decl (never a
                               // forward declaration after sema: resolved to the definition)
};

// ----------------------------------------------------------------------------- annotations
struct AnnotationParam {
  std::string name;  // "value" for the single unnamed parameter
  ConstValue value;
};
struct Annotation {
  std::string name;  // without '@', e.g. "key", "range"
  std::vector<AnnotationParam> params;
  SourceLocation loc;
};

enum class Extensibility : uint8_t { Final, Appendable, Mutable };

// ----------------------------------------------------------------------------- declarations
enum class DeclKind : uint8_t {
  Module,
  Struct,
  Union,
  Enum,
  Enumerator,
  Bitmask,
  Typedef,
  Const,
  ForwardStruct,
  ForwardUnion,
  Bitset,
  Annotation,  // a user `@annotation` declaration: recorded, never generated
};

struct ModuleDecl;

struct Decl {
  Decl(DeclKind k, std::string n, SourceLocation l)
      : kind(k), name(std::move(n)), loc(std::move(l)) {}
  Decl(const Decl&) = delete;
  Decl& operator=(const Decl&) = delete;
  virtual ~Decl() = default;

  DeclKind kind;
  std::string name;
  SourceLocation loc;
  const ModuleDecl* parent = nullptr;  // nullptr at global scope
  std::vector<Annotation> annotations;
  bool from_main_file = true;  // false for declarations that came from an #include

  // "A::B::Name" (no leading "::").
  [[nodiscard]] std::string scoped_name() const;
  // Components of the enclosing module path, outermost first.
  [[nodiscard]] std::vector<std::string> module_path() const;
};

// One opening of a module. A module reopened later is a second ModuleDecl with the same
// scoped name; generators walk openings in source order, which is declaration order.
struct ModuleDecl : Decl {
  ModuleDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Module, std::move(n), std::move(l)) {}
  std::vector<Decl*> members;
};

struct MemberDecl {
  std::string name;
  SourceLocation loc;
  TypePtr type;
  std::vector<uint64_t> array_dims;  // outermost first; each > 0
  std::vector<Annotation> annotations;
  // Filled in by sema from the annotations:
  bool is_key = false;
  bool is_optional = false;
  bool is_external = false;      // @external: generated as a plain value member (docs/idlc.md)
  bool must_understand = false;  // @must_understand: the M flag of its XCDR1 parameter header
  uint32_t id = 0;               // member id (@id / @autoid / position)
  std::optional<ConstValue> default_value;  // @default
  std::optional<ConstValue> min;            // @min / @range(min=…)
  std::optional<ConstValue> max;            // @max / @range(max=…)
};

struct StructDecl : Decl {
  StructDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Struct, std::move(n), std::move(l)) {}
  const StructDecl* base = nullptr;
  std::vector<MemberDecl> members;  // own members only, base members come first on the wire
  Extensibility extensibility = Extensibility::Appendable;
  bool extensibility_explicit = false;  // @final / @appendable / @mutable / @extensibility
  uint8_t representations = 3;          // @data_representation: bit 0 XCDR1, bit 1 XCDR2
  bool is_topic = false;                // @topic, or has keys / a keylist, and not @nested
  bool is_nested = false;               // @nested
  // Key of the type, flattened: each path goes from a member of this struct (or its base)
  // through nested struct members down to a key leaf, in key order.
  std::vector<std::vector<const MemberDecl*>> key_paths;
};

struct UnionCase {
  std::vector<ConstValue> labels;  // converted to the discriminator type
  bool is_default = false;
  MemberDecl member;
};

struct UnionDecl : Decl {
  UnionDecl(std::string n, SourceLocation l) : Decl(DeclKind::Union, std::move(n), std::move(l)) {}
  TypePtr discriminator;  // integer, char, boolean or enum (possibly through a typedef)
  std::vector<UnionCase> cases;
  Extensibility extensibility = Extensibility::Appendable;
  bool extensibility_explicit = false;  // as StructDecl's
  uint8_t representations = 3;          // as StructDecl's
  bool is_nested = false;  // @nested: never a topic type (a union is one otherwise, keyless)
  // A discriminator value selecting no case, for the implicit default when there is no
  // `default:` case and the labels do not cover the discriminator's range.
  std::optional<ConstValue> implicit_default;
};

struct EnumeratorDecl : Decl {
  EnumeratorDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Enumerator, std::move(n), std::move(l)) {}
  const EnumDecl* owner = nullptr;
  uint32_t value = 0;
};

struct EnumDecl : Decl {
  EnumDecl(std::string n, SourceLocation l) : Decl(DeclKind::Enum, std::move(n), std::move(l)) {}
  std::vector<EnumeratorDecl*> enumerators;
  uint32_t bit_bound = 32;  // @bit_bound
  // @final / @appendable: recorded; an enum's XCDR1 encoding is the same either way.
  Extensibility extensibility = Extensibility::Final;
};

struct BitValue {
  std::string name;
  SourceLocation loc;
  uint32_t position = 0;  // bit index, < bit_bound
};

struct BitmaskDecl : Decl {
  BitmaskDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Bitmask, std::move(n), std::move(l)) {}
  std::vector<BitValue> values;
  uint32_t bit_bound = 32;  // 1..64: selects uint8/16/32/64 on the wire
};

// One `bitfield<width[, type]> a, b;` declarator, or anonymous padding (empty name).
struct Bitfield {
  std::string name;  // "" for padding bits
  SourceLocation loc;
  uint32_t width = 0;   // 1..64
  uint32_t offset = 0;  // of its lowest bit in the holder integer, base bitfields included
  // The C++ member type: the declared destination type, else the smallest unsigned integer
  // (boolean for width 1 only when declared so).
  PrimitiveKind type = PrimitiveKind::UInt8;
};

// XTypes 1.3 7.3.1.2.1.x: bitfields packed from the least significant bit of one holder
// integer of the total width (base bitfields first), which is what goes on the wire.
struct BitsetDecl : Decl {
  BitsetDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Bitset, std::move(n), std::move(l)) {}
  const BitsetDecl* base = nullptr;
  std::vector<Bitfield> fields;  // own fields only, padding included
  uint32_t total_bits = 0;       // base included; 1..64 after sema
};

struct AnnotationMemberDecl {
  std::string name;
  SourceLocation loc;
  TypePtr type;
  std::optional<ConstValue> default_value;  // converted to `type`
};

// `@annotation Name { type member [default value]; ... };`: applying it is accepted and has
// no effect on the generated code; its parameters are checked against these members.
struct AnnotationDecl : Decl {
  AnnotationDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Annotation, std::move(n), std::move(l)) {}
  std::vector<AnnotationMemberDecl> members;
};

struct TypedefDecl : Decl {
  TypedefDecl(std::string n, SourceLocation l)
      : Decl(DeclKind::Typedef, std::move(n), std::move(l)) {}
  TypePtr type;
  std::vector<uint64_t> array_dims;
};

struct ConstDecl : Decl {
  ConstDecl(std::string n, SourceLocation l) : Decl(DeclKind::Const, std::move(n), std::move(l)) {}
  TypePtr type;
  ConstValue value;  // converted to `type`
};

// `struct X;` / `union X;`; `definition` is set by sema when the type is defined later.
struct ForwardDecl : Decl {
  ForwardDecl(DeclKind k, std::string n, SourceLocation l) : Decl(k, std::move(n), std::move(l)) {}
  const Decl* definition = nullptr;
};

// One compilation: the main file and its includes.
struct Specification {
  std::string main_file;
  std::vector<Decl*> definitions;            // top level, in source order (includes' decls too)
  std::vector<std::string> direct_includes;  // as spelled in the main file's #include lines
  std::vector<std::string> source_files;     // every file read (main first), for depfiles
  std::vector<std::unique_ptr<Decl>> storage;

  template <class T, class... Args>
  T* make(Args&&... args) {
    auto owned = std::make_unique<T>(std::forward<Args>(args)...);
    T* raw = owned.get();
    storage.push_back(std::move(owned));
    return raw;
  }
};

// Follows typedefs until a non-typedef type; array dimensions met on the way are appended
// to `dims` when given.
[[nodiscard]] const Type& resolve_typedefs(const Type& t, std::vector<uint64_t>* dims = nullptr);

}  // namespace spindle::idlc

// The C++ backend of idlc: IDL-to-C++11 mapping classes, Codec<T> specializations that call
// the runtime templates of <spindle/cdr/codec.hpp>, topic traits and printers.
//
// Generated code is kept thin (STYLE 12): one line per member in each codec; every rule of
// the encoding lives in the runtime. The header holds the types and the inline codecs (so
// serialization inlines as well as hand-written Fast-CDR calls), the source file the
// printers.
#include <spindle/idlc/generator.hpp>
#include <spindle/types/from_idl.hpp>
#include <spindle/types/type_object.hpp>

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace spindle::idlc {
namespace {

// ----------------------------------------------------------------------------- names
const std::unordered_set<std::string>& cxx_keywords() {
  static const std::unordered_set<std::string> kKeywords = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq",      "int8_t",
      "uint8_t",       "int16_t",     "uint16_t",
      "int32_t",       "uint32_t",    "int64_t",
      "uint64_t",      "std",         "spindle"};
  return kKeywords;
}

// IDL-to-C++11 §6.1: an IDL identifier that is a C++ keyword gets the prefix "_cxx_".
std::string cxx_id(const std::string& idl) {
  return cxx_keywords().contains(idl) ? "_cxx_" + idl : idl;
}

std::string qualified(const Decl& d) {
  std::string out;
  for (const auto& m : d.module_path())
    out += "::" + cxx_id(m);
  return out + "::" + cxx_id(d.name);
}

std::string primitive_cxx(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::Boolean:
      return "bool";
    case PrimitiveKind::Char:
      return "char";
    case PrimitiveKind::WChar:
      return "wchar_t";
    case PrimitiveKind::Octet:
      return "uint8_t";
    case PrimitiveKind::Int8:
      return "int8_t";
    case PrimitiveKind::UInt8:
      return "uint8_t";
    case PrimitiveKind::Int16:
      return "int16_t";
    case PrimitiveKind::UInt16:
      return "uint16_t";
    case PrimitiveKind::Int32:
      return "int32_t";
    case PrimitiveKind::UInt32:
      return "uint32_t";
    case PrimitiveKind::Int64:
      return "int64_t";
    case PrimitiveKind::UInt64:
      return "uint64_t";
    case PrimitiveKind::Float:
      return "float";
    case PrimitiveKind::Double:
      return "double";
    case PrimitiveKind::LongDouble:
      return "long double";
  }
  return "void";
}

size_t primitive_wire_size(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::Boolean:
    case PrimitiveKind::Char:
    case PrimitiveKind::Octet:
    case PrimitiveKind::Int8:
    case PrimitiveKind::UInt8:
      return 1;
    case PrimitiveKind::Int16:
    case PrimitiveKind::UInt16:
      return 2;
    case PrimitiveKind::WChar:
    case PrimitiveKind::Int32:
    case PrimitiveKind::UInt32:
    case PrimitiveKind::Float:
      return 4;
    case PrimitiveKind::Int64:
    case PrimitiveKind::UInt64:
    case PrimitiveKind::Double:
      return 8;
    case PrimitiveKind::LongDouble:
      return 16;
  }
  return 1;
}

std::string wrap_arrays(std::string inner, const std::vector<uint64_t>& dims) {
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    inner = "std::array<" + inner + ", " + std::to_string(*it) + ">";
  }
  return inner;
}

std::string bitmask_storage(uint32_t bit_bound) {
  if (bit_bound <= 8) return "uint8_t";
  if (bit_bound <= 16) return "uint16_t";
  if (bit_bound <= 32) return "uint32_t";
  return "uint64_t";
}

// C++ type of an IDL type (before array dimensions / optional).
std::string cxx_type(const Type& t) {
  switch (t.kind) {
    case Type::Kind::Primitive:
      return primitive_cxx(t.primitive);
    case Type::Kind::String:
      return t.wide ? "std::wstring" : "std::string";
    case Type::Kind::Sequence:
      return "std::vector<" + cxx_type(*t.element) + ">";
    case Type::Kind::Map:
      return "std::map<" + cxx_type(*t.key) + ", " + cxx_type(*t.element) + ">";
    case Type::Kind::Named:
      return qualified(*t.decl);
  }
  return "void";
}

std::string member_cxx_type(const MemberDecl& m) {
  std::string t = wrap_arrays(cxx_type(*m.type), m.array_dims);
  return m.is_optional ? "std::optional<" + t + ">" : t;
}

// The codec shape (see codec.hpp) of a type with array dimensions; "Plain" when the C++
// type says everything.
std::string shape_of(const Type& t, const std::vector<uint64_t>& dims);

std::string shape_arg(const std::string& s) {
  return s == "Plain" ? "" : s;
}

std::string base_shape(const Type& t) {
  switch (t.kind) {
    case Type::Kind::Primitive:
      return "Plain";
    case Type::Kind::String:
      return "Str<" + std::to_string(t.bound) + ">";
    case Type::Kind::Sequence: {
      std::string elem = shape_of(*t.element, {});
      return "Seq<" + std::to_string(t.bound) + (elem == "Plain" ? "" : ", " + elem) + ">";
    }
    case Type::Kind::Map: {
      const std::string k = shape_of(*t.key, {});
      const std::string v = shape_of(*t.element, {});
      std::string args;
      if (v != "Plain") {
        args = ", " + k + ", " + v;
      } else if (k != "Plain") {
        args = ", " + k;
      }
      return "Map<" + std::to_string(t.bound) + args + ">";
    }
    case Type::Kind::Named:
      if (t.decl->kind == DeclKind::Typedef) {
        const auto& td = static_cast<const TypedefDecl&>(*t.decl);
        return shape_of(*td.type, td.array_dims);
      }
      return "Plain";
  }
  return "Plain";
}

std::string shape_of(const Type& t, const std::vector<uint64_t>& dims) {
  std::string s = base_shape(t);
  for (auto it = dims.rbegin(); it != dims.rend(); ++it)
    s = "Arr<" + shape_arg(s) + ">";
  return s;
}

// ----------------------------------------------------------------------------- literals
std::string escape_char(char32_t c, char quote) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case '\\':
      return "\\\\";
    case 0:
      return "\\0";
    default:
      break;
  }
  if (c == static_cast<char32_t>(quote)) return std::string("\\") + quote;
  if (c >= 0x20 && c < 0x7F) return std::string(1, static_cast<char>(c));
  char buf[16];
  std::snprintf(buf, sizeof buf, c < 0x100 ? "\\x%02x" : "\\U%08x", static_cast<unsigned>(c));
  return buf;
}

// The shortest decimal that reads back as the same value of the target type.
std::string float_literal(long double v, PrimitiveKind k) {
  char buf[64];
  for (int digits = 6; digits <= LDBL_DIG + 3; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*Lg", digits, v);
    const long double back = std::strtold(buf, nullptr);
    const bool same = k == PrimitiveKind::Float ? static_cast<float>(back) == static_cast<float>(v)
                      : k == PrimitiveKind::Double
                          ? static_cast<double>(back) == static_cast<double>(v)
                          : back == v;
    if (same) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  if (k == PrimitiveKind::Float) return s + "F";
  if (k == PrimitiveKind::LongDouble) return s + "L";
  return s;
}

std::string integer_literal(const ConstValue& v) {
  if (const auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u) + "ULL";
  if (const auto* i = std::get_if<int64_t>(&v)) {
    if (*i == INT64_MIN) return "(-9223372036854775807LL - 1)";
    return std::to_string(*i) + "LL";
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "1" : "0";
  if (const auto* c = std::get_if<CharValue>(&v)) return std::to_string(c->value);
  if (const auto* f = std::get_if<long double>(&v))
    return float_literal(*f, PrimitiveKind::LongDouble);
  return "0";
}

// A C++ expression of the given IDL type for a constant value.
std::string literal(const ConstValue& v, const Type& type) {
  const Type& t = resolve_typedefs(type);
  if (const auto* e = std::get_if<const EnumeratorDecl*>(&v)) {
    return qualified(*(*e)->owner) + "::" + cxx_id((*e)->name);
  }
  if (const auto* s = std::get_if<StringValue>(&v)) {
    std::string out = s->wide ? "L\"" : "\"";
    for (char c : s->utf8)
      out += escape_char(static_cast<unsigned char>(c), '"');
    return out + "\"";
  }
  if (t.kind == Type::Kind::Primitive) {
    switch (t.primitive) {
      case PrimitiveKind::Boolean:
        if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
        return integer_literal(v) == "0" ? "false" : "true";
      case PrimitiveKind::Char:
      case PrimitiveKind::WChar:
        if (const auto* c = std::get_if<CharValue>(&v)) {
          return std::string(t.primitive == PrimitiveKind::WChar ? "L'" : "'") +
                 escape_char(c->value, '\'') + "'";
        }
        return "static_cast<" + primitive_cxx(t.primitive) + ">(" + integer_literal(v) + ")";
      case PrimitiveKind::Float:
      case PrimitiveKind::Double:
      case PrimitiveKind::LongDouble: {
        long double f = 0;
        if (const auto* d = std::get_if<long double>(&v)) {
          f = *d;
        } else if (const auto* i = std::get_if<int64_t>(&v)) {
          f = static_cast<long double>(*i);
        } else if (const auto* u = std::get_if<uint64_t>(&v)) {
          f = static_cast<long double>(*u);
        }
        return float_literal(f, t.primitive);
      }
      default:
        return "static_cast<" + primitive_cxx(t.primitive) + ">(" + integer_literal(v) + ")";
    }
  }
  return integer_literal(v);
}

// Whether a type is written in XCDR2 when its @data_representation allows both: it, or a type
// within it, is @appendable or @mutable by annotation, or has an @optional member — what
// Cyclone DDS writes in XCDR2 only. Unannotated types are appendable (XTypes) and written in
// XCDR1, whose bytes for them are a final type's: what Cyclone DDS (whose idlc takes them as
// final) and Fast DDS write for them.
bool wants_xcdr2(const Type& t, std::set<const Decl*>& seen);
bool wants_xcdr2(const Decl& d, std::set<const Decl*>& seen) {
  if (!seen.insert(&d).second) return false;
  switch (d.kind) {
    case DeclKind::Struct: {
      const auto& s = static_cast<const StructDecl&>(d);
      if (s.extensibility_explicit && s.extensibility != Extensibility::Final) return true;
      if (s.base != nullptr && wants_xcdr2(*s.base, seen)) return true;
      for (const auto& m : s.members)
        if (m.is_optional || wants_xcdr2(*m.type, seen)) return true;
      return false;
    }
    case DeclKind::Union: {
      const auto& u = static_cast<const UnionDecl&>(d);
      if (u.extensibility_explicit && u.extensibility != Extensibility::Final) return true;
      for (const auto& c : u.cases)
        if (wants_xcdr2(*c.member.type, seen)) return true;
      return false;
    }
    case DeclKind::Typedef:
      return wants_xcdr2(*static_cast<const TypedefDecl&>(d).type, seen);
    default:
      return false;
  }
}
bool wants_xcdr2(const Type& t, std::set<const Decl*>& seen) {
  switch (t.kind) {
    case Type::Kind::Sequence:
      return wants_xcdr2(*t.element, seen);
    case Type::Kind::Map:
      return wants_xcdr2(*t.key, seen) || wants_xcdr2(*t.element, seen);
    case Type::Kind::Named:
      return t.decl != nullptr && wants_xcdr2(*t.decl, seen);
    default:
      return false;
  }
}

bool is_cheap(const Type& type, const std::vector<uint64_t>& dims, bool optional) {
  if (!dims.empty() || optional) return false;
  std::vector<uint64_t> td_dims;
  const Type& t = resolve_typedefs(type, &td_dims);
  if (!td_dims.empty()) return false;
  if (t.kind == Type::Kind::Primitive) return true;
  return t.kind == Type::Kind::Named &&
         (t.decl->kind == DeclKind::Enum || t.decl->kind == DeclKind::Bitmask);
}

// ----------------------------------------------------------------------------- min sizes
size_t min_wire_size(const Type& t, const std::vector<uint64_t>& dims, int depth = 0);

size_t min_decl_size(const Decl& d, int depth) {
  if (depth > 32) return 1;
  switch (d.kind) {
    case DeclKind::Enum:
      return 4;
    case DeclKind::Bitmask: {
      const auto bb = static_cast<const BitmaskDecl&>(d).bit_bound;
      return bb <= 8 ? 1 : bb <= 16 ? 2 : bb <= 32 ? 4 : 8;
    }
    case DeclKind::Bitset: {
      const auto bb = static_cast<const BitsetDecl&>(d).total_bits;
      return bb <= 8 ? 1 : bb <= 16 ? 2 : bb <= 32 ? 4 : 8;
    }
    case DeclKind::Typedef: {
      const auto& td = static_cast<const TypedefDecl&>(d);
      return min_wire_size(*td.type, td.array_dims, depth + 1);
    }
    case DeclKind::Union:
      return min_wire_size(*static_cast<const UnionDecl&>(d).discriminator, {}, depth + 1);
    case DeclKind::Struct: {
      const auto& s = static_cast<const StructDecl&>(d);
      if (s.extensibility == Extensibility::Mutable) return 4;
      size_t n = s.base != nullptr ? min_decl_size(*s.base, depth + 1) : 0;
      for (const auto& m : s.members) {
        n += m.is_optional ? 4 : min_wire_size(*m.type, m.array_dims, depth + 1);
      }
      return n;
    }
    default:
      return 1;
  }
}

size_t min_wire_size(const Type& t, const std::vector<uint64_t>& dims, int depth) {
  size_t count = 1;
  for (auto d : dims)
    count *= static_cast<size_t>(d);
  switch (t.kind) {
    case Type::Kind::Primitive:
      return count * primitive_wire_size(t.primitive);
    case Type::Kind::String:
    case Type::Kind::Sequence:
    case Type::Kind::Map:
      return count * 4;
    case Type::Kind::Named:
      return count * min_decl_size(*t.decl, depth);
  }
  return count;
}

// ----------------------------------------------------------------------------- emitter
class Emitter {
 public:
  explicit Emitter(const Specification& spec) : spec_(spec) {}

  std::string header(const std::string& source, const std::string& guard_stem);
  std::string source(const std::string& source, const std::string& header_name);

 private:
  // Main-file declarations in source order, flattened out of modules.
  void collect(const std::vector<Decl*>& decls);
  void emit_types(std::ostringstream& os, const std::vector<Decl*>& decls, int indent);
  void emit_struct(std::ostringstream& os, const StructDecl& s, const std::string& ind);
  void emit_union(std::ostringstream& os, const UnionDecl& u, const std::string& ind);
  void emit_enum(std::ostringstream& os, const EnumDecl& e, const std::string& ind);
  void emit_bitmask(std::ostringstream& os, const BitmaskDecl& b, const std::string& ind);
  void emit_bitset(std::ostringstream& os, const BitsetDecl& b, const std::string& ind);
  void emit_reflect(std::ostringstream& os, const StructDecl& s);
  void emit_codec_decl(std::ostringstream& os, const Decl& d);
  void emit_codec_defs(std::ostringstream& os, const Decl& d);
  void emit_struct_codec(std::ostringstream& os, const StructDecl& s);
  void emit_union_codec(std::ostringstream& os, const UnionDecl& u);
  void emit_printer(std::ostringstream& os, const Decl& d);
  void emit_type_info(std::ostringstream& os, const Decl& d);

  const Specification& spec_;
  std::vector<const Decl*> typed_;  // structs, unions, enums, bitmasks of the main file
  std::unique_ptr<spindle::types::TypeLibrary> types_;  // the spec as dynamic types, on demand
};

// A topic type's XTypes TypeInformation and TypeMapping (<spindle/types/type_object.hpp>),
// computed here once so that the runtime announces them in discovery without building them.
void Emitter::emit_type_info(std::ostringstream& os, const Decl& d) {
  if (!types_) {
    types_ = std::make_unique<spindle::types::TypeLibrary>();
    spindle::types::load_specification(*types_, spec_);
  }
  const spindle::types::Type* t = types_->find(d.scoped_name());
  if (t == nullptr) throw std::logic_error("idlc: no dynamic type for " + d.scoped_name());
  const auto info = spindle::types::make_type_info(*t);
  auto bytes = [&](const char* name, const std::vector<std::byte>& v) {
    os << "  static constexpr std::array<std::uint8_t, " << v.size() << "> " << name << "{";
    for (size_t i = 0; i < v.size(); ++i) {
      os << (i % 16 == 0 ? "\n      " : " ");
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x,", static_cast<unsigned>(v[i]));
      os << hex;
    }
    os << "};\n";
  };
  os << "  // XTypes 1.3 TypeInformation and TypeMapping (XCDR2 LE), announced in discovery.\n";
  bytes("type_information", info.information);
  bytes("type_mapping", info.mapping);
}

void Emitter::collect(const std::vector<Decl*>& decls) {
  for (const Decl* d : decls) {
    if (!d->from_main_file) continue;
    switch (d->kind) {
      case DeclKind::Module:
        collect(static_cast<const ModuleDecl*>(d)->members);
        break;
      case DeclKind::Struct:
      case DeclKind::Union:
      case DeclKind::Enum:
      case DeclKind::Bitmask:
      case DeclKind::Bitset:
        typed_.push_back(d);
        break;
      default:
        break;
    }
  }
}

// All members of a struct including its bases', base-most first.
std::vector<const MemberDecl*> all_members(const StructDecl& s) {
  std::vector<const MemberDecl*> out;
  if (s.base != nullptr) out = all_members(*s.base);
  for (const auto& m : s.members)
    out.push_back(&m);
  return out;
}

void Emitter::emit_types(std::ostringstream& os, const std::vector<Decl*>& decls, int indent) {
  const std::string ind(static_cast<size_t>(indent) * 2, ' ');
  for (const Decl* d : decls) {
    if (!d->from_main_file) continue;
    switch (d->kind) {
      case DeclKind::Module: {
        const auto& m = static_cast<const ModuleDecl&>(*d);
        os << ind << "namespace " << cxx_id(m.name) << " {\n\n";
        emit_types(os, m.members, indent);
        os << ind << "}  // namespace " << cxx_id(m.name) << "\n\n";
        break;
      }
      case DeclKind::Struct:
        emit_struct(os, static_cast<const StructDecl&>(*d), ind);
        break;
      case DeclKind::Union:
        emit_union(os, static_cast<const UnionDecl&>(*d), ind);
        break;
      case DeclKind::Enum:
        emit_enum(os, static_cast<const EnumDecl&>(*d), ind);
        break;
      case DeclKind::Bitmask:
        emit_bitmask(os, static_cast<const BitmaskDecl&>(*d), ind);
        break;
      case DeclKind::Bitset:
        emit_bitset(os, static_cast<const BitsetDecl&>(*d), ind);
        break;
      case DeclKind::Annotation:
        break;  // recorded by the front end; no code
      case DeclKind::Typedef: {
        const auto& td = static_cast<const TypedefDecl&>(*d);
        os << ind << "using " << cxx_id(td.name) << " = "
           << wrap_arrays(cxx_type(*td.type), td.array_dims) << ";\n\n";
        break;
      }
      case DeclKind::Const: {
        const auto& c = static_cast<const ConstDecl&>(*d);
        const Type& t = resolve_typedefs(*c.type);
        if (t.kind == Type::Kind::String) {
          os << ind << "inline const " << cxx_type(t) << " " << cxx_id(c.name) << "{"
             << literal(c.value, t) << "};\n\n";
        } else {
          os << ind << "inline constexpr " << cxx_type(*c.type) << " " << cxx_id(c.name) << " = "
             << literal(c.value, *c.type) << ";\n\n";
        }
        break;
      }
      case DeclKind::ForwardStruct:
      case DeclKind::ForwardUnion:
        os << ind << "class " << cxx_id(d->name) << ";\n\n";
        break;
      case DeclKind::Enumerator:
        break;
    }
  }
}

void emit_accessors(std::ostringstream& os, const std::string& ind, const std::string& type,
                    const std::string& name, bool cheap) {
  const std::string field = name + "_";
  if (cheap) {
    os << ind << "  " << type << " " << name << "() const { return " << field << "; }\n";
    os << ind << "  " << type << "& " << name << "() { return " << field << "; }\n";
    os << ind << "  void " << name << "(" << type << " value) { " << field << " = value; }\n";
  } else {
    os << ind << "  const " << type << "& " << name << "() const { return " << field << "; }\n";
    os << ind << "  " << type << "& " << name << "() { return " << field << "; }\n";
    os << ind << "  void " << name << "(const " << type << "& value) { " << field
       << " = value; }\n";
    os << ind << "  void " << name << "(" << type << "&& value) { " << field
       << " = std::move(value); }\n";
  }
}

std::string default_initializer(const MemberDecl& m) {
  if (m.default_value && !m.is_optional && m.array_dims.empty()) {
    const Type& t = resolve_typedefs(*m.type);
    if (t.kind == Type::Kind::Named && t.decl->kind == DeclKind::Bitmask) {
      return "{static_cast<" + qualified(*t.decl) + ">(" + integer_literal(*m.default_value) + ")}";
    }
    return "{" + literal(*m.default_value, *m.type) + "}";
  }
  if (m.array_dims.empty() && !m.is_optional) {
    const Type& t = resolve_typedefs(*m.type);
    if (t.kind == Type::Kind::Named && t.decl->kind == DeclKind::Enum) {
      const auto& e = static_cast<const EnumDecl&>(*t.decl);
      if (!e.enumerators.empty()) {
        return "{" + qualified(e) + "::" + cxx_id(e.enumerators.front()->name) + "}";
      }
    }
  }
  return "{}";
}

void Emitter::emit_struct(std::ostringstream& os, const StructDecl& s, const std::string& ind) {
  const std::string name = cxx_id(s.name);
  os << ind << "class " << name;
  if (s.base != nullptr) os << " : public " << qualified(*s.base);
  os << " {\n" << ind << " public:\n";
  os << ind << "  " << name << "() = default;\n";
  const auto members = all_members(s);
  if (!members.empty()) {
    os << ind << "  " << (members.size() == 1 ? "explicit " : "") << name << "(";
    for (size_t i = 0; i < members.size(); ++i) {
      os << (i ? ", " : "") << member_cxx_type(*members[i]) << " " << cxx_id(members[i]->name);
    }
    os << ")\n" << ind << "      : ";
    bool first = true;
    if (s.base != nullptr) {
      os << qualified(*s.base) << "(";
      const auto base_members = all_members(*s.base);
      for (size_t i = 0; i < base_members.size(); ++i) {
        os << (i ? ", " : "") << "std::move(" << cxx_id(base_members[i]->name) << ")";
      }
      os << ")";
      first = false;
    }
    for (const auto& m : s.members) {
      os << (first ? "" : ",\n" + ind + "        ") << cxx_id(m.name) << "_(std::move("
         << cxx_id(m.name) << "))";
      first = false;
    }
    os << " {}\n";
  }
  os << "\n";
  for (const auto& m : s.members) {
    emit_accessors(os, ind, member_cxx_type(m), cxx_id(m.name),
                   is_cheap(*m.type, m.array_dims, m.is_optional));
  }
  os << "\n" << ind << "  bool operator==(const " << name << "&) const = default;\n";
  if (!s.members.empty()) {
    os << "\n" << ind << " private:\n";
    for (const auto& m : s.members) {
      os << ind << "  " << member_cxx_type(m) << " " << cxx_id(m.name) << "_"
         << default_initializer(m) << ";\n";
    }
  }
  os << ind << "};\n";
  os << ind << "std::ostream& operator<<(std::ostream& os, const " << name << "& v);\n\n";
}

// A discriminator value that selects no explicit label (for `default:` or an empty union).
std::optional<ConstValue> free_discriminator(const UnionDecl& u) {
  if (u.implicit_default) return u.implicit_default;
  const Type& t = resolve_typedefs(*u.discriminator);
  std::set<std::string> used;
  for (const auto& c : u.cases) {
    for (const auto& l : c.labels)
      used.insert(literal(l, t));
  }
  if (t.kind == Type::Kind::Named && t.decl->kind == DeclKind::Enum) {
    for (const auto* e : static_cast<const EnumDecl&>(*t.decl).enumerators) {
      ConstValue v = e;
      if (!used.contains(literal(v, t))) return v;
    }
    return std::nullopt;
  }
  if (t.kind == Type::Kind::Primitive && t.primitive == PrimitiveKind::Boolean) {
    for (bool b : {false, true}) {
      if (!used.contains(literal(ConstValue{b}, t))) return ConstValue{b};
    }
    return std::nullopt;
  }
  if (t.kind == Type::Kind::Primitive &&
      (t.primitive == PrimitiveKind::Char || t.primitive == PrimitiveKind::WChar)) {
    for (char32_t c = 0; c < 0x80; ++c) {
      ConstValue v = CharValue{c, t.primitive == PrimitiveKind::WChar};
      if (!used.contains(literal(v, t))) return v;
    }
    return std::nullopt;
  }
  for (int64_t i = 0; i < 100000; ++i) {
    ConstValue v = i;
    if (!used.contains(literal(v, t))) return v;
  }
  return std::nullopt;
}

void Emitter::emit_union(std::ostringstream& os, const UnionDecl& u, const std::string& ind) {
  const std::string name = cxx_id(u.name);
  const Type& dt = resolve_typedefs(*u.discriminator);
  const std::string disc = cxx_type(*u.discriminator);
  const auto free = free_discriminator(u);
  int default_case = -1;
  for (size_t i = 0; i < u.cases.size(); ++i) {
    if (u.cases[i].is_default) default_case = static_cast<int>(i);
  }

  os << ind << "class " << name << " {\n";
  os << ind << "  using _storage_t = std::variant<std::monostate";
  for (const auto& c : u.cases)
    os << ", " << member_cxx_type(c.member);
  os << ">;\n\n" << ind << " public:\n";
  // Default construction selects the first case (or the default case through a value that
  // matches no label).
  if (!u.cases.empty()) {
    const auto& first = u.cases.front();
    const std::string d0 = first.labels.empty() ? (free ? literal(*free, dt) : disc + "{}")
                                                : literal(first.labels.front(), dt);
    os << ind << "  " << name << "() : _d_(" << d0 << "), value_(std::in_place_index<1>) {}\n\n";
  } else {
    os << ind << "  " << name << "() = default;\n\n";
  }
  os << ind << "  " << disc << " _d() const { return _d_; }\n";
  os << ind << "  // Changing the discriminator may not change the selected member (BAD_PARAM).\n";
  os << ind << "  void _d(" << disc << " d) {\n";
  os << ind << "    if (_case_of(d) != _case_of(_d_)) {\n";
  os << ind << "      throw std::invalid_argument(\"" << u.scoped_name()
     << "::_d: value selects another member\");\n";
  os << ind << "    }\n" << ind << "    _d_ = d;\n" << ind << "  }\n\n";
  for (size_t i = 0; i < u.cases.size(); ++i) {
    const auto& c = u.cases[i];
    const std::string mt = member_cxx_type(c.member);
    const std::string mn = cxx_id(c.member.name);
    const std::string idx = std::to_string(i + 1);
    const std::string dflt = c.labels.empty() ? (free ? literal(*free, dt) : disc + "{}")
                                              : literal(c.labels.front(), dt);
    os << ind << "  const " << mt << "& " << mn << "() const { return _get<" << idx << ">(\"" << mn
       << "\"); }\n";
    os << ind << "  " << mt << "& " << mn << "() { return _get<" << idx << ">(\"" << mn
       << "\"); }\n";
    os << ind << "  void " << mn << "(" << mt << " value, " << disc << " d = " << dflt << ") {\n";
    os << ind << "    if (_case_of(d) != " << i << ") throw std::invalid_argument(\""
       << u.scoped_name() << "::" << c.member.name
       << ": discriminator selects another member\");\n";
    os << ind << "    _d_ = d;\n"
       << ind << "    value_.template emplace<" << idx << ">(std::move(value));\n"
       << ind << "  }\n";
  }
  if (default_case < 0 && free) {
    os << ind << "  // Selects no member (implicit default).\n";
    os << ind << "  void _default() {\n"
       << ind << "    _d_ = " << literal(*free, dt) << ";\n"
       << ind << "    value_.template emplace<0>();\n"
       << ind << "  }\n";
  }
  os << "\n" << ind << "  bool operator==(const " << name << "&) const = default;\n\n";
  // Case index selected by a discriminator value; -1 = none.
  os << ind << "  static constexpr int _case_of(" << disc << " d) {\n";
  const bool use_if = dt.kind == Type::Kind::Primitive && dt.primitive == PrimitiveKind::Boolean;
  if (use_if) {
    for (size_t i = 0; i < u.cases.size(); ++i) {
      for (const auto& l : u.cases[i].labels) {
        os << ind << "    if (d == " << literal(l, dt) << ") return " << i << ";\n";
      }
    }
    os << ind << "    return " << default_case << ";\n";
  } else {
    os << ind << "    switch (d) {\n";
    for (size_t i = 0; i < u.cases.size(); ++i) {
      if (u.cases[i].labels.empty()) continue;
      for (const auto& l : u.cases[i].labels)
        os << ind << "      case " << literal(l, dt) << ":\n";
      os << ind << "        return " << i << ";\n";
    }
    os << ind << "      default:\n" << ind << "        return " << default_case << ";\n";
    os << ind << "    }\n";
  }
  os << ind << "  }\n\n";
  os << ind << " private:\n";
  os << ind << "  template <class> friend struct ::spindle::cdr::Codec;\n";
  os << ind << "  template <size_t I>\n";
  os << ind
     << "  const std::variant_alternative_t<I, _storage_t>& _get(const char* member) const {\n";
  os << ind << "    if (value_.index() != I) {\n";
  os << ind << "      throw std::logic_error(std::string(\"" << u.scoped_name()
     << "::\") + member + \" is not the selected member\");\n";
  os << ind << "    }\n" << ind << "    return std::get<I>(value_);\n" << ind << "  }\n";
  os << ind << "  template <size_t I>\n";
  os << ind << "  std::variant_alternative_t<I, _storage_t>& _get(const char* member) {\n";
  os << ind << "    std::as_const(*this).template _get<I>(member);\n";
  os << ind << "    return std::get<I>(value_);\n" << ind << "  }\n\n";
  os << ind << "  " << disc << " _d_{};\n";
  os << ind << "  _storage_t value_;\n";
  os << ind << "};\n";
  os << ind << "std::ostream& operator<<(std::ostream& os, const " << name << "& v);\n\n";
}

void Emitter::emit_enum(std::ostringstream& os, const EnumDecl& e, const std::string& ind) {
  os << ind << "enum class " << cxx_id(e.name) << " : uint32_t {\n";
  for (const auto* en : e.enumerators) {
    os << ind << "  " << cxx_id(en->name) << " = " << en->value << ",\n";
  }
  os << ind << "};\n";
  os << ind << "std::ostream& operator<<(std::ostream& os, " << cxx_id(e.name) << " v);\n\n";
}

void Emitter::emit_bitmask(std::ostringstream& os, const BitmaskDecl& b, const std::string& ind) {
  const std::string name = cxx_id(b.name);
  const std::string u = bitmask_storage(b.bit_bound);
  os << ind << "enum class " << name << " : " << u << " {\n";
  for (const auto& v : b.values) {
    os << ind << "  " << cxx_id(v.name) << " = " << u << "{1} << " << v.position << "U,\n";
  }
  os << ind << "};\n";
  for (const char* op : {"|", "&", "^"}) {
    os << ind << "constexpr " << name << " operator" << op << "(" << name << " a, " << name
       << " b) {\n"
       << ind << "  return static_cast<" << name << ">(static_cast<" << u << ">(a) " << op
       << " static_cast<" << u << ">(b));\n"
       << ind << "}\n";
  }
  os << ind << "constexpr " << name << " operator~(" << name << " a) { return static_cast<" << name
     << ">(static_cast<" << u << ">(~static_cast<" << u << ">(a))); }\n";
  os << ind << "constexpr bool has(" << name << " set, " << name << " bit) { return (static_cast<"
     << u << ">(set) & static_cast<" << u << ">(bit)) != 0; }\n";
  os << ind << "std::ostream& operator<<(std::ostream& os, " << name << " v);\n\n";
}

// All bitfields of a bitset including its bases', base-most first; padding included.
std::vector<const Bitfield*> all_bitfields(const BitsetDecl& b) {
  std::vector<const Bitfield*> out;
  if (b.base != nullptr) out = all_bitfields(*b.base);
  for (const auto& f : b.fields)
    out.push_back(&f);
  return out;
}

void Emitter::emit_bitset(std::ostringstream& os, const BitsetDecl& b, const std::string& ind) {
  const std::string name = cxx_id(b.name);
  os << ind << "class " << name;
  if (b.base != nullptr) os << " : public " << qualified(*b.base);
  os << " {\n" << ind << " public:\n";
  bool any = false;
  for (const auto& f : b.fields) {
    if (f.name.empty()) continue;
    emit_accessors(os, ind, primitive_cxx(f.type), cxx_id(f.name), true);
    any = true;
  }
  os << (any ? "\n" : "") << ind << "  bool operator==(const " << name << "&) const = default;\n";
  if (any) {
    os << "\n" << ind << " private:\n";
    for (const auto& f : b.fields) {
      if (f.name.empty()) continue;
      os << ind << "  " << primitive_cxx(f.type) << " " << cxx_id(f.name) << "_{};\n";
    }
  }
  os << ind << "};\n";
  os << ind << "std::ostream& operator<<(std::ostream& os, const " << name << "& v);\n\n";
}

// ----------------------------------------------------------------------------- codecs
void Emitter::emit_codec_decl(std::ostringstream& os, const Decl& d) {
  const std::string q = qualified(d);
  os << "template <>\nstruct Codec<" << q << "> {\n";
  switch (d.kind) {
    case DeclKind::Enum:
    case DeclKind::Bitmask: {
      const bool is_enum = d.kind == DeclKind::Enum;
      const std::string u =
          is_enum ? "uint32_t" : bitmask_storage(static_cast<const BitmaskDecl&>(d).bit_bound);
      os << "  static constexpr Extensibility kExtensibility = Extensibility::Final;\n";
      os << "  static constexpr size_t kMinSize = sizeof(" << u << ");\n";
      os << "  template <class W>\n  static void write(W& w, " << q << " v) { w.prim(static_cast<"
         << u << ">(v)); }\n";
      os << "  template <class W>\n  static void write_key(W& w, " << q << " v) { write(w, v); }\n";
      if (is_enum) {
        const auto& e = static_cast<const EnumDecl&>(d);
        os << "  template <class R>\n  static void read(R& r, " << q << "& v) {\n";
        os << "    uint32_t raw = 0;\n    r.get(raw);\n";
        bool dense = true;
        for (size_t i = 0; i < e.enumerators.size(); ++i) {
          dense = dense && e.enumerators[i]->value == i;
        }
        if (dense) {
          os << "    if (raw >= " << e.enumerators.size()
             << "U) throw CodecError(Status::BadEnumerator, \"" << d.scoped_name() << "\");\n";
        } else {
          os << "    switch (raw) {\n";
          for (const auto* en : e.enumerators)
            os << "      case " << en->value << "U:\n";
          os << "        break;\n      default:\n        throw CodecError(Status::BadEnumerator, \""
             << d.scoped_name() << "\");\n    }\n";
        }
        os << "    v = static_cast<" << q << ">(raw);\n  }\n";
      } else {
        os << "  template <class R>\n  static void read(R& r, " << q << "& v) { v = read_bits<" << q
           << ", " << u << ">(r, " << static_cast<const BitmaskDecl&>(d).bit_bound << "); }\n";
      }
      os << "  template <Encoding E = Encoding::Xcdr1>\n  static constexpr size_t max_size(size_t "
            "off) "
            "{ return max_size_at<Plain, "
         << u << ", E>(off); }\n";
      os << "  static constexpr size_t key_max_size(size_t off) { return max_size(off); }\n";
      break;
    }
    case DeclKind::Bitset: {
      const auto& b = static_cast<const BitsetDecl&>(d);
      const std::string u = bitmask_storage(b.total_bits);
      const auto fields = all_bitfields(b);
      os << "  static constexpr Extensibility kExtensibility = Extensibility::Final;\n";
      os << "  static constexpr size_t kMinSize = sizeof(" << u << ");\n";
      os << "  template <class W>\n  static void write(W& w, const " << q << "& v) {\n";
      os << "    BitsetPacker p;\n";
      for (const auto* f : fields) {
        if (f->name.empty()) continue;
        os << "    p.put(v." << cxx_id(f->name) << "(), " << f->offset << ", " << f->width << ", \""
           << d.scoped_name() << "." << f->name << "\");\n";
      }
      os << "    w.prim(static_cast<" << u << ">(p.bits()));\n  }\n";
      os << "  template <class W>\n  static void write_key(W& w, const " << q
         << "& v) { write(w, v); }\n";
      os << "  template <class R>\n  static void read(R& r, " << q << "& v) {\n";
      os << "    const " << u << " raw = read_bitset_holder<" << u << ">(r, " << b.total_bits
         << ");\n";
      bool any = false;
      for (const auto* f : fields) {
        if (f->name.empty()) continue;
        os << "    v." << cxx_id(f->name) << "(unpack_bits<" << primitive_cxx(f->type) << ">(raw, "
           << f->offset << ", " << f->width << "));\n";
        any = true;
      }
      if (!any) os << "    (void)raw;\n    (void)v;\n";
      os << "  }\n";
      os << "  template <Encoding E = Encoding::Xcdr1>\n  static constexpr size_t max_size(size_t "
            "off) "
            "{ return max_size_at<Plain, "
         << u << ", E>(off); }\n";
      os << "  static constexpr size_t key_max_size(size_t off) { return max_size(off); }\n";
      break;
    }
    case DeclKind::Struct:
    case DeclKind::Union: {
      const Extensibility ext = d.kind == DeclKind::Struct
                                    ? static_cast<const StructDecl&>(d).extensibility
                                    : static_cast<const UnionDecl&>(d).extensibility;
      const char* ext_name = ext == Extensibility::Final        ? "Final"
                             : ext == Extensibility::Appendable ? "Appendable"
                                                                : "Mutable";
      os << "  static constexpr Extensibility kExtensibility = Extensibility::" << ext_name
         << ";\n";
      const uint8_t reps = d.kind == DeclKind::Struct
                               ? static_cast<const StructDecl&>(d).representations
                               : static_cast<const UnionDecl&>(d).representations;
      std::set<const Decl*> seen;
      const bool xcdr2 = reps == 2 || (reps == 3 && wants_xcdr2(d, seen));
      os << "  static constexpr uint8_t kRepresentations = " << static_cast<int>(reps) << ";\n";
      os << "  static constexpr Encoding kEncoding = Encoding::" << (xcdr2 ? "Xcdr2" : "Xcdr1")
         << ";\n";
      os << "  static constexpr size_t kMinSize = " << min_decl_size(d, 0) << ";\n";
      os << "  template <class W>\n  static void write(W& w, const " << q << "& v);\n";
      os << "  template <class R>\n  static void read(R& r, " << q << "& v);\n";
      os << "  template <Encoding E = Encoding::Xcdr1>\n  static constexpr size_t max_size(size_t "
            "off);\n";
      if (d.kind == DeclKind::Struct) {
        os << "  template <class W>\n  static void write_key(W& w, const " << q << "& v);\n";
        os << "  static constexpr size_t key_max_size(size_t off);\n";
      } else {  // a union topic type has no key
        os << "  template <class W>\n  static void write_key(W&, const " << q << "&) {}\n";
        os << "  static constexpr size_t key_max_size(size_t off) { return off; }\n";
      }
      break;
    }
    default:
      break;
  }
  os << "};\n\n";
}

struct MemberCode {
  std::string shape;     // template argument text for put/get ("" for Plain)
  std::string cxx;       // C++ type without optional
  std::string accessor;  // "v.name()"
};

MemberCode member_code(const MemberDecl& m, const std::string& obj) {
  MemberCode c;
  c.shape = shape_arg(shape_of(*m.type, m.array_dims));
  c.cxx = wrap_arrays(cxx_type(*m.type), m.array_dims);
  c.accessor = obj + "." + cxx_id(m.name) + "()";
  return c;
}

std::string tmpl(const std::string& fn, const std::string& shape) {
  return shape.empty() ? fn : "template " + fn + "<" + shape + ">";
}

std::string shape_or_plain(const std::string& shape) {
  return shape.empty() ? "Plain" : shape;
}

void Emitter::emit_struct_codec(std::ostringstream& os, const StructDecl& s) {
  const std::string q = qualified(s);
  const auto members = all_members(s);
  const bool mutable_ = s.extensibility == Extensibility::Mutable;

  auto range_checks = [&](const std::string& who, const MemberDecl& m, const MemberCode& c) {
    if (!(m.min || m.max) || m.is_optional || !m.array_dims.empty()) return;
    const std::string lo =
        m.min ? literal(*m.min, *m.type) : "std::numeric_limits<" + c.cxx + ">::lowest()";
    const std::string hi =
        m.max ? literal(*m.max, *m.type) : "std::numeric_limits<" + c.cxx + ">::max()";
    os << "  " << who << ".template check_range<" << c.cxx << ">(" << c.accessor << ", " << lo
       << ", " << hi << ", \"" << s.scoped_name() << "." << m.name << "\");\n";
  };

  os << "template <class W>\nvoid Codec<" << q << ">::write(W& w, const " << q << "& v) {\n";
  if (members.empty() && !mutable_) os << "  (void)w;\n  (void)v;\n";
  for (const auto* m : members) {
    const auto c = member_code(*m, "v");
    range_checks("w", *m, c);
    // The member's id and flags (the codec refuses an id its encoding cannot carry).
    const std::string pid = "MemberId{" + std::to_string(m->id) + ", " +
                            (m->must_understand ? "true" : "false") + ", " +
                            (m->is_key ? "true" : "false") + "}";
    // A string, sequence or map member is named, for its bound error.
    const std::string named =
        c.shape.empty() ? "" : ", \"" + s.scoped_name() + "." + m->name + "\"";
    if (mutable_) {
      os << "  w." << tmpl("put_param", c.shape) << "(" << pid << ", " << c.accessor << named
         << ");\n";
    } else if (m->is_optional) {
      os << "  w.template put_optional<" << shape_or_plain(c.shape) << ">(" << pid << ", "
         << c.accessor << named << ");\n";
    } else {
      os << "  w." << tmpl("put", c.shape) << "(" << c.accessor << named << ");\n";
    }
  }
  if (mutable_) os << "  w.end_params();\n";
  os << "}\n\n";

  os << "template <class R>\nvoid Codec<" << q << ">::read(R& r, " << q << "& v) {\n";
  if (mutable_) {
    os << "  while (auto p = r.next_param()) {\n    switch (p->id) {\n";
    for (const auto* m : members) {
      const auto c = member_code(*m, "v");
      os << "      case " << m->id << ":\n        r." << tmpl("get_param", c.shape) << "(*p, "
         << c.accessor << ");\n        break;\n";
    }
    os << "      default:\n        r.skip_param(*p);\n    }\n  }\n";
    for (const auto* m : members)
      range_checks("r", *m, member_code(*m, "v"));
  } else {
    if (members.empty()) os << "  (void)r;\n  (void)v;\n";
    for (const auto* m : members) {
      const auto c = member_code(*m, "v");
      if (m->is_optional) {
        os << "  r.template get_optional<" << shape_or_plain(c.shape) << ">(" << m->id << ", "
           << c.accessor << ");\n";
      } else {
        os << "  r." << tmpl("get", c.shape) << "(" << c.accessor << ");\n";
      }
      range_checks("r", *m, c);
    }
  }
  os << "}\n\n";

  os << "template <Encoding E>\nconstexpr size_t Codec<" << q << ">::max_size(size_t off) {\n";
  for (const auto* m : members) {
    const auto c = member_code(*m, "v");
    const char* fn = mutable_         ? "max_param_size_at"
                     : m->is_optional ? "max_optional_size_at"
                                      : "max_size_at";
    os << "  off = " << fn << "<" << shape_or_plain(c.shape) << ", " << c.cxx << ", E>(off);\n";
  }
  if (mutable_) os << "  off = max_end_params<E>(off);\n";
  os << "  return off;\n}\n\n";

  os << "template <class W>\nvoid Codec<" << q << ">::write_key(W& w, const " << q << "& v) {\n";
  if (s.key_paths.empty()) os << "  (void)w;\n  (void)v;\n";
  std::string key_size;
  for (const auto& path : s.key_paths) {
    std::string acc = "v";
    std::string name = s.scoped_name();
    for (const auto* m : path) {
      acc += '.';
      acc += cxx_id(m->name);
      acc += "()";
      name += '.';
      name += m->name;
    }
    const MemberDecl& leaf = *path.back();
    const auto c = member_code(leaf, "");
    const std::string named = c.shape.empty() ? "" : ", \"" + name + "\"";
    os << "  w." << tmpl("put", c.shape) << "(" << acc << named << ");\n";
    key_size += "  off = max_size_at<" + shape_or_plain(c.shape) + ", " + c.cxx + ">(off);\n";
  }
  os << "}\n\n";
  os << "constexpr size_t Codec<" << q << ">::key_max_size(size_t off) {\n"
     << key_size << "  return off;\n}\n\n";
}

void Emitter::emit_union_codec(std::ostringstream& os, const UnionDecl& u) {
  const std::string q = qualified(u);
  const std::string disc_shape = shape_arg(shape_of(*u.discriminator, {}));
  const std::string disc_cxx = cxx_type(*u.discriminator);
  os << "template <class W>\nvoid Codec<" << q << ">::write(W& w, const " << q << "& v) {\n";
  os << "  w.put(v._d_);\n  switch (v.value_.index()) {\n";
  for (size_t i = 0; i < u.cases.size(); ++i) {
    const auto c = member_code(u.cases[i].member, "");
    os << "    case " << i + 1 << ":\n      w." << tmpl("put", c.shape) << "(std::get<" << i + 1
       << ">(v.value_));\n      break;\n";
  }
  os << "    default:\n      break;\n  }\n}\n\n";

  os << "template <class R>\nvoid Codec<" << q << ">::read(R& r, " << q << "& v) {\n";
  os << "  r.get(v._d_);\n  switch (" << q << "::_case_of(v._d_)) {\n";
  for (size_t i = 0; i < u.cases.size(); ++i) {
    const auto c = member_code(u.cases[i].member, "");
    os << "    case " << i << ":\n      r." << tmpl("get", c.shape) << "(v.value_.template emplace<"
       << i + 1 << ">());\n      break;\n";
  }
  os << "    default:\n      v.value_.template emplace<0>();\n  }\n}\n\n";

  os << "template <Encoding E>\nconstexpr size_t Codec<" << q << ">::max_size(size_t off) {\n";
  os << "  off = max_size_at<Plain, " << disc_cxx << ", E>(off);\n  size_t end = off;\n";
  for (const auto& uc : u.cases) {
    const auto c = member_code(uc.member, "");
    os << "  end = std::max(end, max_size_at<" << shape_or_plain(c.shape) << ", " << c.cxx
       << ", E>(off));\n";
  }
  os << "  return end;\n}\n\n";
}

void Emitter::emit_codec_defs(std::ostringstream& os, const Decl& d) {
  if (d.kind == DeclKind::Struct) emit_struct_codec(os, static_cast<const StructDecl&>(d));
  if (d.kind == DeclKind::Union) emit_union_codec(os, static_cast<const UnionDecl&>(d));
}

void Emitter::emit_printer(std::ostringstream& os, const Decl& d) {
  const std::string q = qualified(d);
  switch (d.kind) {
    case DeclKind::Enum: {
      const auto& e = static_cast<const EnumDecl&>(d);
      os << "std::ostream& operator<<(std::ostream& os, " << q << " v) {\n  switch (v) {\n";
      for (const auto* en : e.enumerators) {
        os << "    case " << q << "::" << cxx_id(en->name) << ":\n      return os << \"" << en->name
           << "\";\n";
      }
      os << "  }\n  return os << \"" << e.name << "(\" << static_cast<uint32_t>(v) << ')';\n}\n\n";
      break;
    }
    case DeclKind::Bitmask: {
      const auto& b = static_cast<const BitmaskDecl&>(d);
      os << "std::ostream& operator<<(std::ostream& os, " << q
         << " v) {\n  const char* sep = \"\";\n"
         << "  os << '{';\n";
      for (const auto& bv : b.values) {
        os << "  if (has(v, " << q << "::" << cxx_id(bv.name) << ")) {\n    os << sep << \""
           << bv.name << "\";\n    sep = \"|\";\n  }\n";
      }
      os << "  return os << '}';\n}\n\n";
      break;
    }
    case DeclKind::Struct: {
      const auto& s = static_cast<const StructDecl&>(d);
      os << "std::ostream& operator<<(std::ostream& os, const " << q << "& v) {\n";
      const auto members = all_members(s);
      if (members.empty()) os << "  (void)v;\n";
      os << "  os << \"" << s.scoped_name() << "{\";\n";
      bool first = true;
      for (const auto* m : members) {
        os << "  spindle::print_member(os, \"" << m->name << "\", v." << cxx_id(m->name) << "()"
           << (first ? ", true" : "") << ");\n";
        first = false;
      }
      os << "  return os << '}';\n}\n\n";
      break;
    }
    case DeclKind::Bitset: {
      const auto& b = static_cast<const BitsetDecl&>(d);
      os << "std::ostream& operator<<(std::ostream& os, const " << q << "& v) {\n";
      os << "  os << \"" << b.scoped_name() << "{\";\n";
      bool first = true;
      for (const auto* f : all_bitfields(b)) {
        if (f->name.empty()) continue;
        os << "  spindle::print_member(os, \"" << f->name << "\", v." << cxx_id(f->name) << "()"
           << (first ? ", true" : "") << ");\n";
        first = false;
      }
      if (first) os << "  (void)v;\n";
      os << "  return os << '}';\n}\n\n";
      break;
    }
    case DeclKind::Union: {
      const auto& u = static_cast<const UnionDecl&>(d);
      os << "std::ostream& operator<<(std::ostream& os, const " << q << "& v) {\n";
      os << "  os << \"" << u.scoped_name() << "{_d: \";\n  spindle::print_value(os, v._d());\n";
      os << "  switch (" << q << "::_case_of(v._d())) {\n";
      for (size_t i = 0; i < u.cases.size(); ++i) {
        const auto& m = u.cases[i].member;
        os << "    case " << i << ":\n      spindle::print_member(os, \"" << m.name << "\", v."
           << cxx_id(m.name) << "());\n      break;\n";
      }
      os << "    default:\n      break;\n  }\n  return os << '}';\n}\n\n";
      break;
    }
    default:
      break;
  }
}

// What a content filter can read of a member (<spindle/reflect.hpp>): the Kind's name, or
// "other" for what it cannot (arrays, sequences, maps, unions, bitsets, bitmasks, wstrings).
std::string reflect_kind(const MemberDecl& m) {
  std::vector<uint64_t> dims = m.array_dims;
  const Type& t = resolve_typedefs(*m.type, &dims);
  if (!dims.empty()) return "other";
  switch (t.kind) {
    case Type::Kind::Primitive:
      switch (t.primitive) {
        case PrimitiveKind::Boolean:
          return "boolean";
        case PrimitiveKind::Char:
        case PrimitiveKind::WChar:
          return "character";
        case PrimitiveKind::Int8:
        case PrimitiveKind::Int16:
        case PrimitiveKind::Int32:
        case PrimitiveKind::Int64:
          return "signed_int";
        case PrimitiveKind::Octet:
        case PrimitiveKind::UInt8:
        case PrimitiveKind::UInt16:
        case PrimitiveKind::UInt32:
        case PrimitiveKind::UInt64:
          return "unsigned_int";
        case PrimitiveKind::Float:
        case PrimitiveKind::Double:
        case PrimitiveKind::LongDouble:
          return "floating";
      }
      return "other";
    case Type::Kind::String:
      return t.wide ? "other" : "string";
    case Type::Kind::Sequence:
    case Type::Kind::Map:
      return "other";
    case Type::Kind::Named:
      if (t.decl->kind == DeclKind::Enum) return "enumeration";
      if (t.decl->kind == DeclKind::Struct) return "structure";
      return "other";
  }
  return "other";
}

void Emitter::emit_reflect(std::ostringstream& os, const StructDecl& s) {
  const std::string q = qualified(s);
  const auto members = all_members(s);
  os << "const spindle::reflect::StructInfo& spindle::reflect::Reflect<" << q << ">::info() {\n";
  std::ostringstream rows;
  for (size_t i = 0; i < members.size(); ++i) {
    const MemberDecl& m = *members[i];
    const std::string kind = reflect_kind(m);
    const std::string acc = "static_cast<const " + q + "*>(p)->" + cxx_id(m.name) + "()";
    // One row per member, every field given (-Wmissing-field-initializers holds here too):
    // name, kind, get, nested, object, enumerators.
    std::string get = "nullptr";
    std::string nested = "nullptr";
    std::string object = "nullptr";
    std::string enumerators = "{}";
    if (kind == "structure") {
      nested = "&Reflect<" + qualified(*resolve_typedefs(*m.type).decl) + ">::info";
      object = "[](const void* p) { return object_of(" + acc + "); }";
    } else if (kind != "other") {
      get = "[](const void* p) { return value_of(" + acc + "); }";
    }
    if (kind == "enumeration") {
      const auto& e = static_cast<const EnumDecl&>(*resolve_typedefs(*m.type).decl);
      os << "  static constexpr Enumerator e" << i << "[] = {";
      for (size_t k = 0; k < e.enumerators.size(); ++k) {
        const uint32_t v = e.enumerators[k]->value;
        os << (k ? ", " : "") << "{\"" << e.enumerators[k]->name << "\", ";
        if (v <= 0x7FFFFFFFU) {
          os << v << "}";
        } else {
          os << "static_cast<std::int32_t>(" << v << "U)}";
        }
      }
      os << "};\n";
      enumerators = std::to_string(i).insert(0, 1, 'e');
    }
    rows << "      {\"" << m.name << "\", Kind::" << kind << ", " << get << ", " << nested << ", "
         << object << ", " << enumerators;
    rows << "},\n";
  }
  if (members.empty()) {
    os << "  static const StructInfo info{\"" << s.scoped_name() << "\", {}};\n";
  } else {
    os << "  static const Member members[] = {\n" << rows.str() << "  };\n";
    os << "  static const StructInfo info{\"" << s.scoped_name() << "\", members};\n";
  }
  os << "  return info;\n}\n\n";
}

std::string banner(const std::string& source) {
  return "// Generated from " + source + " by idlc " + kIdlcVersion +
         " (Spindle DDS) — do not edit.\n";
}

std::string Emitter::header(const std::string& source, const std::string& stem) {
  collect(spec_.definitions);
  std::ostringstream os;
  os << banner(source) << "#pragma once\n\n";
  os << "#include <spindle/cdr/codec.hpp>\n#include <spindle/reflect.hpp>\n"
        "#include <spindle/topic_traits.hpp>\n\n";
  os << "#include <algorithm>\n#include <array>\n#include <cstdint>\n#include <iosfwd>\n"
        "#include <limits>\n#include <map>\n#include <optional>\n#include <stdexcept>\n#include "
        "<string>\n"
        "#include <string_view>\n#include <utility>\n#include <variant>\n#include <vector>\n\n";
  for (const auto& inc : spec_.direct_includes) {
    os << "#include \"" << std::filesystem::path(inc).stem().string() << ".hpp\"\n";
  }
  if (!spec_.direct_includes.empty()) os << "\n";
  (void)stem;

  emit_types(os, spec_.definitions, 0);

  if (!typed_.empty()) {
    os << "namespace spindle::cdr {\n\n";
    for (const Decl* d : typed_)
      emit_codec_decl(os, *d);
    for (const Decl* d : typed_)
      emit_codec_defs(os, *d);
    os << "}  // namespace spindle::cdr\n\n";
  }

  // Every struct and union not @nested is a topic type (a union, as XTypes allows, keyless).
  bool any_topic = false;
  for (const Decl* d : typed_) {
    size_t keys = 0;
    if (d->kind == DeclKind::Struct) {
      const auto& s = static_cast<const StructDecl&>(*d);
      if (s.is_nested) continue;
      keys = s.key_paths.size();
    } else if (d->kind == DeclKind::Union) {
      if (static_cast<const UnionDecl&>(*d).is_nested) continue;
    } else {
      continue;
    }
    if (!any_topic) os << "namespace spindle {\n\n";
    any_topic = true;
    const std::string q = qualified(*d);
    os << "template <>\nstruct topic_traits<" << q << "> : topic_traits_base<" << q << "> {\n";
    os << "  static constexpr std::string_view type_name = \"" << d->scoped_name() << "\";\n";
    os << "  static constexpr bool is_keyed = " << (keys == 0 ? "false" : "true") << ";\n";
    os << "  static constexpr size_t key_count = " << keys << ";\n";
    emit_type_info(os, *d);
    os << "};\n\n";
  }
  if (any_topic) os << "}  // namespace spindle\n";

  // Member tables for content filters (<spindle/reflect.hpp>), defined in the .cpp.
  bool any_struct = false;
  for (const Decl* d : typed_) {
    if (d->kind != DeclKind::Struct) continue;
    if (!any_struct) os << (any_topic ? "\n" : "") << "namespace spindle::reflect {\n\n";
    any_struct = true;
    os << "template <>\nstruct Reflect<" << qualified(*d)
       << "> {\n  static const StructInfo& info();\n};\n\n";
  }
  if (any_struct) os << "}  // namespace spindle::reflect\n";
  return os.str();
}

std::string Emitter::source(const std::string& source, const std::string& header_name) {
  std::ostringstream os;
  os << banner(source) << "#include \"" << header_name << "\"\n\n#include <spindle/print.hpp>\n\n"
     << "#include <ostream>\n\n";
  for (const Decl* d : typed_) {
    std::string ns;
    const auto path = d->module_path();
    for (size_t i = 0; i < path.size(); ++i)
      ns += (i ? "::" : "") + cxx_id(path[i]);
    if (!ns.empty()) os << "namespace " << ns << " {\n\n";
    emit_printer(os, *d);
    if (!ns.empty()) os << "}  // namespace " << ns << "\n\n";
  }
  for (const Decl* d : typed_) {
    if (d->kind == DeclKind::Struct) emit_reflect(os, static_cast<const StructDecl&>(*d));
  }
  return os.str();
}

}  // namespace

std::vector<GeneratedFile> generate_cpp(const Specification& spec,
                                        const CppGeneratorOptions& options) {
  const std::filesystem::path main(spec.main_file);
  const std::string stem = main.stem().string();
  const std::string source_name =
      options.source_name.empty() ? main.filename().string() : options.source_name;
  Emitter emitter(spec);
  std::vector<GeneratedFile> out;
  out.push_back({stem + ".hpp", emitter.header(source_name, stem)});
  out.push_back({stem + ".cpp", emitter.source(source_name, stem + ".hpp")});
  return out;
}

}  // namespace spindle::idlc

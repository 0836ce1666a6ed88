// The dynamic type model: the library's constructors and the rules read off a type
// (members with the base's, key paths, default encoding). See dynamic_type.hpp.
#include <spindle/types/dynamic_type.hpp>

#include <set>
#include <stdexcept>

namespace spindle::types {

const char* to_string(TypeKind k) {
  switch (k) {
    case TypeKind::Boolean:
      return "boolean";
    case TypeKind::Byte:
      return "octet";
    case TypeKind::Int8:
      return "int8";
    case TypeKind::UInt8:
      return "uint8";
    case TypeKind::Int16:
      return "short";
    case TypeKind::UInt16:
      return "unsigned short";
    case TypeKind::Int32:
      return "long";
    case TypeKind::UInt32:
      return "unsigned long";
    case TypeKind::Int64:
      return "long long";
    case TypeKind::UInt64:
      return "unsigned long long";
    case TypeKind::Float32:
      return "float";
    case TypeKind::Float64:
      return "double";
    case TypeKind::Float128:
      return "long double";
    case TypeKind::Char8:
      return "char";
    case TypeKind::Char16:
      return "wchar";
    case TypeKind::String8:
      return "string";
    case TypeKind::String16:
      return "wstring";
    case TypeKind::Sequence:
      return "sequence";
    case TypeKind::Array:
      return "array";
    case TypeKind::Map:
      return "map";
    case TypeKind::Alias:
      return "typedef";
    case TypeKind::Enum:
      return "enum";
    case TypeKind::Bitmask:
      return "bitmask";
    case TypeKind::Bitset:
      return "bitset";
    case TypeKind::Struct:
      return "struct";
    case TypeKind::Union:
      return "union";
  }
  return "?";
}

const Type& resolve(const Type& t) {
  const Type* p = &t;
  // An alias chain is finite (the front end refuses a typedef of itself); bound it anyway.
  for (int i = 0; i < 1000 && p->kind == TypeKind::Alias && p->element != nullptr; ++i) {
    p = p->element;
  }
  return *p;
}

std::vector<const Member*> all_members(const Type& s) {
  std::vector<const Type*> chain;
  for (const Type* t = &s; t != nullptr && chain.size() < 1000; t = t->base)
    chain.push_back(t);
  std::vector<const Member*> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    for (const auto& m : (*it)->members)
      out.push_back(&m);
  return out;
}

std::vector<const Bitfield*> all_bitfields(const Type& b) {
  std::vector<const Type*> chain;
  for (const Type* t = &b; t != nullptr && chain.size() < 1000; t = t->base)
    chain.push_back(t);
  std::vector<const Bitfield*> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    for (const auto& f : (*it)->bitfields)
      out.push_back(&f);
  return out;
}

namespace {

bool has_keys(const Type& s) {
  for (const Member* m : all_members(s))
    if (m->key) return true;
  return false;
}

void collect_keys(const Type& s, std::vector<const Member*>& prefix,
                  std::vector<std::vector<const Member*>>& out, int depth) {
  if (depth > 64) return;
  const bool keyed = has_keys(s);
  for (const Member* m : all_members(s)) {
    if (keyed && !m->key) continue;
    prefix.push_back(m);
    const Type& t = resolve(*m->type);
    if (t.kind == TypeKind::Struct && !all_members(t).empty()) {
      collect_keys(t, prefix, out, depth + 1);
    } else {
      out.push_back(prefix);
    }
    prefix.pop_back();
  }
}

bool wants_xcdr2(const Type& t, std::set<const Type*>& seen) {
  if (!seen.insert(&t).second) return false;
  switch (t.kind) {
    case TypeKind::Struct:
      if (t.extensibility_explicit && t.extensibility != Extensibility::Final) return true;
      if (t.base != nullptr && wants_xcdr2(*t.base, seen)) return true;
      for (const auto& m : t.members)
        if (m.optional || wants_xcdr2(*m.type, seen)) return true;
      return false;
    case TypeKind::Union:
      if (t.extensibility_explicit && t.extensibility != Extensibility::Final) return true;
      for (const auto& c : t.cases)
        if (wants_xcdr2(*c.member.type, seen)) return true;
      return false;
    case TypeKind::Alias:
    case TypeKind::Sequence:
    case TypeKind::Array:
      return t.element != nullptr && wants_xcdr2(*t.element, seen);
    case TypeKind::Map:
      return wants_xcdr2(*t.key, seen) || wants_xcdr2(*t.element, seen);
    default:
      return false;
  }
}

}  // namespace

std::vector<std::vector<const Member*>> key_paths(const Type& s) {
  std::vector<std::vector<const Member*>> out;
  const Type& r = resolve(s);
  if (r.kind != TypeKind::Struct || !has_keys(r)) return out;
  std::vector<const Member*> prefix;
  collect_keys(r, prefix, out, 0);
  return out;
}

cdr::Encoding default_encoding(const Type& t) {
  const Type& r = resolve(t);
  if (r.representations == cdr::kXcdr2Bit) return cdr::Encoding::Xcdr2;
  if (r.representations == cdr::kXcdr1Bit) return cdr::Encoding::Xcdr1;
  std::set<const Type*> seen;
  return wants_xcdr2(r, seen) ? cdr::Encoding::Xcdr2 : cdr::Encoding::Xcdr1;
}

uint8_t representation_id(const Type& t, cdr::Encoding e, cdr::Endianness order) {
  const Type& r = resolve(t);
  const Extensibility x = r.kind == TypeKind::Struct || r.kind == TypeKind::Union
                              ? r.extensibility
                              : Extensibility::Final;
  const uint8_t le = order == cdr::Endianness::Little ? 1 : 0;
  if (e == cdr::Encoding::Xcdr1) {
    return static_cast<uint8_t>((x == Extensibility::Mutable ? 2 : 0) | le);
  }
  return static_cast<uint8_t>((x == Extensibility::Final        ? 6
                               : x == Extensibility::Appendable ? 8
                                                                : 10) |
                              le);
}

// ----------------------------------------------------------------------------- library
Type* TypeLibrary::own(Type t) {
  storage_.push_back(std::make_unique<Type>(std::move(t)));
  return storage_.back().get();
}

const Type* TypeLibrary::primitive(TypeKind k) {
  if (!is_primitive(k)) throw std::invalid_argument(std::string(to_string(k)) + " is no primitive");
  const std::string name = std::string("#") + to_string(k);
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  Type t;
  t.kind = k;
  Type* p = own(std::move(t));
  by_name_.emplace(name, p);
  return p;
}

const Type* TypeLibrary::string(TypeKind k, uint64_t bound) {
  if (k != TypeKind::String8 && k != TypeKind::String16)
    throw std::invalid_argument("a string is String8 or String16");
  Type t;
  t.kind = k;
  t.bound = bound;
  return own(std::move(t));
}

const Type* TypeLibrary::sequence(const Type* element, uint64_t bound) {
  Type t;
  t.kind = TypeKind::Sequence;
  t.element = element;
  t.bound = bound;
  return own(std::move(t));
}

const Type* TypeLibrary::array(const Type* element, std::vector<uint32_t> dims) {
  if (dims.empty()) throw std::invalid_argument("an array needs a dimension");
  for (const uint32_t d : dims)
    if (d == 0) throw std::invalid_argument("an array dimension of 0");
  Type t;
  t.kind = TypeKind::Array;
  t.element = element;
  t.dims = std::move(dims);
  return own(std::move(t));
}

const Type* TypeLibrary::map(const Type* key, const Type* value, uint64_t bound) {
  Type t;
  t.kind = TypeKind::Map;
  t.key = key;
  t.element = value;
  t.bound = bound;
  return own(std::move(t));
}

Type* TypeLibrary::add_named(TypeKind kind, std::string scoped_name) {
  if (!is_named(kind)) throw std::invalid_argument(std::string(to_string(kind)) + " has no name");
  if (scoped_name.starts_with("::")) scoped_name.erase(0, 2);
  if (scoped_name.empty()) throw std::invalid_argument("a named type needs a name");
  if (by_name_.contains(scoped_name))
    throw std::invalid_argument("type '" + scoped_name + "' is defined twice");
  Type t;
  t.kind = kind;
  t.name = scoped_name;
  Type* p = own(std::move(t));
  by_name_.emplace(std::move(scoped_name), p);
  named_order_.push_back(p);
  return p;
}

const Type* TypeLibrary::find(std::string_view scoped_name) const {
  if (scoped_name.starts_with("::")) scoped_name.remove_prefix(2);
  if (scoped_name.starts_with("#")) return nullptr;
  auto it = by_name_.find(std::string(scoped_name));
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace spindle::types

// idlc semantic checks (see builder.hpp): scopes and name resolution, constant evaluation
// and conversion, annotations, and the checks on complete types (keys, member ids, unions,
// enums, bitmasks, recursion, forward declarations).
#include "builder.hpp"

#include <antlr4-runtime.h>

#include "IDLParser.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

namespace spindle::idlc::detail {

namespace {

using grammar::IDLParser;
using Ctx = antlr4::ParserRuleContext;

constexpr Int128 kMinValue = -(static_cast<Int128>(1) << 63);
constexpr Int128 kMaxValue = static_cast<Int128>(UINT64_MAX);
constexpr uint32_t kMaxMemberId = 0x0FFFFFFF;

std::string lower(std::string s) {
  for (auto& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string int_str(Int128 v) {
  if (v == 0) {
    return "0";
  }
  const bool neg = v < 0;
  // |kMinValue| fits in Int128, so negation is safe for every value we produce.
  Int128 a = neg ? -v : v;
  std::string out;
  while (a > 0) {
    out += static_cast<char>('0' + static_cast<int>(a % 10));
    a /= 10;
  }
  if (neg) {
    out += '-';
  }
  return {out.rbegin(), out.rend()};
}

bool is_integer(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::Octet:
    case PrimitiveKind::Int8:
    case PrimitiveKind::UInt8:
    case PrimitiveKind::Int16:
    case PrimitiveKind::UInt16:
    case PrimitiveKind::Int32:
    case PrimitiveKind::UInt32:
    case PrimitiveKind::Int64:
    case PrimitiveKind::UInt64:
      return true;
    default:
      return false;
  }
}

bool is_float(PrimitiveKind k) {
  return k == PrimitiveKind::Float || k == PrimitiveKind::Double || k == PrimitiveKind::LongDouble;
}

// Range of an integer kind.
std::pair<Int128, Int128> range_of(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::Int8:
      return {INT8_MIN, INT8_MAX};
    case PrimitiveKind::Octet:
    case PrimitiveKind::UInt8:
      return {0, UINT8_MAX};
    case PrimitiveKind::Int16:
      return {INT16_MIN, INT16_MAX};
    case PrimitiveKind::UInt16:
      return {0, UINT16_MAX};
    case PrimitiveKind::Int32:
      return {INT32_MIN, INT32_MAX};
    case PrimitiveKind::UInt32:
      return {0, UINT32_MAX};
    case PrimitiveKind::Int64:
      return {INT64_MIN, INT64_MAX};
    default:
      return {0, static_cast<Int128>(UINT64_MAX)};
  }
}

bool is_signed(PrimitiveKind k) {
  return k == PrimitiveKind::Int8 || k == PrimitiveKind::Int16 || k == PrimitiveKind::Int32 ||
         k == PrimitiveKind::Int64;
}

const char* primitive_name(PrimitiveKind k) {
  switch (k) {
    case PrimitiveKind::Boolean:
      return "boolean";
    case PrimitiveKind::Char:
      return "char";
    case PrimitiveKind::WChar:
      return "wchar";
    case PrimitiveKind::Octet:
      return "octet";
    case PrimitiveKind::Int8:
      return "int8";
    case PrimitiveKind::UInt8:
      return "uint8";
    case PrimitiveKind::Int16:
      return "short";
    case PrimitiveKind::UInt16:
      return "unsigned short";
    case PrimitiveKind::Int32:
      return "long";
    case PrimitiveKind::UInt32:
      return "unsigned long";
    case PrimitiveKind::Int64:
      return "long long";
    case PrimitiveKind::UInt64:
      return "unsigned long long";
    case PrimitiveKind::Float:
      return "float";
    case PrimitiveKind::Double:
      return "double";
    case PrimitiveKind::LongDouble:
      return "long double";
  }
  return "?";
}

const char* kind_name(EvalValue::Kind k) {
  switch (k) {
    case EvalValue::Kind::Int:
      return "an integer";
    case EvalValue::Kind::Float:
      return "a floating-point value";
    case EvalValue::Kind::Bool:
      return "a boolean";
    case EvalValue::Kind::Char:
      return "a character";
    case EvalValue::Kind::String:
      return "a string";
    case EvalValue::Kind::Enumerator:
      return "an enumerator";
  }
  return "?";
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++n;
    }
  }
  return n;
}

uint32_t hash_id(const std::string& name) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(name.data(), name.size(), md.data(), &len, EVP_md5(), nullptr) != 1 || len < 4) {
    return 0;
  }
  const uint32_t v = static_cast<uint32_t>(md[0]) | (static_cast<uint32_t>(md[1]) << 8) |
                     (static_cast<uint32_t>(md[2]) << 16) | (static_cast<uint32_t>(md[3]) << 24);
  return v & kMaxMemberId;
}

// ---------------------------------------------------------------------- annotation table
enum class Param : uint8_t { Bool, UInt, Ident, String, MemberTyped, Any };

struct ParamSpec {
  const char* name;
  Param kind;
  bool required;
  std::vector<const char*> idents;
};

struct AnnotationSpec {
  const char* name;
  unsigned sites;  // bit per AnnotationSite
  std::vector<ParamSpec> params;
  bool interpreted;  // false: known from the standards, kept but not acted upon
};

constexpr unsigned bit(AnnotationSite s) {
  return 1U << static_cast<unsigned>(s);
}
constexpr unsigned kAnySite = ~0U;
constexpr unsigned kMembers = bit(AnnotationSite::StructMember) | bit(AnnotationSite::UnionMember);
constexpr unsigned kAggregates = bit(AnnotationSite::Struct) | bit(AnnotationSite::Union);
constexpr unsigned kValueSites = kMembers | bit(AnnotationSite::Typedef);
constexpr unsigned kEnums = bit(AnnotationSite::Enum) | bit(AnnotationSite::Bitmask);

const std::vector<AnnotationSpec>& annotation_table() {
  static const std::vector<AnnotationSpec> table = {
      {"key",
       bit(AnnotationSite::StructMember) | bit(AnnotationSite::Discriminator),
       {{"value", Param::Bool, false, {}}},
       true},
      {"optional", bit(AnnotationSite::StructMember), {{"value", Param::Bool, false, {}}}, true},
      {"id", kMembers, {{"value", Param::UInt, true, {}}}, true},
      {"hashid", kMembers, {{"value", Param::String, false, {}}}, true},
      {"autoid", kAggregates, {{"value", Param::Ident, false, {"SEQUENTIAL", "HASH"}}}, true},
      {"topic",
       kAggregates,
       {{"name", Param::String, false, {}}, {"platform", Param::String, false, {}}},
       true},
      {"nested", kAggregates, {{"value", Param::Bool, false, {}}}, true},
      {"final", kAggregates | kEnums, {}, true},
      {"appendable", kAggregates | kEnums, {}, true},
      {"mutable", kAggregates, {}, true},
      {"extensibility",
       kAggregates | kEnums,
       {{"value", Param::Ident, true, {"FINAL", "APPENDABLE", "MUTABLE"}}},
       true},
      {"default", kValueSites, {{"value", Param::MemberTyped, true, {}}}, true},
      {"range",
       kValueSites,
       {{"min", Param::MemberTyped, true, {}}, {"max", Param::MemberTyped, true, {}}},
       true},
      {"min", kValueSites, {{"value", Param::MemberTyped, true, {}}}, true},
      {"max", kValueSites, {{"value", Param::MemberTyped, true, {}}}, true},
      {"bit_bound",
       bit(AnnotationSite::Enum) | bit(AnnotationSite::Bitmask),
       {{"value", Param::UInt, true, {}}},
       true},
      {"value", bit(AnnotationSite::Enumerator), {{"value", Param::UInt, true, {}}}, true},
      {"position", bit(AnnotationSite::BitValue), {{"value", Param::UInt, true, {}}}, true},
      {"must_understand",
       bit(AnnotationSite::StructMember),
       {{"value", Param::Bool, false, {}}},
       true},
      {"external", kMembers, {{"value", Param::Bool, false, {}}}, true},
      {"unit", kAnySite, {}, false},
      {"verbatim", kAnySite, {}, false},
      {"default_literal", kAnySite, {}, false},
      // Refused unless they ask for what idlc does (see encoding_refusal below).
      {"data_representation", kAnySite, {}, false},
      {"non_serialized", kAnySite, {}, false},
      {"try_construct", kAnySite, {}, false},
      {"ignore_literal_names", kAnySite, {}, false},
      {"service", kAnySite, {}, false},
      {"oneway", kAnySite, {}, false},
      {"ami", kAnySite, {}, false},
  };
  return table;
}

const AnnotationSpec* find_annotation(const std::string& name) {
  for (const auto& s : annotation_table()) {
    if (name == s.name) {
      return &s;
    }
  }
  return nullptr;
}

const char* site_name(AnnotationSite s) {
  switch (s) {
    case AnnotationSite::Module:
      return "a module";
    case AnnotationSite::Struct:
      return "a struct";
    case AnnotationSite::Union:
      return "a union";
    case AnnotationSite::StructMember:
      return "a struct member";
    case AnnotationSite::UnionMember:
      return "a union member";
    case AnnotationSite::Enum:
      return "an enum";
    case AnnotationSite::Enumerator:
      return "an enumerator";
    case AnnotationSite::Bitmask:
      return "a bitmask";
    case AnnotationSite::BitValue:
      return "a bitmask value";
    case AnnotationSite::Typedef:
      return "a typedef";
    case AnnotationSite::Const:
      return "a constant";
    case AnnotationSite::Discriminator:
      return "a union discriminator";
    case AnnotationSite::Bitset:
      return "a bitset";
    case AnnotationSite::Bitfield:
      return "a bitfield";
  }
  return "this declaration";
}

const Annotation* find(const std::vector<Annotation>& anns, const char* name) {
  for (const auto& a : anns) {
    if (a.name == name) {
      return &a;
    }
  }
  return nullptr;
}

const ConstValue* param(const Annotation& a, const char* name) {
  for (const auto& p : a.params) {
    if (p.name == name) {
      return &p.value;
    }
  }
  return nullptr;
}

bool flag(const Annotation* a) {
  if (a == nullptr) {
    return false;
  }
  const ConstValue* v = param(*a, "value");
  return v == nullptr || (std::holds_alternative<bool>(*v) && std::get<bool>(*v));
}

uint64_t uint_param(const Annotation& a, const char* name = "value") {
  const ConstValue* v = param(a, name);
  return v != nullptr && std::holds_alternative<uint64_t>(*v) ? std::get<uint64_t>(*v) : 0;
}

std::string ident_param(const Annotation& a) {
  const ConstValue* v = param(a, "value");
  return v != nullptr && std::holds_alternative<StringValue>(*v) ? std::get<StringValue>(*v).utf8
                                                                 : std::string();
}

// Numeric comparison of two converted constants of the same type; nullopt when unordered.
std::optional<int> compare(const ConstValue& a, const ConstValue& b) {
  const auto as_ld = [](const ConstValue& v) -> std::optional<long double> {
    if (const auto* i = std::get_if<int64_t>(&v)) {
      return static_cast<long double>(*i);
    }
    if (const auto* u = std::get_if<uint64_t>(&v)) {
      return static_cast<long double>(*u);
    }
    if (const auto* f = std::get_if<long double>(&v)) {
      return *f;
    }
    if (const auto* c = std::get_if<CharValue>(&v)) {
      return static_cast<long double>(c->value);
    }
    return std::nullopt;
  };
  if (std::holds_alternative<uint64_t>(a) && std::holds_alternative<uint64_t>(b)) {
    const auto x = std::get<uint64_t>(a);
    const auto y = std::get<uint64_t>(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (std::holds_alternative<int64_t>(a) && std::holds_alternative<int64_t>(b)) {
    const auto x = std::get<int64_t>(a);
    const auto y = std::get<int64_t>(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const auto x = as_ld(a);
  const auto y = as_ld(b);
  if (!x || !y) {
    return std::nullopt;
  }
  return *x < *y ? -1 : (*x > *y ? 1 : 0);
}

bool same_label(const ConstValue& a, const ConstValue& b) {
  if (a.index() != b.index()) {
    return false;
  }
  if (const auto* c = std::get_if<CharValue>(&a)) {
    return c->value == std::get<CharValue>(b).value;
  }
  if (const auto* e = std::get_if<const EnumeratorDecl*>(&a)) {
    return *e == std::get<const EnumeratorDecl*>(b);
  }
  if (const auto* x = std::get_if<bool>(&a)) {
    return *x == std::get<bool>(b);
  }
  auto r = compare(a, b);
  return r && *r == 0;
}

// `@data_representation(XCDR1 | XCDR2)` as written: the encodings it allows, as bits (1:
// XCDR1, 2: XCDR2); 0 with `why` set when it names one idlc cannot encode.
uint8_t representation_mask(const std::vector<std::string>& text, std::string& why) {
  uint8_t mask = 0;
  if (text.size() != 1) {
    why = "give the encodings as one value, e.g. XCDR1|XCDR2";
    return 0;
  }
  std::string word;
  std::istringstream in(text[0]);
  while (std::getline(in, word, '|')) {
    const auto scope = word.rfind("::");
    if (scope != std::string::npos) word = word.substr(scope + 2);
    if (word == "XCDR1" || word == "XCDR") {
      mask |= 1;
    } else if (word == "XCDR2") {
      mask |= 2;
    } else if (word == "XML") {
      why = "idlc encodes XCDR1 and XCDR2, not XML";
      return 0;
    } else {
      why = "unknown data representation '" + word + "' (XCDR1, XCDR2)";
      return 0;
    }
  }
  return mask;
}

// Annotations known from the standards that would change the bytes on the wire (or the
// decoding rule) in a way idlc does not implement: refused rather than silently ignored.
// `text` is each parameter as written. Returns the reason, or "" when the use is fine.
std::string encoding_refusal(const std::string& name, const std::vector<std::string>& text) {
  if (name == "data_representation") {
    std::string why;
    representation_mask(text, why);
    return why;
  }
  if (name == "non_serialized") {
    return "idlc serializes every member";
  }
  if (name == "try_construct") {
    if (text.size() == 1 && text[0] == "DISCARD") {
      return "";  // what decoding does: a sample with a bad member is dropped whole
    }
    return "a sample with a member that cannot be decoded is always discarded";
  }
  return "";
}

}  // namespace

std::string lower_name(std::string s) {
  return lower(std::move(s));
}

bool is_builtin_annotation(const std::string& name) {
  return find_annotation(name) != nullptr;
}

const AnnotationDecl* Builder::find_user_annotation(const std::string& name) const {
  auto it = user_annotations_.find(name);
  return it == user_annotations_.end() ? nullptr : it->second;
}

bool Builder::check_map_key(const Type& t, const SourceLocation& where) {
  std::vector<uint64_t> dims;
  const Type& r = resolve_typedefs(t, &dims);
  const bool ok =
      dims.empty() &&
      ((r.kind == Type::Kind::Primitive &&
        (is_integer(r.primitive) || r.primitive == PrimitiveKind::Char ||
         r.primitive == PrimitiveKind::WChar)) ||
       r.kind == Type::Kind::String ||
       (r.kind == Type::Kind::Named && r.decl != nullptr && r.decl->kind == DeclKind::Enum));
  if (!ok) {
    diags_.error(where, "'" + type_name(t) +
                            "' is not a valid map key type (an integer, character, string or "
                            "enum type is)");
  }
  return ok;
}

std::optional<PrimitiveKind> Builder::bitfield_type(const Type* declared, uint64_t width,
                                                    const SourceLocation& where) {
  if (declared == nullptr) {
    return width <= 8    ? PrimitiveKind::UInt8
           : width <= 16 ? PrimitiveKind::UInt16
           : width <= 32 ? PrimitiveKind::UInt32
                         : PrimitiveKind::UInt64;
  }
  std::vector<uint64_t> dims;
  const Type& r = resolve_typedefs(*declared, &dims);
  if (!dims.empty() || r.kind != Type::Kind::Primitive ||
      !(is_integer(r.primitive) || r.primitive == PrimitiveKind::Boolean)) {
    diags_.error(where,
                 "'" + type_name(*declared) +
                     "' is not a valid bitfield type (boolean, octet or an integer type is)");
    return std::nullopt;
  }
  uint64_t bits = 1;
  if (r.primitive != PrimitiveKind::Boolean) {
    const auto [lo, hi] = range_of(r.primitive);
    bits = 0;
    for (Int128 v = hi; v > 0; v >>= 1) {
      ++bits;
    }
    bits += lo < 0 ? 1 : 0;
  }
  if (width > bits) {
    diags_.error(where, "a bitfield of " + std::to_string(width) + " bits does not fit in '" +
                            type_name(*declared) + "'");
    return std::nullopt;
  }
  return r.primitive;
}

std::string ScopedName::str() const {
  std::string out = absolute ? "::" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out += "::";
    }
    out += parts[i];
  }
  return out;
}

// ===================================================================== scopes and names

Scope* Builder::enter_module(ModuleDecl* m) {
  const std::string key = lower(m->name);
  auto it = scope_->names.find(key);
  if (it != scope_->names.end()) {
    const Decl* existing = it->second;
    if (existing->kind != DeclKind::Module) {
      diags_.error(m->loc, "redefinition of '" + m->name + "'");
      return nullptr;
    }
    if (existing->name != m->name) {
      diags_.error(m->loc, "'" + m->name + "' collides with '" + existing->name +
                               "' (IDL identifiers are case-insensitive)");
      return nullptr;
    }
    scope_ = scope_->modules[key].get();
    return scope_;
  }
  auto scope = std::make_unique<Scope>();
  scope->parent = scope_;
  scope->name = m->name;
  Scope* raw = scope.get();
  scope_->modules[key] = std::move(scope);
  scope_->names[key] = m;
  module_scopes_[m] = raw;
  scope_ = raw;
  return raw;
}

void Builder::leave_module(ModuleDecl* enclosing) {
  scope_ = scope_->parent;
  module_ = enclosing;
}

bool Builder::declare(Decl* d) {
  const std::string key = lower(d->name);
  auto it = scope_->names.find(key);
  const bool is_forward = d->kind == DeclKind::ForwardStruct || d->kind == DeclKind::ForwardUnion;
  if (it == scope_->names.end()) {
    scope_->names[key] = d;
    if (is_forward) {
      forwards_.emplace_back(static_cast<ForwardDecl*>(d), scope_);
    }
    return true;
  }
  Decl* existing = it->second;
  if (existing->name != d->name) {
    diags_.error(d->loc, "'" + d->name + "' collides with '" + existing->name +
                             "' (IDL identifiers are case-insensitive)");
    return false;
  }
  const auto defines = [](DeclKind fwd, DeclKind def) {
    return (fwd == DeclKind::ForwardStruct && def == DeclKind::Struct) ||
           (fwd == DeclKind::ForwardUnion && def == DeclKind::Union);
  };
  if (is_forward && (existing->kind == d->kind || defines(d->kind, existing->kind))) {
    auto* f = static_cast<ForwardDecl*>(d);
    f->definition =
        existing->kind == d->kind ? static_cast<ForwardDecl*>(existing)->definition : existing;
    forwards_.emplace_back(f, scope_);
    return true;
  }
  if (defines(existing->kind, d->kind)) {
    it->second = d;
    for (auto& [f, s] : forwards_) {
      if (s == scope_ && lower(f->name) == key) {
        f->definition = d;
      }
    }
    return true;
  }
  diags_.error(d->loc, "redefinition of '" + d->name + "'");
  return false;
}

const Decl* Builder::lookup(const ScopedName& name) {
  if (name.parts.empty()) {
    return nullptr;
  }
  const std::string full = name.str();
  const auto undeclared = [&]() -> const Decl* {
    if (reported_.insert({scope_, lower(full)}).second) {
      diags_.error(name.loc, "undeclared name '" + full + "'");
    }
    return nullptr;
  };
  for (Scope* s = scope_; s != nullptr; s = s->parent) {
    if (reported_.count({s, lower(full)}) != 0 ||
        (name.parts.size() == 1 && reported_.count({s, name.parts[0]}) != 0)) {
      return nullptr;  // an earlier error about this name already covers this use
    }
  }
  Scope* start = nullptr;
  Decl* found = nullptr;
  const std::string first = lower(name.parts[0]);
  if (name.absolute) {
    start = &global_;
    auto it = start->names.find(first);
    found = it == start->names.end() ? nullptr : it->second;
  } else {
    for (Scope* s = scope_; s != nullptr && found == nullptr; s = s->parent) {
      auto it = s->names.find(first);
      if (it != s->names.end()) {
        found = it->second;
      }
    }
  }
  for (size_t i = 0;; ++i) {
    if (found == nullptr) {
      return undeclared();
    }
    if (found->name != name.parts[i]) {
      if (reported_.insert({scope_, lower(full)}).second) {
        diags_.error(name.loc, "'" + name.parts[i] + "' differs only in case from '" + found->name +
                                   "' (IDL identifiers are case-insensitive)");
      }
      return nullptr;
    }
    if (i + 1 == name.parts.size()) {
      return found;
    }
    if (found->kind != DeclKind::Module) {
      if (reported_.insert({scope_, lower(full)}).second) {
        diags_.error(name.loc, "'" + found->name + "' in '" + full + "' is not a module");
      }
      return nullptr;
    }
    Scope* ms = module_scopes_.at(found);
    auto it = ms->names.find(lower(name.parts[i + 1]));
    found = it == ms->names.end() ? nullptr : it->second;
  }
}

TypePtr Builder::named_type(const ScopedName& name) {
  const Decl* d = lookup(name);
  if (d == nullptr) {
    return nullptr;
  }
  switch (d->kind) {
    case DeclKind::Struct:
    case DeclKind::Union:
    case DeclKind::Enum:
    case DeclKind::Bitmask:
    case DeclKind::Typedef:
    case DeclKind::ForwardStruct:
    case DeclKind::ForwardUnion:
    case DeclKind::Bitset:
      break;
    case DeclKind::Annotation:
      diags_.error(name.loc, "'" + name.str() + "' is an annotation, not a type");
      return nullptr;
    case DeclKind::Const:
      diags_.error(name.loc, "'" + name.str() + "' is a constant, not a type");
      return nullptr;
    case DeclKind::Module:
      diags_.error(name.loc, "'" + name.str() + "' is a module, not a type");
      return nullptr;
    case DeclKind::Enumerator:
      diags_.error(name.loc, "'" + name.str() + "' is an enumerator, not a type");
      return nullptr;
  }
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Named;
  t->decl = d;
  if (d->kind == DeclKind::ForwardStruct || d->kind == DeclKind::ForwardUnion) {
    const auto* f = static_cast<const ForwardDecl*>(d);
    if (f->definition != nullptr) {
      t->decl = f->definition;
    } else {
      forward_uses_.emplace_back(t, name.loc);
    }
  }
  return t;
}

// ===================================================================== constants

std::optional<EvalValue> Builder::name_value(const ScopedName& name) {
  const Decl* d = lookup(name);
  if (d == nullptr) {
    return std::nullopt;
  }
  EvalValue v;
  if (d->kind == DeclKind::Enumerator) {
    v.kind = EvalValue::Kind::Enumerator;
    v.e = static_cast<const EnumeratorDecl*>(d);
    return v;
  }
  if (d->kind != DeclKind::Const) {
    diags_.error(name.loc, "'" + name.str() + "' is not a constant");
    return std::nullopt;
  }
  const ConstValue& c = static_cast<const ConstDecl*>(d)->value;
  if (const auto* b = std::get_if<bool>(&c)) {
    v.kind = EvalValue::Kind::Bool;
    v.b = *b;
  } else if (const auto* i = std::get_if<int64_t>(&c)) {
    v.kind = EvalValue::Kind::Int;
    v.i = *i;
  } else if (const auto* u = std::get_if<uint64_t>(&c)) {
    v.kind = EvalValue::Kind::Int;
    v.i = *u;
  } else if (const auto* f = std::get_if<long double>(&c)) {
    v.kind = EvalValue::Kind::Float;
    v.f = *f;
  } else if (const auto* ch = std::get_if<CharValue>(&c)) {
    v.kind = EvalValue::Kind::Char;
    v.c = *ch;
  } else if (const auto* s = std::get_if<StringValue>(&c)) {
    v.kind = EvalValue::Kind::String;
    v.s = *s;
  } else {
    v.kind = EvalValue::Kind::Enumerator;
    v.e = std::get<const EnumeratorDecl*>(c);
  }
  return v;
}

std::optional<EvalValue> Builder::unary(char op, const EvalValue& v, EvalTarget target,
                                        const SourceLocation& where) {
  EvalValue r = v;
  if (v.kind == EvalValue::Kind::Int) {
    if (op == '-') {
      r.i = -v.i;
    } else if (op == '~') {
      if (target.is_unsigned && v.i >= 0) {
        const Int128 all = (static_cast<Int128>(1) << target.bits) - 1;
        r.i = v.i <= all ? all - v.i : -v.i - 1;
      } else {
        r.i = -v.i - 1;
      }
    }
    if (r.i < kMinValue || r.i > kMaxValue) {
      diags_.error(where, "integer overflow in constant expression");
      return std::nullopt;
    }
    return r;
  }
  if (v.kind == EvalValue::Kind::Float && op != '~') {
    if (op == '-') {
      r.f = -v.f;
    }
    return r;
  }
  diags_.error(where, std::string("invalid operand of unary '") + op + "': " + kind_name(v.kind));
  return std::nullopt;
}

std::optional<EvalValue> Builder::binary(const std::string& op, const EvalValue& a,
                                         const EvalValue& b, const SourceLocation& where) {
  const bool numeric = (a.kind == EvalValue::Kind::Int || a.kind == EvalValue::Kind::Float) &&
                       (b.kind == EvalValue::Kind::Int || b.kind == EvalValue::Kind::Float);
  if (!numeric) {
    diags_.error(where, "invalid operands to '" + op + "': " + kind_name(a.kind) + " and " +
                            kind_name(b.kind));
    return std::nullopt;
  }
  EvalValue r;
  if (a.kind == EvalValue::Kind::Float || b.kind == EvalValue::Kind::Float) {
    const long double x = a.kind == EvalValue::Kind::Float ? a.f : static_cast<long double>(a.i);
    const long double y = b.kind == EvalValue::Kind::Float ? b.f : static_cast<long double>(b.i);
    r.kind = EvalValue::Kind::Float;
    if (op == "+") {
      r.f = x + y;
    } else if (op == "-") {
      r.f = x - y;
    } else if (op == "*") {
      r.f = x * y;
    } else if (op == "/") {
      if (y == 0) {
        diags_.error(where, "division by zero in constant expression");
        return std::nullopt;
      }
      r.f = x / y;
    } else {
      diags_.error(where, "operator '" + op + "' needs integer operands");
      return std::nullopt;
    }
    if (!std::isfinite(r.f)) {
      diags_.error(where, "floating-point overflow in constant expression");
      return std::nullopt;
    }
    return r;
  }
  r.kind = EvalValue::Kind::Int;
  const Int128 x = a.i;
  const Int128 y = b.i;
  if (op == "+") {
    r.i = x + y;
  } else if (op == "-") {
    r.i = x - y;
  } else if (op == "*") {
    if (__builtin_mul_overflow(x, y, &r.i)) {
      diags_.error(where, "integer overflow in constant expression");
      return std::nullopt;
    }
  } else if (op == "/" || op == "%") {
    if (y == 0) {
      diags_.error(where, "division by zero in constant expression");
      return std::nullopt;
    }
    r.i = op == "/" ? x / y : x % y;
  } else if (op == "<<" || op == ">>") {
    if (y < 0 || y > 63) {
      diags_.error(where, "shift count " + int_str(y) + " is out of range (0..63)");
      return std::nullopt;
    }
    if (op == "<<") {
      if (__builtin_mul_overflow(x, static_cast<Int128>(1) << static_cast<unsigned>(y), &r.i)) {
        diags_.error(where, "integer overflow in constant expression");
        return std::nullopt;
      }
    } else {
      r.i = x >> static_cast<unsigned>(y);
    }
  } else if (op == "&" || op == "|" || op == "^") {
    r.i = op == "&" ? (x & y) : op == "|" ? (x | y) : (x ^ y);
  } else {
    diags_.error(where, "unknown operator '" + op + "'");
    return std::nullopt;
  }
  if (r.i < kMinValue || r.i > kMaxValue) {
    diags_.error(where, "integer overflow in constant expression");
    return std::nullopt;
  }
  return r;
}

EvalTarget Builder::target_of(const Type* t) {
  if (t == nullptr) {
    return {};
  }
  const Type& r = resolve_typedefs(*t);
  if (r.kind == Type::Kind::Primitive && is_integer(r.primitive)) {
    const auto [lo, hi] = range_of(r.primitive);
    unsigned bits = 0;
    for (Int128 v = hi; v > 0; v >>= 1) {
      ++bits;
    }
    return {lo == 0, bits};
  }
  return {};
}

std::optional<ConstValue> Builder::convert(const EvalValue& v, const Type& target,
                                           const SourceLocation& where) {
  const Type& t = resolve_typedefs(target);
  const std::string tname = type_name(target);
  const auto mismatch = [&]() -> std::optional<ConstValue> {
    diags_.error(where, std::string("cannot convert ") + kind_name(v.kind) + " to '" + tname + "'");
    return std::nullopt;
  };
  switch (t.kind) {
    case Type::Kind::Primitive: {
      const PrimitiveKind k = t.primitive;
      if (is_integer(k)) {
        if (v.kind != EvalValue::Kind::Int) {
          return mismatch();
        }
        const auto [lo, hi] = range_of(k);
        if (v.i < lo || v.i > hi) {
          diags_.error(where, "value " + int_str(v.i) + " is out of range for '" + tname + "'");
          return std::nullopt;
        }
        if (is_signed(k)) {
          return ConstValue{static_cast<int64_t>(v.i)};
        }
        return ConstValue{static_cast<uint64_t>(v.i)};
      }
      if (is_float(k)) {
        long double f = 0;
        if (v.kind == EvalValue::Kind::Float) {
          f = v.f;
        } else if (v.kind == EvalValue::Kind::Int) {
          f = static_cast<long double>(v.i);
        } else {
          return mismatch();
        }
        const long double max = k == PrimitiveKind::Float    ? FLT_MAX
                                : k == PrimitiveKind::Double ? DBL_MAX
                                                             : LDBL_MAX;
        if (!std::isfinite(f) || f > max || f < -max) {
          diags_.error(where, "value is out of range for '" + tname + "'");
          return std::nullopt;
        }
        return ConstValue{f};
      }
      if (k == PrimitiveKind::Boolean) {
        if (v.kind != EvalValue::Kind::Bool) {
          return mismatch();
        }
        return ConstValue{v.b};
      }
      // char / wchar
      if (v.kind != EvalValue::Kind::Char) {
        return mismatch();
      }
      if (k == PrimitiveKind::Char && v.c.wide) {
        diags_.error(where, "cannot convert a wide character to 'char'");
        return std::nullopt;
      }
      return ConstValue{CharValue{v.c.value, k == PrimitiveKind::WChar}};
    }
    case Type::Kind::String: {
      if (v.kind != EvalValue::Kind::String) {
        return mismatch();
      }
      if (!t.wide && v.s.wide) {
        diags_.error(where, "cannot convert a wide string to 'string'");
        return std::nullopt;
      }
      const size_t len = utf8_length(v.s.utf8);
      if (t.bound != 0 && len > t.bound) {
        diags_.error(where, "string of length " + std::to_string(len) + " exceeds the bound of '" +
                                tname + "'");
        return std::nullopt;
      }
      return ConstValue{StringValue{v.s.utf8, t.wide}};
    }
    case Type::Kind::Named:
      if (t.decl != nullptr && t.decl->kind == DeclKind::Enum) {
        if (v.kind != EvalValue::Kind::Enumerator || v.e->owner != t.decl) {
          if (v.kind == EvalValue::Kind::Enumerator) {
            diags_.error(where, "'" + v.e->name + "' is not an enumerator of '" + tname + "'");
          } else {
            diags_.error(where, std::string("cannot convert ") + kind_name(v.kind) + " to '" +
                                    tname + "': expected an enumerator");
          }
          return std::nullopt;
        }
        return ConstValue{v.e};
      }
      return mismatch();
    case Type::Kind::Sequence:
    case Type::Kind::Map:
      return mismatch();
  }
  return mismatch();
}

bool Builder::check_const_type(const Type& t, const SourceLocation& where) {
  std::vector<uint64_t> dims;
  const Type& r = resolve_typedefs(t, &dims);
  const bool ok =
      dims.empty() &&
      (r.kind == Type::Kind::Primitive || r.kind == Type::Kind::String ||
       (r.kind == Type::Kind::Named && r.decl != nullptr && r.decl->kind == DeclKind::Enum));
  if (!ok) {
    diags_.error(where, "'" + type_name(t) + "' is not a valid type for a constant");
  }
  return ok;
}

bool Builder::check_discriminator(const Type& t, const SourceLocation& where) {
  std::vector<uint64_t> dims;
  const Type& r = resolve_typedefs(t, &dims);
  const bool ok =
      dims.empty() &&
      ((r.kind == Type::Kind::Primitive && !is_float(r.primitive)) ||
       (r.kind == Type::Kind::Named && r.decl != nullptr && r.decl->kind == DeclKind::Enum));
  if (!ok) {
    diags_.error(where, "'" + type_name(t) + "' is not a valid union discriminator type");
  }
  return ok;
}

std::string Builder::type_name(const Type& t) const {
  switch (t.kind) {
    case Type::Kind::Primitive:
      return primitive_name(t.primitive);
    case Type::Kind::String:
      return std::string(t.wide ? "wstring" : "string") +
             (t.bound != 0 ? "<" + std::to_string(t.bound) + ">" : "");
    case Type::Kind::Sequence:
      return "sequence<" + (t.element ? type_name(*t.element) : std::string("?")) +
             (t.bound != 0 ? ", " + std::to_string(t.bound) : "") + ">";
    case Type::Kind::Map:
      return "map<" + (t.key ? type_name(*t.key) : std::string("?")) + ", " +
             (t.element ? type_name(*t.element) : std::string("?")) +
             (t.bound != 0 ? ", " + std::to_string(t.bound) : "") + ">";
    case Type::Kind::Named:
      return t.decl != nullptr ? t.decl->scoped_name() : "?";
  }
  return "?";
}

std::string Builder::value_str(const ConstValue& v) const {
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? "TRUE" : "FALSE";
  }
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    return std::to_string(*u);
  }
  if (const auto* c = std::get_if<CharValue>(&v)) {
    if (c->value >= 0x20 && c->value < 0x7F) {
      return std::string("'") + static_cast<char>(c->value) + "'";
    }
    return std::to_string(static_cast<uint32_t>(c->value));
  }
  if (const auto* e = std::get_if<const EnumeratorDecl*>(&v)) {
    return (*e)->name;
  }
  if (const auto* s = std::get_if<StringValue>(&v)) {
    return "\"" + s->utf8 + "\"";
  }
  return std::to_string(static_cast<double>(std::get<long double>(v)));
}

// ===================================================================== annotations

std::vector<Annotation> Builder::annotations(const std::vector<Ctx*>& anns, AnnotationSite site,
                                             const Type* target) {
  std::vector<Annotation> out;
  for (auto* a : anns) {
    auto ann = annotation(a, site, target);
    if (!ann) {
      continue;
    }
    const AnnotationSpec* spec = find_annotation(ann->name);
    if (spec != nullptr && spec->interpreted && find(out, spec->name) != nullptr) {
      diags_.error(ann->loc, "duplicate annotation '@" + ann->name + "'");
      continue;
    }
    out.push_back(std::move(*ann));
  }
  return out;
}

std::optional<Annotation> Builder::annotation(Ctx* ctx, AnnotationSite site, const Type* target) {
  auto* a = static_cast<IDLParser::AnnotationApplContext*>(ctx);
  Annotation ann;
  ann.loc = loc(a);
  auto* n = a->annotationName();
  if (n->KW_DEFAULT() != nullptr) {
    ann.name = "default";
  } else {
    ScopedName sn = scoped_name(n->scopedName());
    sn.absolute = false;
    ann.name = sn.str();
  }
  const AnnotationSpec* spec = find_annotation(ann.name);
  if (spec == nullptr) {
    if (const AnnotationDecl* user = find_user_annotation(ann.name); user != nullptr) {
      return user_annotation(ctx, std::move(ann), *user);
    }
    diags_.warning(ann.loc, "unknown annotation '@" + ann.name + "' ignored");
    return std::nullopt;
  }
  if ((spec->sites & bit(site)) == 0) {
    diags_.error(ann.loc, "annotation '@" + ann.name + "' does not apply to " + site_name(site));
    return std::nullopt;
  }
  // Collect (name, expression) pairs.
  std::vector<std::pair<std::string, IDLParser::ConstExprContext*>> given;
  if (auto* ps = a->annotationParams(); ps != nullptr) {
    if (ps->constExpr() != nullptr) {
      std::string pname = "value";
      if (spec->interpreted && !spec->params.empty() &&
          std::none_of(spec->params.begin(), spec->params.end(),
                       [](const ParamSpec& p) { return std::string(p.name) == "value"; })) {
        pname = spec->params.front().name;
      }
      given.emplace_back(pname, ps->constExpr());
    } else {
      for (auto* p : ps->annotationParam()) {
        given.emplace_back(identifier(p->identifier()), p->constExpr());
      }
    }
  }
  if (!spec->interpreted) {
    std::vector<std::string> texts;
    for (auto& [pname, expr] : given) {
      texts.push_back(expr->getText());
    }
    if (const std::string why = encoding_refusal(ann.name, texts); !why.empty()) {
      std::string shown = "@" + ann.name;
      if (!texts.empty()) {
        shown += "(";
        for (size_t i = 0; i < texts.size(); ++i) {
          shown += (i == 0 ? "" : ", ") + texts[i];
        }
        shown += ")";
      }
      diags_.error(ann.loc, "annotation '" + shown + "' is not supported: " + why);
      return std::nullopt;
    }
    if (ann.name == "data_representation") {
      std::string why;
      ann.params.push_back({"value", ConstValue{uint64_t{representation_mask(texts, why)}}});
      return ann;
    }
    // Keep literal and identifier parameters as written; do not judge them.
    for (auto& [pname, expr] : given) {
      auto* prim = expr->orExpr()
                       ->xorExpr(0)
                       ->andExpr(0)
                       ->shiftExpr(0)
                       ->addExpr(0)
                       ->mulExpr(0)
                       ->unaryExpr(0)
                       ->primaryExpr();
      if (prim == nullptr || given.size() > 16) {
        continue;
      }
      if (prim->scopedName() != nullptr) {
        ann.params.push_back({pname, StringValue{prim->scopedName()->getText(), false}});
      } else if (prim->literal() != nullptr) {
        if (auto v = literal(prim->literal()); v) {
          ConstValue cv;
          switch (v->kind) {
            case EvalValue::Kind::Int:
              cv = v->i > INT64_MAX ? ConstValue{static_cast<uint64_t>(v->i)}
                                    : ConstValue{static_cast<int64_t>(v->i)};
              break;
            case EvalValue::Kind::Float:
              cv = v->f;
              break;
            case EvalValue::Kind::Bool:
              cv = v->b;
              break;
            case EvalValue::Kind::Char:
              cv = v->c;
              break;
            default:
              cv = v->s;
              break;
          }
          ann.params.push_back({pname, cv});
        }
      }
    }
    return ann;
  }
  bool ok = true;
  for (auto& [pname, expr] : given) {
    const ParamSpec* ps = nullptr;
    for (const auto& p : spec->params) {
      if (pname == p.name) {
        ps = &p;
      }
    }
    const SourceLocation where = loc(expr);
    if (ps == nullptr) {
      diags_.error(where, spec->params.empty()
                              ? "annotation '@" + ann.name + "' takes no parameters"
                              : "annotation '@" + ann.name + "' has no parameter '" + pname + "'");
      ok = false;
      continue;
    }
    const std::string& given_name = pname;  // lambdas cannot capture structured bindings
    if (std::any_of(ann.params.begin(), ann.params.end(),
                    [&](const AnnotationParam& p) { return p.name == given_name; })) {
      diags_.error(where, "parameter '" + pname + "' given twice");
      ok = false;
      continue;
    }
    std::optional<ConstValue> value;
    switch (ps->kind) {
      case Param::Ident: {
        const std::string text = expr->getText();
        for (const char* id : ps->idents) {
          if (text == id) {
            value = StringValue{id, false};
          }
        }
        if (!value) {
          std::string choices;
          for (size_t i = 0; i < ps->idents.size(); ++i) {
            choices += (i == 0 ? "" : i + 1 == ps->idents.size() ? " or " : ", ");
            choices += ps->idents[i];
          }
          diags_.error(where, "'@" + ann.name + "' expects " + choices);
        }
        break;
      }
      case Param::Bool: {
        auto v = eval(expr, {});
        if (v && v->kind == EvalValue::Kind::Bool) {
          value = v->b;
        } else if (v) {
          diags_.error(where, "'@" + ann.name + "' expects TRUE or FALSE");
        }
        break;
      }
      case Param::UInt: {
        auto v = eval(expr, {true, 32});
        if (v && v->kind == EvalValue::Kind::Int && v->i >= 0 && v->i <= UINT32_MAX) {
          value = static_cast<uint64_t>(v->i);
        } else if (v) {
          diags_.error(where, "'@" + ann.name + "' expects a non-negative 32-bit integer");
        }
        break;
      }
      case Param::String: {
        auto v = eval(expr, {});
        if (v && v->kind == EvalValue::Kind::String) {
          value = v->s;
        } else if (v) {
          diags_.error(where, "'@" + ann.name + "' expects a string");
        }
        break;
      }
      case Param::MemberTyped: {
        if (target == nullptr) {
          break;  // the member's type had an error already
        }
        std::vector<uint64_t> dims;
        const Type& r = resolve_typedefs(*target, &dims);
        const bool numeric =
            r.kind == Type::Kind::Primitive && (is_integer(r.primitive) || is_float(r.primitive));
        const bool bitmask =
            r.kind == Type::Kind::Named && r.decl != nullptr && r.decl->kind == DeclKind::Bitmask;
        const bool scalar =
            r.kind == Type::Kind::Primitive || r.kind == Type::Kind::String || bitmask ||
            (r.kind == Type::Kind::Named && r.decl != nullptr && r.decl->kind == DeclKind::Enum);
        if (!dims.empty() || (ann.name == "default" ? !scalar : !numeric)) {
          diags_.error(ann.loc, "annotation '@" + ann.name +
                                    "' does not apply to a member of type '" + type_name(*target) +
                                    "'");
          ok = false;
          break;
        }
        if (bitmask) {
          // The default of a bitmask member is its bits as an integer (IDL has no syntax
          // for naming bit values in an expression).
          const uint32_t bb = static_cast<const BitmaskDecl*>(r.decl)->bit_bound;
          auto v = eval(expr, EvalTarget{true, bb});
          if (v && (v->kind != EvalValue::Kind::Int || v->i < 0 ||
                    (bb < 64 && v->i >= (static_cast<Int128>(1) << bb)) ||
                    v->i > static_cast<Int128>(UINT64_MAX))) {
            diags_.error(where, "default of a '" + type_name(*target) +
                                    "' member must be an integer of at most " + std::to_string(bb) +
                                    " bits (its bit_bound)");
          } else if (v) {
            value = ConstValue{static_cast<uint64_t>(v->i)};
          }
          break;
        }
        auto v = eval(expr, target_of(target));
        if (v) {
          value = convert(*v, *target, where);
        }
        break;
      }
      case Param::Any:
        break;
    }
    if (!value) {
      ok = false;
      continue;
    }
    ann.params.push_back({pname, *value});
  }
  if (!ok) {
    return std::nullopt;
  }
  for (const auto& p : spec->params) {
    if (p.required && param(ann, p.name) == nullptr) {
      diags_.error(ann.loc,
                   std::string(p.name) == "value"
                       ? "annotation '@" + ann.name + "' requires a value"
                       : "annotation '@" + ann.name + "' requires parameter '" + p.name + "'");
      return std::nullopt;
    }
  }
  if ((ann.name == "id") && uint_param(ann) > kMaxMemberId) {
    diags_.error(ann.loc, "member id " + std::to_string(uint_param(ann)) +
                              " is out of range (0..268435455)");
    return std::nullopt;
  }
  if (ann.name == "range") {
    auto c = compare(*param(ann, "min"), *param(ann, "max"));
    if (c && *c > 0) {
      diags_.error(ann.loc, "'@range': min is greater than max");
      return std::nullopt;
    }
  }
  return ann;
}

std::optional<Annotation> Builder::user_annotation(Ctx* ctx, Annotation ann,
                                                   const AnnotationDecl& decl) {
  auto* a = static_cast<IDLParser::AnnotationApplContext*>(ctx);
  std::vector<std::pair<std::string, IDLParser::ConstExprContext*>> given;
  if (auto* ps = a->annotationParams(); ps != nullptr) {
    if (ps->constExpr() != nullptr) {
      // The shorthand `@A(v)` names the only member, or the member called "value".
      std::string pname = "value";
      if (decl.members.size() == 1) {
        pname = decl.members.front().name;
      }
      given.emplace_back(pname, ps->constExpr());
    } else {
      for (auto* p : ps->annotationParam()) {
        given.emplace_back(identifier(p->identifier()), p->constExpr());
      }
    }
  }
  bool ok = true;
  for (auto& [pname, expr] : given) {
    const SourceLocation where = loc(expr);
    const AnnotationMemberDecl* member = nullptr;
    for (const auto& m : decl.members) {
      if (m.name == pname) {
        member = &m;
      }
    }
    if (member == nullptr) {
      diags_.error(where, decl.members.empty()
                              ? "annotation '@" + ann.name + "' takes no parameters"
                              : "annotation '@" + ann.name + "' has no parameter '" + pname + "'");
      ok = false;
      continue;
    }
    const std::string& given_name = pname;  // lambdas cannot capture structured bindings
    if (std::any_of(ann.params.begin(), ann.params.end(),
                    [&](const AnnotationParam& p) { return p.name == given_name; })) {
      diags_.error(where, "parameter '" + pname + "' given twice");
      ok = false;
      continue;
    }
    auto v = eval(expr, target_of(member->type.get()));
    std::optional<ConstValue> cv;
    if (v) {
      cv = convert(*v, *member->type, where);
    }
    if (!cv) {
      ok = false;
      continue;
    }
    ann.params.push_back({pname, *cv});
  }
  if (!ok) {
    return std::nullopt;
  }
  for (const auto& m : decl.members) {
    if (param(ann, m.name.c_str()) != nullptr) {
      continue;
    }
    if (!m.default_value) {
      diags_.error(ann.loc, "annotation '@" + ann.name + "' requires parameter '" + m.name + "'");
      return std::nullopt;
    }
    ann.params.push_back({m.name, *m.default_value});
  }
  return ann;
}

void Builder::apply_type_annotations(Decl* d, Extensibility* ext) {
  const Annotation* ext_ann = nullptr;
  for (const auto& a : d->annotations) {
    std::optional<Extensibility> e;
    if (a.name == "final") {
      e = Extensibility::Final;
    } else if (a.name == "appendable") {
      e = Extensibility::Appendable;
    } else if (a.name == "mutable") {
      e = Extensibility::Mutable;
    } else if (a.name == "extensibility") {
      const std::string v = ident_param(a);
      e = v == "FINAL"     ? Extensibility::Final
          : v == "MUTABLE" ? Extensibility::Mutable
                           : Extensibility::Appendable;
    }
    if (!e) {
      continue;
    }
    if (ext_ann != nullptr) {
      diags_.error(
          a.loc, "'@" + a.name + "' conflicts with '@" + ext_ann->name + "' on '" + d->name + "'");
      continue;
    }
    if (*e == Extensibility::Mutable &&
        (d->kind == DeclKind::Enum || d->kind == DeclKind::Bitmask)) {
      diags_.error(a.loc, "'" + d->name +
                              "' cannot be MUTABLE: an enum or bitmask is FINAL or "
                              "APPENDABLE");
      continue;
    }
    ext_ann = &a;
    if (ext != nullptr) {
      *ext = *e;
    }
  }
  // What the encoding chosen by default depends on (docs/cdr.md, "Which encoding").
  uint8_t representations = 3;
  if (const Annotation* a = find(d->annotations, "data_representation"); a != nullptr) {
    if (const ConstValue* v = param(*a, "value");
        v != nullptr && std::holds_alternative<uint64_t>(*v))
      representations = static_cast<uint8_t>(std::get<uint64_t>(*v));
  }
  if (d->kind == DeclKind::Struct) {
    auto* s = static_cast<StructDecl*>(d);
    s->extensibility_explicit = ext_ann != nullptr;
    s->representations = representations;
  } else if (d->kind == DeclKind::Union) {
    auto* u = static_cast<UnionDecl*>(d);
    u->extensibility_explicit = ext_ann != nullptr;
    u->representations = representations;
  }
  if (const Annotation* a = find(d->annotations, "autoid"); a != nullptr) {
    const std::string v = ident_param(*a);
    autoid_[d] = v.empty() ? "SEQUENTIAL" : v;
  }
  const Annotation* topic = find(d->annotations, "topic");
  const Annotation* nested = find(d->annotations, "nested");
  if (topic != nullptr && flag(nested)) {
    diags_.error(nested->loc, "'@nested' conflicts with '@topic' on '" + d->name + "'");
  }
  topic_annotation_[d] = topic != nullptr;
}

void Builder::apply_member_annotations(MemberDecl& m, bool /*in_union*/) {
  const Annotation* key = find(m.annotations, "key");
  const Annotation* optional = find(m.annotations, "optional");
  m.is_key = flag(key);
  m.is_optional = flag(optional);
  m.is_external = flag(find(m.annotations, "external"));
  m.must_understand = flag(find(m.annotations, "must_understand"));
  if (m.is_key && m.is_optional) {
    diags_.error(key->loc, "key member '" + m.name + "' cannot be @optional");
  }
  if (m.is_key && m.type) {
    std::set<const Decl*> seen;
    if (!keyable(*m.type, seen)) {
      diags_.error(key->loc,
                   "member '" + m.name + "' of type '" + type_name(*m.type) + "' cannot be a key");
    }
  }
  for (const auto& a : m.annotations) {
    if (a.name == "default" || a.name == "min" || a.name == "max" || a.name == "range") {
      if (!m.array_dims.empty()) {
        diags_.error(a.loc, "annotation '@" + a.name + "' does not apply to an array member");
        continue;
      }
    }
    if (a.name == "default") {
      m.default_value = *param(a, "value");
    } else if (a.name == "min") {
      m.min = *param(a, "value");
    } else if (a.name == "max") {
      m.max = *param(a, "value");
    } else if (a.name == "range") {
      m.min = *param(a, "min");
      m.max = *param(a, "max");
    }
  }
  if (m.min && m.max) {
    auto c = compare(*m.min, *m.max);
    if (c && *c > 0) {
      diags_.error(m.loc, "minimum of '" + m.name + "' is greater than its maximum");
    }
  }
}

// ===================================================================== complete types

bool Builder::check_by_value(const TypePtr& type, const SourceLocation& where) {
  const Type& r = resolve_typedefs(*type);
  if (r.kind == Type::Kind::Map) {
    return check_by_value(r.element, where);  // std::map needs a complete value type
  }
  if (r.kind != Type::Kind::Named || r.decl == nullptr) {
    return true;
  }
  const Decl* d = r.decl;
  if (d->kind == DeclKind::ForwardStruct || d->kind == DeclKind::ForwardUnion) {
    const Decl* def = static_cast<const ForwardDecl*>(d)->definition;
    if (def == nullptr) {
      incomplete_reported_.insert(d);
      diags_.error(where, "'" + d->scoped_name() +
                              "' is only forward-declared here; it can be used through a "
                              "sequence until it is defined");
      return false;
    }
    d = def;
  }
  if (std::find(in_progress_.begin(), in_progress_.end(), d) != in_progress_.end()) {
    diags_.error(where, "illegal recursion: '" + d->scoped_name() +
                            "' contains itself (recursion is only allowed through a sequence)");
    return false;
  }
  return true;
}

bool Builder::keyable(const Type& t, std::set<const Decl*>& seen) const {
  const Type& r = resolve_typedefs(t);
  switch (r.kind) {
    case Type::Kind::Primitive:
    case Type::Kind::String:
      return true;
    case Type::Kind::Sequence:
      // XTypes 1.3 7.6.8: a sequence key is hashed through its serialized form (MD5, its
      // size being unbounded or large).
      return r.element && keyable(*r.element, seen);
    case Type::Kind::Map:
      return false;
    case Type::Kind::Named:
      break;
  }
  const Decl* d = r.decl;
  if (d != nullptr && (d->kind == DeclKind::ForwardStruct || d->kind == DeclKind::ForwardUnion)) {
    d = static_cast<const ForwardDecl*>(d)->definition;
  }
  if (d == nullptr) {
    return false;
  }
  if (d->kind == DeclKind::Enum || d->kind == DeclKind::Bitmask || d->kind == DeclKind::Bitset) {
    return true;
  }
  if (d->kind == DeclKind::Union) {
    // The whole union is the key: its discriminator and every member must be keyable.
    if (!seen.insert(d).second) {
      return true;
    }
    for (const auto& c : static_cast<const UnionDecl*>(d)->cases) {
      if (c.member.type && !keyable(*c.member.type, seen)) {
        return false;
      }
    }
    return true;
  }
  if (d->kind != DeclKind::Struct) {
    return false;
  }
  if (!seen.insert(d).second) {
    return true;
  }
  const auto* s = static_cast<const StructDecl*>(d);
  bool has_keys = false;
  for (const StructDecl* c = s; c != nullptr; c = c->base) {
    for (const auto& m : c->members) {
      has_keys = has_keys || m.is_key;
    }
  }
  for (const StructDecl* c = s; c != nullptr; c = c->base) {
    for (const auto& m : c->members) {
      if ((!has_keys || m.is_key) && m.type && !keyable(*m.type, seen)) {
        return false;
      }
    }
  }
  return true;
}

void Builder::assign_member_ids(std::vector<MemberDecl*>& members, const Decl* owner,
                                uint32_t first_id,
                                std::vector<std::pair<uint32_t, std::string>> taken) {
  auto it = autoid_.find(owner);
  const bool hash = it != autoid_.end() && it->second == "HASH";
  uint64_t next = first_id;
  for (MemberDecl* m : members) {
    uint64_t id = next;
    if (const Annotation* a = find(m->annotations, "id"); a != nullptr) {
      id = uint_param(*a);
    } else if (const Annotation* h = find(m->annotations, "hashid"); h != nullptr) {
      const ConstValue* v = param(*h, "value");
      id = hash_id(v != nullptr ? std::get<StringValue>(*v).utf8 : m->name);
    } else if (hash) {
      id = hash_id(m->name);
    }
    if (id > kMaxMemberId) {
      diags_.error(m->loc, "member id of '" + m->name + "' is out of range (0..268435455)");
      return;
    }
    m->id = static_cast<uint32_t>(id);
    for (const auto& [tid, tname] : taken) {
      if (tid == m->id) {
        diags_.error(m->loc, "member id " + std::to_string(id) + " of '" + m->name +
                                 "' is already used by '" + tname + "'");
      }
    }
    taken.emplace_back(m->id, m->name);
    next = id + 1;
  }
}

void Builder::finish_struct(StructDecl* s, const SourceLocation& base_loc) {
  apply_type_annotations(s, &s->extensibility);
  s->is_nested = flag(find(s->annotations, "nested"));
  if (s->base != nullptr && s->base->extensibility != s->extensibility) {
    diags_.error(base_loc, "extensibility of '" + s->name + "' differs from its base '" +
                               s->base->name + "'");
  }
  // Member names: unique in the struct and its bases (case-insensitively).
  std::map<std::string, std::string> names;
  std::vector<std::pair<uint32_t, std::string>> taken;
  uint32_t first_id = 0;
  std::vector<const StructDecl*> chain;
  for (const StructDecl* b = s->base; b != nullptr && chain.size() < 1024; b = b->base) {
    chain.push_back(b);
  }
  for (auto b = chain.rbegin(); b != chain.rend(); ++b) {
    for (const auto& m : (*b)->members) {
      names[lower(m.name)] = (*b)->name;
      taken.emplace_back(m.id, m.name);
      first_id = m.id + 1;
    }
  }
  std::map<std::string, std::string> own;
  std::vector<MemberDecl*> members;
  for (auto& m : s->members) {
    const std::string key = lower(m.name);
    if (auto it = names.find(key); it != names.end()) {
      diags_.error(m.loc,
                   "member '" + m.name + "' redefines a member of base '" + it->second + "'");
    } else if (auto o = own.find(key); o != own.end()) {
      diags_.error(m.loc, o->second == m.name
                              ? "redefinition of member '" + m.name + "'"
                              : "member '" + m.name + "' collides with '" + o->second +
                                    "' (IDL identifiers are case-insensitive)");
    } else {
      own[key] = m.name;
    }
    apply_member_annotations(m, false);
    if (m.is_key) {
      has_key_annotation_.insert(s);
    }
    members.push_back(&m);
  }
  assign_member_ids(members, s, first_id, std::move(taken));
}

void Builder::finish_union(UnionDecl* u, const std::vector<SourceLocation>& default_locs,
                           const std::vector<std::vector<SourceLocation>>& case_label_locs) {
  apply_type_annotations(u, &u->extensibility);
  u->is_nested = flag(find(u->annotations, "nested"));
  if (default_locs.size() > 1) {
    diags_.error(default_locs[1], "more than one default case in union '" + u->name + "'");
  }
  std::vector<const ConstValue*> seen;
  std::map<std::string, std::string> own;
  std::vector<MemberDecl*> members;
  for (size_t ci = 0; ci < u->cases.size(); ++ci) {
    UnionCase& c = u->cases[ci];
    for (size_t li = 0; li < c.labels.size(); ++li) {
      const ConstValue& label = c.labels[li];
      if (std::any_of(seen.begin(), seen.end(),
                      [&](const ConstValue* s) { return same_label(*s, label); })) {
        diags_.error(case_label_locs[ci][li], "duplicate case label " + value_str(label));
      }
      seen.push_back(&label);
    }
    const std::string key = lower(c.member.name);
    if (auto o = own.find(key); o != own.end()) {
      diags_.error(c.member.loc, o->second == c.member.name
                                     ? "redefinition of member '" + c.member.name + "'"
                                     : "member '" + c.member.name + "' collides with '" +
                                           o->second + "' (IDL identifiers are case-insensitive)");
    } else {
      own[key] = c.member.name;
    }
    apply_member_annotations(c.member, true);
    members.push_back(&c.member);
  }
  assign_member_ids(members, u, 1, {});

  const bool has_default = std::any_of(u->cases.begin(), u->cases.end(),
                                       [](const UnionCase& c) { return c.is_default; });
  if (has_default) {
    return;
  }
  // The implicit default: the first discriminator value no label selects.
  const auto used = [&](const ConstValue& v) {
    return std::any_of(seen.begin(), seen.end(),
                       [&](const ConstValue* s) { return same_label(*s, v); });
  };
  const Type& d = resolve_typedefs(*u->discriminator);
  if (d.kind == Type::Kind::Named) {
    const auto* e = static_cast<const EnumDecl*>(d.decl);
    for (const auto* en : e->enumerators) {
      if (!used(ConstValue{en})) {
        u->implicit_default = ConstValue{en};
        return;
      }
    }
    return;
  }
  switch (d.primitive) {
    case PrimitiveKind::Boolean:
      for (const bool b : {false, true}) {
        if (!used(ConstValue{b})) {
          u->implicit_default = ConstValue{b};
          return;
        }
      }
      return;
    case PrimitiveKind::Char:
    case PrimitiveKind::WChar: {
      const char32_t max = d.primitive == PrimitiveKind::Char ? 0xFF : 0xFFFF;
      for (char32_t c = 0; c <= max; ++c) {
        const ConstValue v{CharValue{c, d.primitive == PrimitiveKind::WChar}};
        if (!used(v)) {
          u->implicit_default = v;
          return;
        }
      }
      return;
    }
    default:
      break;
  }
  const auto [lo, hi] = range_of(d.primitive);
  const bool sig = is_signed(d.primitive);
  // At most seen.size() values are taken, so this finds one quickly when any is free.
  for (Int128 v = 0; v <= hi && v <= static_cast<Int128>(seen.size()) + 1; ++v) {
    const ConstValue cv =
        sig ? ConstValue{static_cast<int64_t>(v)} : ConstValue{static_cast<uint64_t>(v)};
    if (!used(cv)) {
      u->implicit_default = cv;
      return;
    }
  }
  for (Int128 v = -1; sig && v >= lo && -v <= static_cast<Int128>(seen.size()) + 1; --v) {
    const ConstValue cv{static_cast<int64_t>(v)};
    if (!used(cv)) {
      u->implicit_default = cv;
      return;
    }
  }
}

void Builder::finish_enum(EnumDecl* e, const std::vector<std::vector<Annotation>>& value_anns) {
  apply_type_annotations(e, &e->extensibility);
  if (const Annotation* bb = find(e->annotations, "bit_bound"); bb != nullptr) {
    const uint64_t v = uint_param(*bb);
    if (v < 1 || v > 32) {
      diags_.error(bb->loc, "'@bit_bound' of an enum must be between 1 and 32");
    } else {
      e->bit_bound = static_cast<uint32_t>(v);
    }
  }
  uint64_t next = 0;
  std::map<uint32_t, const EnumeratorDecl*> done;
  for (size_t i = 0; i < e->enumerators.size(); ++i) {
    EnumeratorDecl* en = e->enumerators[i];
    uint64_t value = next;
    SourceLocation where = en->loc;
    if (i < value_anns.size()) {
      if (const Annotation* a = find(value_anns[i], "value"); a != nullptr) {
        value = uint_param(*a);
        where = a->loc;
      }
    }
    const uint64_t limit = e->bit_bound >= 32 ? UINT32_MAX : (uint64_t{1} << e->bit_bound) - 1;
    if (value > limit) {
      diags_.error(where, "value of enumerator '" + en->name + "' does not fit in " +
                              std::to_string(e->bit_bound) + " bits");
      return;
    }
    en->value = static_cast<uint32_t>(value);
    if (auto [it, fresh] = done.emplace(en->value, en); !fresh) {
      diags_.error(
          where, "enumerator '" + en->name + "' has the same value as '" + it->second->name + "'");
    }
    next = value + 1;
  }
}

void Builder::finish_bitmask(BitmaskDecl* b,
                             const std::vector<std::vector<Annotation>>& value_anns) {
  apply_type_annotations(b, nullptr);
  if (const Annotation* bb = find(b->annotations, "bit_bound"); bb != nullptr) {
    const uint64_t v = uint_param(*bb);
    if (v < 1 || v > 64) {
      diags_.error(bb->loc, "'@bit_bound' of a bitmask must be between 1 and 64");
      return;
    }
    b->bit_bound = static_cast<uint32_t>(v);
  }
  uint64_t next = 0;
  std::map<std::string, std::string> names;
  for (size_t i = 0; i < b->values.size(); ++i) {
    BitValue& v = b->values[i];
    const std::string key = lower(v.name);
    if (auto it = names.find(key); it != names.end()) {
      diags_.error(v.loc, it->second == v.name ? "redefinition of '" + v.name + "'"
                                               : "'" + v.name + "' collides with '" + it->second +
                                                     "' (IDL identifiers are case-insensitive)");
    }
    names[key] = v.name;
    uint64_t pos = next;
    SourceLocation where = v.loc;
    if (i < value_anns.size()) {
      if (const Annotation* a = find(value_anns[i], "position"); a != nullptr) {
        pos = uint_param(*a);
        where = a->loc;
      }
    }
    if (pos >= b->bit_bound) {
      diags_.error(where, "position " + std::to_string(pos) + " of '" + v.name +
                              "' is outside the bit bound " + std::to_string(b->bit_bound));
      return;
    }
    v.position = static_cast<uint32_t>(pos);
    for (size_t j = 0; j < i; ++j) {
      if (b->values[j].position == v.position) {
        diags_.error(where,
                     "'" + v.name + "' has the same position as '" + b->values[j].name + "'");
      }
    }
    next = pos + 1;
  }
}

void Builder::expand_key(std::vector<const MemberDecl*> prefix, const MemberDecl* m,
                         std::vector<std::vector<const MemberDecl*>>& out, int depth) {
  prefix.push_back(m);
  const Type& r = resolve_typedefs(*m->type);
  std::vector<uint64_t> dims = m->array_dims;
  (void)resolve_typedefs(*m->type, &dims);
  if (depth > 64 || !dims.empty() || r.kind != Type::Kind::Named || r.decl == nullptr ||
      r.decl->kind != DeclKind::Struct) {
    out.push_back(std::move(prefix));
    return;
  }
  const auto* s = static_cast<const StructDecl*>(r.decl);
  if (!s->key_paths.empty()) {
    for (const auto& p : s->key_paths) {
      auto full = prefix;
      full.insert(full.end(), p.begin(), p.end());
      out.push_back(std::move(full));
    }
    return;
  }
  std::vector<const StructDecl*> chain;
  for (const StructDecl* c = s; c != nullptr && chain.size() < 1024; c = c->base) {
    chain.push_back(c);
  }
  bool any = false;
  for (auto c = chain.rbegin(); c != chain.rend(); ++c) {
    for (const auto& sm : (*c)->members) {
      expand_key(prefix, &sm, out, depth + 1);
      any = true;
    }
  }
  if (!any) {
    out.push_back(std::move(prefix));
  }
}

void Builder::compute_key_paths(StructDecl* s) {
  std::vector<std::vector<const MemberDecl*>> paths;
  if (s->base != nullptr) {
    paths = s->base->key_paths;
  }
  auto kl = keylists_.find(s);
  if (kl != keylists_.end()) {
    for (const auto& entry : kl->second) {
      std::vector<const MemberDecl*> prefix(entry.path.begin(), entry.path.end() - 1);
      expand_key(prefix, entry.path.back(), paths, 0);
    }
  } else {
    for (const auto& m : s->members) {
      if (m.is_key) {
        expand_key({}, &m, paths, 0);
      }
    }
  }
  s->key_paths = std::move(paths);
  const bool topic = topic_annotation_[s] || !s->key_paths.empty() || kl != keylists_.end();
  s->is_topic = topic && !s->is_nested;
}

void Builder::finish() {
  std::set<const Decl*> reported = incomplete_reported_;
  for (auto& [type, where] : forward_uses_) {
    const auto* f = static_cast<const ForwardDecl*>(type->decl);
    if (f->definition != nullptr) {
      type->decl = f->definition;
    } else if (reported.insert(f).second) {
      diags_.error(where, "'" + f->scoped_name() + "' is forward-declared but never defined");
    }
  }
  for (auto& owned : spec_.storage) {
    if (owned->kind == DeclKind::Struct) {
      compute_key_paths(static_cast<StructDecl*>(owned.get()));
    }
  }
}

}  // namespace spindle::idlc::detail

// Samples of dynamic types: JSON to XCDR1/XCDR2 and back (dynamic_data.hpp).
//
// The encoder and decoder walk the type the way generated Codec<T> functions walk a C++
// value, and each step writes what the matching step of <spindle/cdr/codec.hpp> (XCDR1,
// through Fast-CDR) or <spindle/cdr/xcdr2.hpp> writes. The one quirk worth knowing: in XCDR1
// alignment is relative to the start of the last parameter's value (Fast-CDR's
// resetAlignment), and stays so after the parameter ends (docs/cdr.md).
#include <spindle/types/dynamic_data.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace spindle::types {

namespace {

using cdr::Encoding;
using cdr::Endianness;
using cdr::Status;

constexpr int kMaxDepth = cdr::kMaxNesting;
constexpr size_t kNone = std::numeric_limits<size_t>::max();

[[noreturn]] void fail(Status s, const std::string& where, const std::string& what) {
  throw DataError(s, where.empty() ? what : where + ": " + what);
}
[[noreturn]] void bad_json(const std::string& where, const std::string& what) {
  fail(Status::BadParameter, where, what);
}

size_t prim_size(TypeKind k, Encoding e) {
  switch (k) {
    case TypeKind::Boolean:
    case TypeKind::Byte:
    case TypeKind::Int8:
    case TypeKind::UInt8:
    case TypeKind::Char8:
      return 1;
    case TypeKind::Int16:
    case TypeKind::UInt16:
      return 2;
    case TypeKind::Char16:
      return e == Encoding::Xcdr2 ? 2 : 4;
    case TypeKind::Int32:
    case TypeKind::UInt32:
    case TypeKind::Float32:
      return 4;
    case TypeKind::Int64:
    case TypeKind::UInt64:
    case TypeKind::Float64:
      return 8;
    case TypeKind::Float128:
      return 16;
    default:
      return 0;
  }
}
size_t prim_align(TypeKind k, Encoding e) {
  const size_t s = prim_size(k, e);
  const size_t max = e == Encoding::Xcdr2 ? 4 : 8;
  return s > max ? max : s;
}

// The integer a bitmask or bitset is carried in.
TypeKind holder_of_bits(uint64_t bits) {
  return bits <= 8    ? TypeKind::UInt8
         : bits <= 16 ? TypeKind::UInt16
         : bits <= 32 ? TypeKind::UInt32
                      : TypeKind::UInt64;
}

bool is_bare(const Type& elem) {
  return is_primitive(resolve(elem).kind);
}

// ----------------------------------------------------------------------------- text
void append_utf8(std::string& s, uint32_t c) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    s.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (c >> 6)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    s.push_back(static_cast<char>(0xE0 | (c >> 12)));
    s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xF0 | (c >> 18)));
    s.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Code points of UTF-8 text; nullopt when it is not UTF-8.
std::optional<std::vector<uint32_t>> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    uint32_t c = 0;
    size_t n = 0;
    if (b < 0x80) {
      c = b;
      n = 1;
    } else if ((b & 0xE0) == 0xC0) {
      c = b & 0x1FU;
      n = 2;
    } else if ((b & 0xF0) == 0xE0) {
      c = b & 0x0FU;
      n = 3;
    } else if ((b & 0xF8) == 0xF0) {
      c = b & 0x07U;
      n = 4;
    } else {
      return std::nullopt;
    }
    if (i + n > s.size()) return std::nullopt;
    for (size_t k = 1; k < n; ++k) {
      const auto cb = static_cast<unsigned char>(s[i + k]);
      if ((cb & 0xC0) != 0x80) return std::nullopt;
      c = (c << 6) | (cb & 0x3FU);
    }
    out.push_back(c);
    i += n;
  }
  return out;
}

std::string char_text(uint32_t c) {
  std::string s;
  append_utf8(s, c);
  return s;
}

// ----------------------------------------------------------------------------- JSON scalars
template <class I>
I json_integer(const Json& v, const std::string& where) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<I>::max()))
      fail(Status::OutOfRange, where, std::to_string(u) + " does not fit the member's type");
    return static_cast<I>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if constexpr (std::is_signed_v<I>) {
      if (i < static_cast<int64_t>(std::numeric_limits<I>::min()) ||
          i > static_cast<int64_t>(std::numeric_limits<I>::max()))
        fail(Status::OutOfRange, where, std::to_string(i) + " does not fit the member's type");
    } else {
      if (i < 0 || static_cast<uint64_t>(i) > std::numeric_limits<I>::max())
        fail(Status::OutOfRange, where, std::to_string(i) + " does not fit the member's type");
    }
    return static_cast<I>(i);
  }
  bad_json(where, "expected an integer, got " + std::string(v.type_name()));
}

long double json_float(const Json& v, const std::string& where) {
  if (v.is_number_float()) return v.get<double>();
  if (v.is_number_unsigned()) return static_cast<long double>(v.get<uint64_t>());
  if (v.is_number_integer()) return static_cast<long double>(v.get<int64_t>());
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<long double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<long double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<long double>::infinity();
    char* end = nullptr;
    const long double d = std::strtold(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return d;
  }
  bad_json(where, "expected a number, got " + v.dump());
}

Json float_json(long double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  const auto as_double = static_cast<double>(d);
  if (static_cast<long double>(as_double) == d) return as_double;
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.21Lg", d);
  return std::string(buf.data());
}

uint32_t json_char(const Json& v, uint32_t max, const std::string& where) {
  if (v.is_string()) {
    const auto cps = code_points(v.get_ref<const std::string&>());
    if (cps && cps->size() == 1 && (*cps)[0] <= max) return (*cps)[0];
  }
  bad_json(where, "expected a one-character string, got " + v.dump());
}

const Enumerator* enumerator_named(const Type& e, const std::string& name) {
  for (const auto& en : e.enumerators)
    if (en.name == name) return &en;
  return nullptr;
}
const Enumerator* enumerator_valued(const Type& e, int64_t value) {
  for (const auto& en : e.enumerators)
    if (en.value == value) return &en;
  return nullptr;
}

int64_t json_enum(const Type& e, const Json& v, const std::string& where) {
  if (v.is_string()) {
    if (const auto* en = enumerator_named(e, v.get_ref<const std::string&>())) return en->value;
    fail(Status::BadEnumerator, where, "no enumerator " + v.dump() + " in enum " + e.name);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (const auto* en = enumerator_valued(e, i)) return en->value;
    fail(Status::BadEnumerator, where,
         "no enumerator of value " + std::to_string(i) + " in enum " + e.name);
  }
  bad_json(where, "expected an enumerator name, got " + v.dump());
}

uint64_t json_bitmask(const Type& b, const Json& v, const std::string& where) {
  uint64_t bits = 0;
  if (v.is_number_integer()) {
    bits = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
  } else if (v.is_array()) {
    for (const auto& f : v) {
      if (f.is_string()) {
        const auto it = std::find_if(b.flags.begin(), b.flags.end(), [&](const BitFlag& x) {
          return x.name == f.get_ref<const std::string&>();
        });
        if (it == b.flags.end())
          fail(Status::BadBitmask, where, "no flag " + f.dump() + " in bitmask " + b.name);
        bits |= uint64_t{1} << it->position;
      } else if (f.is_number_unsigned() && f.get<uint64_t>() < 64) {
        bits |= uint64_t{1} << f.get<uint64_t>();
      } else {
        bad_json(where, "expected a flag name or bit position, got " + f.dump());
      }
    }
  } else {
    bad_json(where, "expected an array of flag names, got " + v.dump());
  }
  if (b.bound < 64 && (bits >> b.bound) != 0)
    fail(Status::BadBitmask, where, "bits beyond the bit_bound of " + std::to_string(b.bound));
  return bits;
}

Json bitmask_json(const Type& b, uint64_t bits) {
  Json out = Json::array();
  for (uint32_t pos = 0; pos < 64; ++pos) {
    if (((bits >> pos) & 1) == 0) continue;
    const auto it = std::find_if(b.flags.begin(), b.flags.end(),
                                 [&](const BitFlag& f) { return f.position == pos; });
    if (it != b.flags.end()) {
      out.push_back(it->name);
    } else {
      out.push_back(pos);
    }
  }
  return out;
}

// A discriminator or label value of a union's discriminator type, as int64 bits.
int64_t json_label(const Type& disc, const Json& v, const std::string& where) {
  const Type& d = resolve(disc);
  switch (d.kind) {
    case TypeKind::Boolean:
      if (!v.is_boolean()) bad_json(where, "expected true or false, got " + v.dump());
      return v.get<bool>() ? 1 : 0;
    case TypeKind::Char8:
      return static_cast<int64_t>(json_char(v, 0xFF, where));
    case TypeKind::Char16:
      return static_cast<int64_t>(json_char(v, 0xFFFF, where));
    case TypeKind::Enum:
      return json_enum(d, v, where);
    case TypeKind::Int8:
      return json_integer<int8_t>(v, where);
    case TypeKind::UInt8:
    case TypeKind::Byte:
      return json_integer<uint8_t>(v, where);
    case TypeKind::Int16:
      return json_integer<int16_t>(v, where);
    case TypeKind::UInt16:
      return json_integer<uint16_t>(v, where);
    case TypeKind::Int32:
      return json_integer<int32_t>(v, where);
    case TypeKind::UInt32:
      return json_integer<uint32_t>(v, where);
    case TypeKind::Int64:
      return json_integer<int64_t>(v, where);
    case TypeKind::UInt64:
      return static_cast<int64_t>(json_integer<uint64_t>(v, where));
    default:
      bad_json(where, std::string("a union discriminator cannot be of type ") + to_string(d.kind));
  }
}

Json label_json(const Type& disc, int64_t label) {
  const Type& d = resolve(disc);
  switch (d.kind) {
    case TypeKind::Boolean:
      return label != 0;
    case TypeKind::Char8:
      return char_text(static_cast<uint32_t>(label) & 0xFF);
    case TypeKind::Char16:
      return char_text(static_cast<uint32_t>(label) & 0xFFFF);
    case TypeKind::Enum:
      if (const auto* en = enumerator_valued(d, label)) return en->name;
      return label;
    case TypeKind::UInt64:
      return static_cast<uint64_t>(label);
    default:
      return label;
  }
}

const UnionCase* case_of(const Type& u, int64_t d) {
  const UnionCase* dflt = nullptr;
  for (const auto& c : u.cases) {
    if (std::find(c.labels.begin(), c.labels.end(), d) != c.labels.end()) return &c;
    if (c.is_default) dflt = &c;
  }
  return dflt;
}

// A discriminator value no label names (generated code's free_discriminator).
std::optional<int64_t> free_label(const Type& u) {
  if (u.implicit_default) return u.implicit_default;
  auto used = [&](int64_t v) {
    for (const auto& c : u.cases)
      if (std::find(c.labels.begin(), c.labels.end(), v) != c.labels.end()) return true;
    return false;
  };
  const Type& d = resolve(*u.discriminator);
  if (d.kind == TypeKind::Enum) {
    for (const auto& en : d.enumerators)
      if (!used(en.value)) return en.value;
    return std::nullopt;
  }
  const int64_t limit = d.kind == TypeKind::Boolean                                 ? 2
                        : (d.kind == TypeKind::Char8 || d.kind == TypeKind::Char16) ? 0x80
                                                                                    : 100000;
  for (int64_t i = 0; i < limit; ++i)
    if (!used(i)) return i;
  return std::nullopt;
}

Json literal_json(const Type& t, const Literal& l) {
  const Type& r = resolve(t);
  if (const auto* s = std::get_if<std::string>(&l)) return *s;
  if (const auto* b = std::get_if<bool>(&l)) return *b;
  if (const auto* f = std::get_if<long double>(&l)) {
    if (r.kind == TypeKind::Float32) return static_cast<double>(static_cast<float>(*f));
    if (r.kind == TypeKind::Float64) return static_cast<double>(*f);
    return float_json(*f);
  }
  const int64_t i = std::holds_alternative<int64_t>(l)
                        ? std::get<int64_t>(l)
                        : static_cast<int64_t>(std::get<uint64_t>(l));
  switch (r.kind) {
    case TypeKind::Char8:
    case TypeKind::Char16:
      return char_text(static_cast<uint32_t>(i));
    case TypeKind::Enum:
      if (const auto* en = enumerator_valued(r, i)) return en->name;
      return i;
    case TypeKind::Bitmask:
      return bitmask_json(r, static_cast<uint64_t>(i));
    case TypeKind::Float32:
    case TypeKind::Float64:
    case TypeKind::Float128:
      return static_cast<double>(i);
    default:
      if (std::holds_alternative<uint64_t>(l)) return std::get<uint64_t>(l);
      return i;
  }
}

Json default_of(const Type& t, int depth);

Json member_default(const Member& m, int depth) {
  if (m.optional) return nullptr;
  if (m.default_value && resolve(*m.type).kind != TypeKind::Array)
    return literal_json(*m.type, *m.default_value);
  return default_of(*m.type, depth + 1);
}

Json default_of(const Type& t, int depth) {
  if (depth > kMaxDepth) fail(Status::NestingTooDeep, t.name, "nesting too deep");
  const Type& r = resolve(t);
  switch (r.kind) {
    case TypeKind::Boolean:
      return false;
    case TypeKind::Char8:
    case TypeKind::Char16:
      return std::string(1, '\0');
    case TypeKind::Float32:
    case TypeKind::Float64:
    case TypeKind::Float128:
      return 0.0;
    case TypeKind::UInt64:
      return uint64_t{0};
    case TypeKind::String8:
    case TypeKind::String16:
      return "";
    case TypeKind::Sequence:
    case TypeKind::Bitmask:
      return Json::array();
    case TypeKind::Map:
      return Json::object();
    case TypeKind::Array: {
      Json v = default_of(*r.element, depth + 1);
      for (auto it = r.dims.rbegin(); it != r.dims.rend(); ++it)
        v = Json(Json::array_t(*it, v));
      return v;
    }
    case TypeKind::Enum:
      if (!r.enumerators.empty()) return r.enumerators.front().name;
      return 0;
    case TypeKind::Bitset: {
      Json o = Json::object();
      for (const Bitfield* f : all_bitfields(r)) {
        if (f->name.empty()) continue;
        if (f->holder == TypeKind::Boolean) {
          o[f->name] = false;
        } else {
          o[f->name] = 0;
        }
      }
      return o;
    }
    case TypeKind::Struct: {
      Json o = Json::object();
      for (const Member* m : all_members(r))
        o[m->name] = member_default(*m, depth);
      return o;
    }
    case TypeKind::Union: {
      Json o = Json::object();
      if (r.cases.empty()) {
        if (const auto f = free_label(r)) o["discriminator"] = label_json(*r.discriminator, *f);
        return o;
      }
      const UnionCase& first = r.cases.front();
      std::optional<int64_t> d;
      if (!first.labels.empty()) {
        d = first.labels.front();
      } else {
        d = free_label(r);
      }
      if (d) o["discriminator"] = label_json(*r.discriminator, *d);
      o[first.member.name] = default_of(*first.member.type, depth + 1);
      return o;
    }
    default:
      return 0;
  }
}

// Compares a JSON number with a @range bound: <0, 0, >0.
int compare(const Json& v, const Literal& l) {
  if (v.is_number_integer() &&
      (std::holds_alternative<int64_t>(l) || std::holds_alternative<uint64_t>(l))) {
    if (v.is_number_unsigned()) {
      const auto a = v.get<uint64_t>();
      if (const auto* b = std::get_if<uint64_t>(&l)) return a < *b ? -1 : a > *b ? 1 : 0;
      const int64_t b = std::get<int64_t>(l);
      if (b < 0) return 1;
      return a < static_cast<uint64_t>(b) ? -1 : a > static_cast<uint64_t>(b) ? 1 : 0;
    }
    const auto a = v.get<int64_t>();
    if (const auto* b = std::get_if<int64_t>(&l)) return a < *b ? -1 : a > *b ? 1 : 0;
    const uint64_t b = std::get<uint64_t>(l);
    if (a < 0) return -1;
    return static_cast<uint64_t>(a) < b ? -1 : static_cast<uint64_t>(a) > b ? 1 : 0;
  }
  long double a = 0;
  if (v.is_number()) {
    a = v.is_number_float()      ? v.get<double>()
        : v.is_number_unsigned() ? static_cast<long double>(v.get<uint64_t>())
                                 : static_cast<long double>(v.get<int64_t>());
  } else {
    return 0;  // not a number: the encoder refuses it with its own message
  }
  long double b = 0;
  if (const auto* f = std::get_if<long double>(&l)) b = *f;
  if (const auto* i = std::get_if<int64_t>(&l)) b = static_cast<long double>(*i);
  if (const auto* u = std::get_if<uint64_t>(&l)) b = static_cast<long double>(*u);
  return a < b ? -1 : a > b ? 1 : 0;
}

// Generated code checks @range/@min/@max of a plain member when writing and reading it.
void check_range(const Member& m, const Json& v, const std::string& where) {
  if (!(m.min || m.max) || m.optional || resolve(*m.type).kind == TypeKind::Array) return;
  Json num = v;
  const TypeKind k = resolve(*m.type).kind;
  if ((k == TypeKind::Char8 || k == TypeKind::Char16) && v.is_string()) {
    num = json_char(v, 0x10FFFF, where);
  }
  if ((m.min && compare(num, *m.min) < 0) || (m.max && compare(num, *m.max) > 0))
    fail(Status::OutOfRange, where, "value " + v.dump() + " out of range");
}

std::string member_path(const std::string& where, const std::string& name) {
  return where + "." + name;
}

// ============================================================================= encoding
class Encoder {
 public:
  Encoder(Encoding e, Endianness order, std::vector<std::byte>& out, size_t body_start)
      : e_(e), swap_(order != cdr::kNativeEndianness), out_(out), base_(body_start) {}

  void value(const Type& t, const Json& v, const std::string& where, int depth = 0) {
    if (depth > kMaxDepth) fail(Status::NestingTooDeep, where, "nesting too deep");
    const Type& r = resolve(t);
    if (is_primitive(r.kind)) {
      prim(r.kind, v, where);
      return;
    }
    switch (r.kind) {
      case TypeKind::String8:
        string8(r, v, where);
        break;
      case TypeKind::String16:
        string16(r, v, where);
        break;
      case TypeKind::Sequence:
        sequence(r, v, where, depth);
        break;
      case TypeKind::Array:
        array(r, v, where, 0, depth);
        break;
      case TypeKind::Map:
        map(r, v, where, depth);
        break;
      case TypeKind::Enum:
        number(static_cast<uint32_t>(json_enum(r, v, where)));
        break;
      case TypeKind::Bitmask:
        unsigned_in(holder_of_bits(r.bound), json_bitmask(r, v, where));
        break;
      case TypeKind::Bitset:
        bitset(r, v, where);
        break;
      case TypeKind::Struct:
        structure(r, v, depth);
        break;
      case TypeKind::Union:
        union_(r, v, depth);
        break;
      default:
        bad_json(where, std::string("cannot encode a ") + to_string(r.kind));
    }
  }

  size_t pad_to_4() {
    const size_t before = pos();
    origin_ = 0;
    align_abs(4);
    return pos() - before;
  }

 private:
  [[nodiscard]] size_t pos() const { return out_.size() - base_; }

  void align(size_t a) {
    const size_t rel = pos() - origin_;
    const size_t pad = (a - rel % a) % a;
    out_.insert(out_.end(), pad, std::byte{0});
  }
  void align_abs(size_t a) {
    const size_t pad = (a - pos() % a) % a;
    out_.insert(out_.end(), pad, std::byte{0});
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  template <class U>
  void number(U v) {
    align(e_ == Encoding::Xcdr2 && sizeof(U) > 4 ? 4 : sizeof(U));
    std::array<unsigned char, sizeof(U)> raw{};
    std::memcpy(raw.data(), &v, sizeof(U));
    if (swap_) std::reverse(raw.begin(), raw.end());
    bytes(raw.data(), sizeof(U));
  }
  void unsigned_in(TypeKind holder, uint64_t v) {
    switch (holder) {
      case TypeKind::UInt8:
        number(static_cast<uint8_t>(v));
        break;
      case TypeKind::UInt16:
        number(static_cast<uint16_t>(v));
        break;
      case TypeKind::UInt32:
        number(static_cast<uint32_t>(v));
        break;
      default:
        number(v);
    }
  }
  size_t reserve_u32() {
    align(4);
    const size_t at = out_.size();
    number(uint32_t{0});
    return at;
  }
  void fill_u32(size_t at, size_t n) {
    if (n > std::numeric_limits<uint32_t>::max())
      fail(Status::BoundExceeded, "", "a struct or collection over 4 GiB");
    auto v = static_cast<uint32_t>(n);
    std::array<unsigned char, 4> raw{};
    std::memcpy(raw.data(), &v, 4);
    if (swap_) std::reverse(raw.begin(), raw.end());
    std::memcpy(out_.data() + at, raw.data(), 4);
  }
  // The DHEADER of XCDR2 where `present`; kNone otherwise.
  size_t dheader(bool present) { return e_ == Encoding::Xcdr2 && present ? reserve_u32() : kNone; }
  void end_dheader(size_t at) {
    if (at != kNone) fill_u32(at, out_.size() - at - 4);
  }

  void prim(TypeKind k, const Json& v, const std::string& where) {
    switch (k) {
      case TypeKind::Boolean:
        if (!v.is_boolean()) bad_json(where, "expected true or false, got " + v.dump());
        number(static_cast<uint8_t>(v.get<bool>() ? 1 : 0));
        break;
      case TypeKind::Byte:
      case TypeKind::UInt8:
        number(json_integer<uint8_t>(v, where));
        break;
      case TypeKind::Int8:
        number(json_integer<int8_t>(v, where));
        break;
      case TypeKind::Int16:
        number(json_integer<int16_t>(v, where));
        break;
      case TypeKind::UInt16:
        number(json_integer<uint16_t>(v, where));
        break;
      case TypeKind::Int32:
        number(json_integer<int32_t>(v, where));
        break;
      case TypeKind::UInt32:
        number(json_integer<uint32_t>(v, where));
        break;
      case TypeKind::Int64:
        number(json_integer<int64_t>(v, where));
        break;
      case TypeKind::UInt64:
        number(json_integer<uint64_t>(v, where));
        break;
      case TypeKind::Float32:
        number(static_cast<float>(json_float(v, where)));
        break;
      case TypeKind::Float64:
        number(static_cast<double>(json_float(v, where)));
        break;
      case TypeKind::Float128: {
        const long double d = json_float(v, where);
        std::array<unsigned char, 16> raw{};
        std::memcpy(raw.data(), &d, cdr::kLongDoubleBytes);
        align(e_ == Encoding::Xcdr2 ? 4 : 8);
        if (swap_) std::reverse(raw.begin(), raw.end());
        bytes(raw.data(), 16);
        break;
      }
      case TypeKind::Char8:
        number(static_cast<uint8_t>(json_char(v, 0xFF, where)));
        break;
      case TypeKind::Char16: {
        if (e_ == Encoding::Xcdr2) {
          const uint32_t c = json_char(v, 0x10FFFF, where);
          if (c > 0xFFFF) fail(Status::OutOfRange, where, "a wchar beyond 16 bits (XCDR2)");
          number(static_cast<uint16_t>(c));
        } else {
          number(json_char(v, 0x10FFFF, where));
        }
        break;
      }
      default:
        break;
    }
  }

  void string8(const Type& t, const Json& v, const std::string& where) {
    if (!v.is_string()) bad_json(where, "expected a string, got " + v.dump());
    const auto& s = v.get_ref<const std::string&>();
    if (t.bound != 0 && s.size() > t.bound)
      fail(Status::BoundExceeded, where,
           "string of " + std::to_string(s.size()) + " elements over its bound of " +
               std::to_string(t.bound));
    if (s.find('\0') != std::string::npos) fail(Status::BadString, where, "a NUL character inside");
    if (s.size() >= std::numeric_limits<uint32_t>::max())
      fail(Status::BoundExceeded, where, "string longer than 2^32-2");
    number(static_cast<uint32_t>(s.size() + 1));
    bytes(s.data(), s.size());
    out_.push_back(std::byte{0});
  }

  void string16(const Type& t, const Json& v, const std::string& where) {
    if (!v.is_string()) bad_json(where, "expected a string, got " + v.dump());
    const auto cps = code_points(v.get_ref<const std::string&>());
    if (!cps) fail(Status::BadString, where, "a wstring that is not UTF-8");
    if (t.bound != 0 && cps->size() > t.bound)
      fail(Status::BoundExceeded, where,
           "wstring of " + std::to_string(cps->size()) + " elements over its bound of " +
               std::to_string(t.bound));
    if (e_ == Encoding::Xcdr1) {
      number(static_cast<uint32_t>(cps->size()));
      for (const uint32_t c : *cps)
        number(c);
      return;
    }
    std::vector<uint16_t> units;
    for (const uint32_t c : *cps) {
      if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        fail(Status::BadString, where, "a wstring character that is not Unicode");
      if (c < 0x10000) {
        units.push_back(static_cast<uint16_t>(c));
      } else {
        units.push_back(static_cast<uint16_t>(0xD800 + ((c - 0x10000) >> 10)));
        units.push_back(static_cast<uint16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
      }
    }
    number(static_cast<uint32_t>(2 * units.size()));
    for (const uint16_t u : units)
      number(u);
  }

  void sequence(const Type& t, const Json& v, const std::string& where, int depth) {
    if (!v.is_array()) bad_json(where, "expected an array, got " + std::string(v.type_name()));
    if (t.bound != 0 && v.size() > t.bound)
      fail(Status::BoundExceeded, where,
           "sequence of " + std::to_string(v.size()) + " elements over its bound of " +
               std::to_string(t.bound));
    const size_t mark = dheader(!is_bare(*t.element));
    number(static_cast<uint32_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i)
      element(*t.element, v[i], where, i, depth + 1);
    end_dheader(mark);
  }

  // One element of a sequence or array. A primitive one is written without building its path
  // ("where[i]") unless it fails: then again with it, for the message.
  void element(const Type& t, const Json& v, const std::string& where, size_t i, int depth) {
    if (is_primitive(resolve(t).kind)) {
      try {
        value(t, v, where, depth);
        return;
      } catch (const DataError&) {
      }
    }
    value(t, v, where + "[" + std::to_string(i) + "]", depth);
  }

  void array(const Type& t, const Json& v, const std::string& where, size_t level, int depth) {
    const uint32_t n = t.dims[level];
    if (!v.is_array() || v.size() != n)
      bad_json(where, "expected an array of " + std::to_string(n) + " elements, got " +
                          (v.is_array() ? std::to_string(v.size()) + " elements"
                                        : std::string(v.type_name())));
    const bool last = level + 1 == t.dims.size();
    const size_t mark = dheader(!(last && is_bare(*t.element)));
    for (uint32_t i = 0; i < n; ++i) {
      if (last) {
        element(*t.element, v[i], where, i, depth + 1);
      } else {
        array(t, v[i], where + "[" + std::to_string(i) + "]", level + 1, depth + 1);
      }
    }
    end_dheader(mark);
  }

  void map(const Type& t, const Json& v, const std::string& where, int depth);

  void bitset(const Type& b, const Json& v, const std::string& where) {
    if (!v.is_object()) bad_json(where, "expected an object of bitfields, got " + v.dump());
    const auto fields = all_bitfields(b);
    for (const auto& item : v.items()) {
      const std::string& name = item.key();
      if (std::none_of(fields.begin(), fields.end(),
                       [&](const Bitfield* f) { return !f->name.empty() && f->name == name; }))
        bad_json(where, "no bitfield '" + name + "' in bitset " + b.name);
    }
    uint64_t bits = 0;
    for (const Bitfield* f : fields) {
      if (f->name.empty()) continue;
      const auto it = v.find(f->name);
      if (it == v.end()) continue;
      const std::string w = member_path(b.name, f->name);
      uint64_t raw = 0;
      if (f->holder == TypeKind::Boolean) {
        if (!it->is_boolean()) bad_json(w, "expected true or false, got " + it->dump());
        raw = it->get<bool>() ? 1 : 0;
      } else if (f->holder == TypeKind::Int8 || f->holder == TypeKind::Int16 ||
                 f->holder == TypeKind::Int32 || f->holder == TypeKind::Int64) {
        const auto s = json_integer<int64_t>(*it, w);
        const int64_t hi = f->width >= 64 ? std::numeric_limits<int64_t>::max()
                                          : static_cast<int64_t>(cdr::low_bits(f->width - 1));
        if (s > hi || s < -hi - 1) fail(Status::OutOfRange, w, "value out of range");
        raw = static_cast<uint64_t>(s) & cdr::low_bits(f->width);
      } else {
        raw = json_integer<uint64_t>(*it, w);
        if ((raw & ~cdr::low_bits(f->width)) != 0)
          fail(Status::OutOfRange, w, "value out of range");
      }
      bits |= raw << f->offset;
    }
    unsigned_in(holder_of_bits(b.total_bits), bits);
  }

  void structure(const Type& s, const Json& v, int depth) {
    if (!v.is_object()) bad_json(s.name, "expected an object, got " + v.dump());
    const auto members = all_members(s);
    for (const auto& item : v.items()) {
      const std::string& name = item.key();
      if (std::none_of(members.begin(), members.end(),
                       [&](const Member* m) { return m->name == name; }))
        bad_json(s.name, "no member '" + name + "'");
    }
    const bool mut = s.extensibility == Extensibility::Mutable;
    const size_t mark = dheader(s.extensibility != Extensibility::Final);
    for (const Member* m : members) {
      const std::string where = member_path(s.name, m->name);
      const auto it = v.find(m->name);
      const bool present = it != v.end() && !it->is_null();
      if (m->optional) {
        if (mut) {
          if (present) param(*m, *it, where, depth);
        } else {
          optional(*m, present ? &*it : nullptr, where, depth);
        }
        continue;
      }
      const Json value_json = present ? *it : member_default(*m, depth);
      check_range(*m, value_json, where);
      if (mut) {
        param(*m, value_json, where, depth);
      } else {
        value(*m->type, value_json, where, depth + 1);
      }
    }
    if (mut && e_ == Encoding::Xcdr1) {
      align(4);
      number(cdr::kPidSentinel);
      number(uint16_t{0});
    }
    end_dheader(mark);
  }

  uint16_t pid_of(const Member& m, const std::string& where) const {
    if (m.id > 0x3F00) fail(Status::BadParameter, where, "member id above 0x3F00");
    return static_cast<uint16_t>(m.id | (m.must_understand ? cdr::kPidMustUnderstand : 0));
  }

  // XCDR1: a parameter header whose length is filled at the end; returns where the value
  // starts (the new alignment origin) and where its length goes.
  std::pair<size_t, size_t> param_begin(uint16_t pid) {
    align(4);
    number(pid);
    number(uint16_t{0});
    const size_t len_at = out_.size() - 2;
    origin_ = pos();
    return {out_.size(), len_at};
  }
  void param_end(std::pair<size_t, size_t> mark, const std::string& where) {
    const size_t len = out_.size() - mark.first;
    if (len > 0xFFFF) fail(Status::BadParameter, where, "member longer than 65535 bytes");
    auto l16 = static_cast<uint16_t>(len);
    std::array<unsigned char, 2> raw{};
    std::memcpy(raw.data(), &l16, 2);
    if (swap_) std::reverse(raw.begin(), raw.end());
    std::memcpy(out_.data() + mark.second, raw.data(), 2);
  }

  void optional(const Member& m, const Json* v, const std::string& where, int depth) {
    if (e_ == Encoding::Xcdr2) {
      number(static_cast<uint8_t>(v != nullptr ? 1 : 0));
      if (v != nullptr) value(*m.type, *v, where, depth + 1);
      return;
    }
    const auto mark = param_begin(pid_of(m, where));
    if (v != nullptr) value(*m.type, *v, where, depth + 1);
    param_end(mark, where);
  }

  // The EMHEADER length code generated code gives a member of this type (xcdr2::LengthCode).
  static uint32_t length_code(const Type& t) {
    const Type& r = resolve(t);
    auto of_size = [](size_t n) { return cdr::xcdr2::code_of_size(n); };
    switch (r.kind) {
      case TypeKind::String8:
      case TypeKind::String16:
        return cdr::xcdr2::kLcAlsoNextInt;
      case TypeKind::Sequence: {
        if (!is_bare(*r.element)) return cdr::xcdr2::kLcAlsoNextInt;
        const size_t s = prim_size(resolve(*r.element).kind, Encoding::Xcdr2);
        return s == 1   ? cdr::xcdr2::kLcAlsoNextInt
               : s == 4 ? cdr::xcdr2::kLcAlsoNextInt4
               : s == 8 ? cdr::xcdr2::kLcAlsoNextInt8
                        : cdr::xcdr2::kLcNextInt;
      }
      case TypeKind::Array:
        return r.dims.size() > 1 || !is_bare(*r.element) ? cdr::xcdr2::kLcAlsoNextInt
                                                         : cdr::xcdr2::kLcNextInt;
      case TypeKind::Enum:
        return of_size(4);
      case TypeKind::Bitmask:
        return of_size(prim_size(holder_of_bits(r.bound), Encoding::Xcdr2));
      default:
        if (is_primitive(r.kind)) return of_size(prim_size(r.kind, Encoding::Xcdr2));
        return cdr::xcdr2::kLcNextInt;  // structs, unions, bitsets, maps
    }
  }

  void param(const Member& m, const Json& v, const std::string& where, int depth) {
    if (e_ == Encoding::Xcdr1) {
      const auto mark = param_begin(pid_of(m, where));
      value(*m.type, v, where, depth + 1);
      param_end(mark, where);
      return;
    }
    if (m.id > cdr::xcdr2::kMaxMemberId)
      fail(Status::BadParameter, where, "member id above 0x0FFFFFFF");
    const uint32_t lc = length_code(*m.type);
    const uint32_t flag = m.must_understand || m.key ? cdr::xcdr2::kMustUnderstandFlag : 0;
    number(flag | (lc << 28) | m.id);
    const size_t mark = lc == cdr::xcdr2::kLcNextInt ? reserve_u32() : kNone;
    value(*m.type, v, where, depth + 1);
    end_dheader(mark);
  }

  void union_(const Type& u, const Json& v, int depth) {
    if (!v.is_object()) bad_json(u.name, "expected an object, got " + v.dump());
    const UnionCase* named = nullptr;
    const Json* member_value = nullptr;
    for (const auto& item : v.items()) {
      const std::string& name = item.key();
      const Json& mv = item.value();
      if (name == "discriminator") continue;
      const auto it = std::find_if(u.cases.begin(), u.cases.end(),
                                   [&](const UnionCase& c) { return c.member.name == name; });
      if (it == u.cases.end()) bad_json(u.name, "no member '" + name + "'");
      if (named != nullptr)
        bad_json(u.name,
                 "more than one member given ('" + named->member.name + "', '" + name + "')");
      named = &*it;
      member_value = &mv;
    }
    int64_t d = 0;
    if (const auto it = v.find("discriminator"); it != v.end()) {
      d = json_label(*u.discriminator, *it, member_path(u.name, "discriminator"));
    } else if (named != nullptr) {
      if (!named->labels.empty()) {
        d = named->labels.front();
      } else if (const auto f = free_label(u)) {
        d = *f;
      } else {
        bad_json(u.name, "no discriminator value selects the default member");
      }
    } else {
      bad_json(u.name, "expected \"discriminator\" or a member");
    }
    const UnionCase* selected = case_of(u, d);
    if (named != nullptr && named != selected)
      fail(Status::BadDiscriminator, u.name,
           "discriminator " + label_json(*u.discriminator, d).dump() + " does not select member '" +
               named->member.name + "'");
    const size_t mark = dheader(u.extensibility != Extensibility::Final);
    value(*u.discriminator, label_json(*u.discriminator, d), member_path(u.name, "discriminator"),
          depth + 1);
    if (selected != nullptr) {
      const std::string where = member_path(u.name, selected->member.name);
      if (member_value != nullptr) {
        value(*selected->member.type, *member_value, where, depth + 1);
      } else {
        value(*selected->member.type, default_of(*selected->member.type, depth + 1), where,
              depth + 1);
      }
    }
    end_dheader(mark);
  }

  Encoding e_;
  bool swap_;
  std::vector<std::byte>& out_;
  size_t base_;        // where the body starts in out_
  size_t origin_ = 0;  // XCDR1 alignment origin, relative to the body
};

// ----------------------------------------------------------------------------- map keys
// A map key in the order std::map of the generated key type keeps.
struct MapKey {
  int kind = 0;  // 0 signed, 1 unsigned, 2 text
  int64_t i = 0;
  uint64_t u = 0;
  std::string s;
  bool operator<(const MapKey& o) const {
    if (kind == 0) return i < o.i;
    if (kind == 1) return u < o.u;
    return s < o.s;
  }
};

std::optional<int64_t> parse_int(const std::string& s) {
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}
std::optional<uint64_t> parse_uint(const std::string& s) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// The JSON value of a map key given as object key text, and its place in the order.
std::pair<Json, MapKey> map_key(const Type& key, const std::string& text,
                                const std::string& where) {
  const Type& k = resolve(key);
  MapKey mk;
  switch (k.kind) {
    case TypeKind::String8:
    case TypeKind::String16:
      mk.kind = 2;
      mk.s = text;
      return {text, mk};
    case TypeKind::Char8: {
      const uint32_t c = json_char(text, 0xFF, where);
      mk.i = static_cast<int8_t>(static_cast<uint8_t>(c));  // char is signed here
      return {text, mk};
    }
    case TypeKind::Char16: {
      mk.i = json_char(text, 0x10FFFF, where);
      return {text, mk};
    }
    case TypeKind::Enum: {
      const Json j = parse_int(text) ? Json(*parse_int(text)) : Json(text);
      mk.i = json_enum(k, j, where);
      return {j, mk};
    }
    case TypeKind::UInt8:
    case TypeKind::Byte:
    case TypeKind::UInt16:
    case TypeKind::UInt32:
    case TypeKind::UInt64: {
      const auto u = parse_uint(text);
      if (!u) bad_json(where, "map key '" + text + "' is not an unsigned integer");
      mk.kind = 1;
      mk.u = *u;
      return {*u, mk};
    }
    default: {
      const auto i = parse_int(text);
      if (!i) bad_json(where, "map key '" + text + "' is not an integer");
      mk.i = *i;
      return {*i, mk};
    }
  }
}

std::string key_text(const Json& k) {
  if (k.is_string()) return k.get<std::string>();
  return k.dump();
}

void Encoder::map(const Type& t, const Json& v, const std::string& where, int depth) {
  if (!v.is_object()) bad_json(where, "expected an object, got " + std::string(v.type_name()));
  if (t.bound != 0 && v.size() > t.bound)
    fail(Status::BoundExceeded, where,
         "map of " + std::to_string(v.size()) + " elements over its bound of " +
             std::to_string(t.bound));
  std::map<MapKey, std::pair<Json, const Json*>> sorted;
  for (const auto& [text, mv] : v.items()) {
    auto [kj, mk] = map_key(*t.key, text, where);
    if (!sorted.emplace(mk, std::make_pair(std::move(kj), &mv)).second)
      fail(Status::DuplicateMapKey, where, "key '" + text + "' given twice");
  }
  const size_t mark = dheader(!(is_bare(*t.key) && is_bare(*t.element)));
  number(static_cast<uint32_t>(sorted.size()));
  for (const auto& [mk, entry] : sorted) {
    const std::string w = where + "[" + key_text(entry.first) + "]";
    value(*t.key, entry.first, w, depth + 1);
    value(*t.element, *entry.second, w, depth + 1);
  }
  end_dheader(mark);
}

// ============================================================================= decoding
class Decoder {
 public:
  Decoder(const std::byte* body, size_t size, Encoding e, Endianness order)
      : in_(body), end_(size), e_(e), swap_(order != cdr::kNativeEndianness) {}

  [[nodiscard]] size_t position() const { return pos_; }

  Json value(const Type& t, const std::string& where, int depth = 0) {
    if (depth > kMaxDepth) fail(Status::NestingTooDeep, where, "nesting too deep");
    const Type& r = resolve(t);
    if (is_primitive(r.kind)) return prim(r.kind, where);
    switch (r.kind) {
      case TypeKind::String8:
        return string8(r, where);
      case TypeKind::String16:
        return string16(r, where);
      case TypeKind::Sequence:
        return sequence(r, where, depth);
      case TypeKind::Array:
        return array(r, where, 0, depth);
      case TypeKind::Map:
        return map(r, where, depth);
      case TypeKind::Enum: {
        const auto raw = number<uint32_t>();
        const auto* en = enumerator_valued(r, static_cast<int64_t>(raw));
        if (raw > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) || en == nullptr)
          fail(Status::BadEnumerator, where,
               "bad enumerator " + std::to_string(raw) + " of " + r.name);
        return en->name;
      }
      case TypeKind::Bitmask: {
        const uint64_t bits = unsigned_in(holder_of_bits(r.bound));
        if (r.bound < 64 && (bits >> r.bound) != 0)
          fail(Status::BadBitmask, where, "bits beyond bit_bound");
        return bitmask_json(r, bits);
      }
      case TypeKind::Bitset:
        return bitset(r, where);
      case TypeKind::Struct:
        return structure(r, depth);
      case TypeKind::Union:
        return union_(r, depth);
      default:
        fail(Status::BadParameter, where, std::string("cannot decode a ") + to_string(r.kind));
    }
  }

 private:
  [[nodiscard]] size_t remaining() const { return pos_ < end_ ? end_ - pos_ : 0; }
  void align(size_t a) {
    const size_t rel = pos_ - origin_;
    const size_t pad = (a - rel % a) % a;
    if (pad > remaining()) fail(Status::Truncated, "", "truncated buffer");
    pos_ += pad;
  }
  void take(void* p, size_t n) {
    if (n > remaining()) fail(Status::Truncated, "", "truncated buffer");
    std::memcpy(p, in_ + pos_, n);
    pos_ += n;
  }
  template <class U>
  U number() {
    align(e_ == Encoding::Xcdr2 && sizeof(U) > 4 ? 4 : sizeof(U));
    std::array<unsigned char, sizeof(U)> raw{};
    take(raw.data(), sizeof(U));
    if (swap_) std::reverse(raw.begin(), raw.end());
    U v{};
    std::memcpy(&v, raw.data(), sizeof(U));
    return v;
  }
  uint64_t unsigned_in(TypeKind holder) {
    switch (holder) {
      case TypeKind::UInt8:
        return number<uint8_t>();
      case TypeKind::UInt16:
        return number<uint16_t>();
      case TypeKind::UInt32:
        return number<uint32_t>();
      default:
        return number<uint64_t>();
    }
  }
  // A length, checked against its bound and against what remains at `min_elem` bytes each.
  uint32_t length(uint64_t bound, size_t min_elem, const std::string& where, const char* what) {
    const auto n = number<uint32_t>();
    if (bound != 0 && n > bound)
      fail(Status::BoundExceeded, where,
           std::string(what) + " of " + std::to_string(n) + " elements over its bound of " +
               std::to_string(bound));
    if (cdr::mul_size(n, min_elem) > remaining())
      fail(Status::LengthTooLarge, where, std::string(what) + " length exceeds remaining bytes");
    return n;
  }
  // XCDR2 DHEADER: bounds what follows; returns the outer end to restore (kNone: none read).
  size_t enter(bool present, const std::string& where) {
    if (e_ != Encoding::Xcdr2 || !present) return kNone;
    const auto n = number<uint32_t>();
    if (n > remaining()) fail(Status::LengthTooLarge, where, "DHEADER exceeds remaining bytes");
    const size_t outer = end_;
    end_ = pos_ + n;
    return outer;
  }
  void leave(size_t outer) {
    if (outer == kNone) return;
    pos_ = end_;  // what a newer version of the type appended is skipped
    end_ = outer;
  }

  size_t min_size(const Type& t) const {
    const Type& r = resolve(t);
    if (is_primitive(r.kind)) return prim_size(r.kind, e_);
    if (r.kind == TypeKind::String8 || r.kind == TypeKind::String16 ||
        r.kind == TypeKind::Sequence || r.kind == TypeKind::Map)
      return 4;
    return 1;
  }

  Json prim(TypeKind k, const std::string& where) {
    switch (k) {
      case TypeKind::Boolean: {
        const auto b = number<uint8_t>();
        if (b > 1) fail(Status::BadBoolean, where, "bad boolean");
        return b != 0;
      }
      case TypeKind::Byte:
      case TypeKind::UInt8:
        return number<uint8_t>();
      case TypeKind::Int8:
        return number<int8_t>();
      case TypeKind::Int16:
        return number<int16_t>();
      case TypeKind::UInt16:
        return number<uint16_t>();
      case TypeKind::Int32:
        return number<int32_t>();
      case TypeKind::UInt32:
        return number<uint32_t>();
      case TypeKind::Int64:
        return number<int64_t>();
      case TypeKind::UInt64:
        return number<uint64_t>();
      case TypeKind::Float32:
        return float_json(number<float>());
      case TypeKind::Float64:
        return float_json(number<double>());
      case TypeKind::Float128: {
        align(e_ == Encoding::Xcdr2 ? 4 : 8);
        std::array<unsigned char, 16> raw{};
        take(raw.data(), 16);
        if (swap_) std::reverse(raw.begin(), raw.end());
        long double d = 0;
        std::memcpy(&d, raw.data(), cdr::kLongDoubleBytes);
        return float_json(d);
      }
      case TypeKind::Char8:
        return char_text(number<uint8_t>());
      case TypeKind::Char16:
        return char_text(e_ == Encoding::Xcdr2 ? number<uint16_t>() : number<uint32_t>());
      default:
        return nullptr;
    }
  }

  Json string8(const Type& t, const std::string& where) {
    const uint32_t n = length(0, 1, where, "string");
    if (n == 0) return "";  // tolerated: some writers encode "" without its NUL
    if (t.bound != 0 && n - 1 > t.bound)
      fail(Status::BoundExceeded, where, "string over its bound of " + std::to_string(t.bound));
    if (static_cast<char>(in_[pos_ + n - 1]) != '\0')
      fail(Status::BadString, where, "string not NUL-terminated");
    std::string s(reinterpret_cast<const char*>(in_ + pos_), n - 1);
    pos_ += n;
    if (s.find('\0') != std::string::npos)
      fail(Status::BadString, where, "a NUL character inside the string");
    return s;
  }

  Json string16(const Type& t, const std::string& where) {
    std::string s;
    if (e_ == Encoding::Xcdr1) {
      const uint32_t n = length(t.bound, 4, where, "wstring");
      for (uint32_t i = 0; i < n; ++i)
        append_utf8(s, number<uint32_t>());
      return s;
    }
    const uint32_t bytes = length(0, 1, where, "wstring");
    if (bytes % 2 != 0) fail(Status::BadString, where, "a wstring of an odd byte count");
    uint64_t chars = 0;
    for (uint32_t i = 0; i < bytes / 2; ++i) {
      const auto u = number<uint16_t>();
      uint32_t c = u;
      if (u >= 0xD800 && u <= 0xDBFF) {
        if (++i >= bytes / 2) fail(Status::BadString, where, "a lone surrogate");
        const auto lo = number<uint16_t>();
        if (lo < 0xDC00 || lo > 0xDFFF) fail(Status::BadString, where, "a lone surrogate");
        c = 0x10000 + ((uint32_t{u} - 0xD800) << 10) + (uint32_t{lo} - 0xDC00);
      } else if (u >= 0xDC00 && u <= 0xDFFF) {
        fail(Status::BadString, where, "a lone surrogate");
      }
      append_utf8(s, c);
      if (t.bound != 0 && ++chars > t.bound)
        fail(Status::BoundExceeded, where, "wstring over its bound of " + std::to_string(t.bound));
    }
    return s;
  }

  Json sequence(const Type& t, const std::string& where, int depth) {
    const size_t outer = enter(!is_bare(*t.element), where);
    const uint32_t n = length(t.bound, min_size(*t.element), where, "sequence");
    Json out = skim_ ? Json(nullptr) : Json::array();
    if (skim_ && skip_primitives(*t.element, n, where)) {
      leave(outer);
      return out;
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (skim_) {
        (void)value(*t.element, where, depth + 1);
      } else {
        out.push_back(value(*t.element, where, depth + 1));
      }
    }
    leave(outer);
    return out;
  }

  // Skimming (decode_key_of): n primitives that any bits make valid (booleans checked) are
  // stepped over without building them; false for other element types.
  bool skip_primitives(const Type& element, uint32_t n, const std::string& where) {
    const TypeKind k = resolve(element).kind;
    if (!is_primitive(k) || k == TypeKind::Float128 || k == TypeKind::Char16) return false;
    if (n == 0) return true;
    align(prim_align(k, e_));
    const size_t bytes = cdr::mul_size(n, prim_size(k, e_));
    if (bytes > remaining()) fail(Status::Truncated, where, "truncated buffer");
    if (k == TypeKind::Boolean) {
      for (size_t i = 0; i < bytes; ++i)
        if (static_cast<uint8_t>(in_[pos_ + i]) > 1) fail(Status::BadBoolean, where, "bad boolean");
    }
    pos_ += bytes;
    return true;
  }

  Json array(const Type& t, const std::string& where, size_t level, int depth) {
    const bool last = level + 1 == t.dims.size();
    const size_t outer = enter(!(last && is_bare(*t.element)), where);
    const uint32_t n = t.dims[level];
    // Each element takes at least a byte (an empty struct: none, and arrays of those are
    // bounded by the type, not by the buffer).
    Json out = skim_ ? Json(nullptr) : Json::array();
    if (skim_ && last && skip_primitives(*t.element, n, where)) {
      leave(outer);
      return out;
    }
    for (uint32_t i = 0; i < n; ++i) {
      Json v = last ? value(*t.element, where, depth + 1) : array(t, where, level + 1, depth + 1);
      if (!skim_) out.push_back(std::move(v));
    }
    leave(outer);
    return out;
  }

  Json map(const Type& t, const std::string& where, int depth) {
    const size_t outer = enter(!(is_bare(*t.key) && is_bare(*t.element)), where);
    const uint32_t n = length(t.bound, min_size(*t.key) + min_size(*t.element), where, "map");
    Json out = Json::object();
    std::set<std::string> seen;  // ordered_json looks keys up one by one
    for (uint32_t i = 0; i < n; ++i) {
      const Json k = value(*t.key, where, depth + 1);
      Json v = value(*t.element, where, depth + 1);
      std::string text = key_text(k);
      if (!seen.insert(text).second) fail(Status::DuplicateMapKey, where, "duplicate map key");
      // Appended as the vector it is: ordered_json's operator[] would search it again.
      auto& entries = static_cast<std::vector<std::pair<const std::string, Json>>&>(
          out.get_ref<Json::object_t&>());
      entries.emplace_back(std::move(text), std::move(v));
    }
    leave(outer);
    return out;
  }

  Json bitset(const Type& b, const std::string& where) {
    const uint64_t raw = unsigned_in(holder_of_bits(b.total_bits));
    if ((raw & ~cdr::low_bits(b.total_bits)) != 0)
      fail(Status::BadBitmask, where, "bits beyond the bitset's width");
    Json out = Json::object();
    for (const Bitfield* f : all_bitfields(b)) {
      if (f->name.empty()) continue;
      uint64_t v = (raw >> f->offset) & cdr::low_bits(f->width);
      if (f->holder == TypeKind::Boolean) {
        out[f->name] = v != 0;
      } else if (f->holder == TypeKind::Int8 || f->holder == TypeKind::Int16 ||
                 f->holder == TypeKind::Int32 || f->holder == TypeKind::Int64) {
        if (f->width < 64 && ((v >> (f->width - 1)) & 1) != 0) v |= ~cdr::low_bits(f->width);
        out[f->name] = static_cast<int64_t>(v);
      } else {
        out[f->name] = v;
      }
    }
    return out;
  }

  struct Param {
    uint32_t id = 0;
    bool must_understand = false;
    size_t value_end = 0;
  };

  // The next member of a mutable struct; nullopt at the sentinel (XCDR1) or where the
  // DHEADER ends (XCDR2).
  std::optional<Param> next_param(const std::string& where) {
    if (e_ == Encoding::Xcdr2) {
      if (pos_ + (4 - pos_ % 4) % 4 >= end_) return std::nullopt;
      const auto h = number<uint32_t>();
      const uint32_t lc = (h >> 28) & 7;
      Param p{h & cdr::xcdr2::kMaxMemberId, (h & cdr::xcdr2::kMustUnderstandFlag) != 0, 0};
      uint64_t len = 0;
      if (lc <= cdr::xcdr2::kLc8) {
        len = uint64_t{1} << lc;
      } else if (lc == cdr::xcdr2::kLcNextInt) {
        len = number<uint32_t>();
      } else {
        if (remaining() < 4) fail(Status::Truncated, where, "member length");
        uint32_t n = 0;
        std::memcpy(&n, in_ + pos_, 4);
        if (swap_) n = cdr::xcdr2::swap32(n);
        len = 4 + uint64_t{n} * (lc == cdr::xcdr2::kLcAlsoNextInt    ? 1
                                 : lc == cdr::xcdr2::kLcAlsoNextInt4 ? 4
                                                                     : 8);
      }
      if (len > remaining())
        fail(Status::LengthTooLarge, where, "member length exceeds remaining bytes");
      p.value_end = pos_ + static_cast<size_t>(len);
      return p;
    }
    align(4);
    const auto id = number<uint16_t>();
    const auto len = number<uint16_t>();
    if ((id & cdr::kPidIdMask) == cdr::kPidSentinel) return std::nullopt;
    if ((id & cdr::kPidIdMask) > 0x3F00) fail(Status::BadParameter, where, "reserved parameter id");
    if (len > remaining())
      fail(Status::LengthTooLarge, where, "parameter length exceeds remaining bytes");
    origin_ = pos_;
    return Param{static_cast<uint32_t>(id & cdr::kPidIdMask), (id & cdr::kPidMustUnderstand) != 0,
                 pos_ + len};
  }
  void end_param(const Param& p, const std::string& where) {
    if (pos_ > p.value_end) fail(Status::BadParameter, where, "value overruns its length");
    pos_ = p.value_end;
  }
  Json param_value(const Param& p, const Type& t, const std::string& where, int depth) {
    const size_t outer = end_;
    end_ = p.value_end;  // the value may not read past its member's length
    Json v = value(t, where, depth + 1);
    end_ = outer;
    end_param(p, where);
    return v;
  }

  Json structure(const Type& s, int depth) {
    const size_t outer = enter(s.extensibility != Extensibility::Final, s.name);
    const auto members = all_members(s);
    Json out = Json::object();
    if (s.extensibility == Extensibility::Mutable) {
      std::vector<std::optional<Json>> got(members.size());
      while (auto p = next_param(s.name)) {
        size_t i = 0;
        while (i < members.size() && members[i]->id != p->id)
          ++i;
        if (i == members.size()) {
          if (p->must_understand)
            fail(Status::MissingMustUnderstand, s.name,
                 "unknown must-understand member id " + std::to_string(p->id));
          end_param(*p, s.name);
          continue;
        }
        const Skim skim(*this, skimmed(*members[i], depth));
        got[i] = param_value(*p, *members[i]->type, member_path(s.name, members[i]->name), depth);
      }
      for (size_t i = 0; i < members.size(); ++i) {
        if (skimmed(*members[i], depth)) continue;
        Json v = got[i] ? std::move(*got[i]) : member_default(*members[i], depth);
        check_range(*members[i], v, member_path(s.name, members[i]->name));
        out[members[i]->name] = std::move(v);
      }
    } else {
      for (const Member* m : members) {
        const std::string where = member_path(s.name, m->name);
        const bool skim_this = skimmed(*m, depth);
        const Skim skim(*this, skim_this);
        if (m->optional) {
          Json v = optional(*m, where, depth);
          if (!skim_this) out[m->name] = std::move(v);
          continue;
        }
        Json v = value(*m->type, where, depth + 1);
        if (skim_this) continue;
        check_range(*m, v, where);
        out[m->name] = std::move(v);
      }
    }
    leave(outer);
    return out;
  }

  Json optional(const Member& m, const std::string& where, int depth) {
    if (e_ == Encoding::Xcdr2) {
      const auto b = number<uint8_t>();
      if (b > 1) fail(Status::BadBoolean, where, "bad presence flag");
      return b != 0 ? value(*m.type, where, depth + 1) : Json(nullptr);
    }
    const auto p = next_param(where);
    if (!p || p->id != m.id) fail(Status::BadParameter, where, "optional member header");
    Json v = pos_ == p->value_end ? Json(nullptr) : param_value(*p, *m.type, where, depth);
    end_param(*p, where);
    return v;
  }

  Json union_(const Type& u, int depth) {
    const size_t outer = enter(u.extensibility != Extensibility::Final, u.name);
    const std::string dwhere = member_path(u.name, "discriminator");
    const Json dj = value(*u.discriminator, dwhere, depth + 1);
    const int64_t d = json_label(*u.discriminator, dj, dwhere);
    Json out = Json::object();
    out["discriminator"] = dj;
    if (const UnionCase* c = case_of(u, d)) {
      out[c->member.name] = value(*c->member.type, member_path(u.name, c->member.name), depth + 1);
    }
    leave(outer);
    return out;
  }

  // decode_key_of: the top-level struct's members outside the key are read (checked) but
  // skimmed — not kept, collections of primitives stepped over.
  bool skimmed(const Member& m, int depth) const {
    return skim_ || (keep_ != nullptr && depth == 0 && keep_->count(&m) == 0);
  }
  struct Skim {
    Skim(Decoder& d, bool on) : d_(d), was_(d.skim_) { d.skim_ = on; }
    ~Skim() { d_.skim_ = was_; }
    Skim(const Skim&) = delete;
    Skim& operator=(const Skim&) = delete;
    Decoder& d_;
    bool was_;
  };

 public:
  // Keep only these top-level members (the key's); null: keep all.
  void keep_only(const std::set<const Member*>* members) { keep_ = members; }

 private:
  const std::byte* in_;
  size_t pos_ = 0;
  size_t end_;
  size_t origin_ = 0;  // XCDR1 alignment origin
  Encoding e_;
  bool swap_;
  bool skim_ = false;
  const std::set<const Member*>* keep_ = nullptr;
};

// ----------------------------------------------------------------------------- max size
// Highest XCDR1 end offset of a value starting at `off` (cdr::MaxSize), for the key hash.
size_t max_size_at(const Type& t, size_t off, int depth);

size_t worst_element(const Type& t, int depth) {
  size_t worst = 0;
  for (size_t r = 0; r < 8; ++r) {
    const size_t end = max_size_at(t, r, depth + 1);
    if (end == cdr::kUnbounded) return cdr::kUnbounded;
    worst = std::max(worst, end - r);
  }
  return worst;
}

size_t max_array_level(const Type& t, size_t level, size_t off, int depth) {
  const uint32_t n = t.dims[level];
  const bool last = level + 1 == t.dims.size();
  const Type& e = resolve(*t.element);
  if (last && is_primitive(e.kind))
    return cdr::add_size(cdr::align_to(off, prim_align(e.kind, Encoding::Xcdr1)),
                         static_cast<size_t>(n) * prim_size(e.kind, Encoding::Xcdr1));
  auto element_at = [&](size_t o) {
    return last ? max_size_at(*t.element, o, depth + 1)
                : max_array_level(t, level + 1, o, depth + 1);
  };
  const size_t first = element_at(off);
  size_t worst = 0;
  for (size_t r = 0; r < 8; ++r) {
    const size_t end = element_at(r);
    if (end == cdr::kUnbounded) return cdr::kUnbounded;
    worst = std::max(worst, end - r);
  }
  return cdr::add_size(first, cdr::mul_size(n - 1, worst));
}

size_t max_size_at(const Type& t, size_t off, int depth) {
  if (depth > 64 || off == cdr::kUnbounded) return cdr::kUnbounded;
  const Type& r = resolve(t);
  if (is_primitive(r.kind))
    return cdr::add_size(cdr::align_to(off, prim_align(r.kind, Encoding::Xcdr1)),
                         prim_size(r.kind, Encoding::Xcdr1));
  switch (r.kind) {
    case TypeKind::String8:
      return r.bound == 0 ? cdr::kUnbounded
                          : cdr::add_size(cdr::add_size(cdr::align_to(off, 4), 4), r.bound + 1);
    case TypeKind::String16:
      return r.bound == 0 ? cdr::kUnbounded
                          : cdr::add_size(cdr::add_size(cdr::align_to(off, 4), 4),
                                          cdr::mul_size(r.bound, 4));
    case TypeKind::Enum:
      return cdr::add_size(cdr::align_to(off, 4), 4);
    case TypeKind::Bitmask:
    case TypeKind::Bitset: {
      const TypeKind h = holder_of_bits(r.kind == TypeKind::Bitmask ? r.bound : r.total_bits);
      return cdr::add_size(cdr::align_to(off, prim_align(h, Encoding::Xcdr1)),
                           prim_size(h, Encoding::Xcdr1));
    }
    case TypeKind::Sequence: {
      if (r.bound == 0) return cdr::kUnbounded;
      const size_t body = cdr::add_size(cdr::align_to(off, 4), 4);
      const Type& e = resolve(*r.element);
      if (is_primitive(e.kind))
        return cdr::add_size(cdr::align_to(body, prim_align(e.kind, Encoding::Xcdr1)),
                             cdr::mul_size(r.bound, prim_size(e.kind, Encoding::Xcdr1)));
      return cdr::add_size(body, cdr::mul_size(r.bound, worst_element(*r.element, depth)));
    }
    case TypeKind::Array:
      return max_array_level(r, 0, off, depth);
    case TypeKind::Map: {
      if (r.bound == 0) return cdr::kUnbounded;
      size_t worst = 0;
      for (size_t o = 0; o < 8; ++o) {
        const size_t k = max_size_at(*r.key, o, depth + 1);
        const size_t end = k == cdr::kUnbounded ? k : max_size_at(*r.element, k, depth + 1);
        if (end == cdr::kUnbounded) return cdr::kUnbounded;
        worst = std::max(worst, end - o);
      }
      return cdr::add_size(cdr::add_size(cdr::align_to(off, 4), 4), cdr::mul_size(r.bound, worst));
    }
    case TypeKind::Struct: {
      const bool mut = r.extensibility == Extensibility::Mutable;
      for (const Member* m : all_members(r)) {
        if (mut || m->optional) {
          off = cdr::add_size(cdr::add_size(cdr::align_to(off, 4), 4),
                              max_size_at(*m->type, 0, depth + 1));
        } else {
          off = max_size_at(*m->type, off, depth + 1);
        }
      }
      if (mut) off = cdr::add_size(cdr::align_to(off, 4), 4);
      return off;
    }
    case TypeKind::Union: {
      off = max_size_at(*r.discriminator, off, depth + 1);
      size_t end = off;
      for (const auto& c : r.cases)
        end = std::max(end, max_size_at(*c.member.type, off, depth + 1));
      return end;
    }
    default:
      return cdr::kUnbounded;
  }
}

const Type& topic_type(const Type& type) {
  const Type& r = resolve(type);
  if (r.kind != TypeKind::Struct && r.kind != TypeKind::Union)
    throw std::invalid_argument("'" + type.name + "' is a " + to_string(r.kind) +
                                ", not a struct or union");
  return r;
}

// A reader of the body of an encapsulated sample of `r`, its header checked: DataError when
// it is short or names a representation that is not one of the type's.
Decoder reader_of(const Type& r, std::span<const std::byte> in) {
  if (in.size() < cdr::kEncapsulationSize)
    throw DataError(Status::Truncated, "shorter than the encapsulation header");
  const auto kind = static_cast<uint8_t>(in[1]);
  const Encoding e = kind <= 3 ? Encoding::Xcdr1 : Encoding::Xcdr2;
  const Endianness order = (kind & 1) != 0 ? Endianness::Little : Endianness::Big;
  if (static_cast<uint8_t>(in[0]) != 0 || kind != representation_id(r, e, order) ||
      (r.representations & cdr::bit_of(e)) == 0) {
    throw DataError(Status::BadEncapsulation,
                    "representation " + std::to_string(static_cast<int>(in[0])) + "/" +
                        std::to_string(kind) + " is not one of " + r.name + "'s");
  }
  return Decoder(in.data() + cdr::kEncapsulationSize, in.size() - cdr::kEncapsulationSize, e,
                 order);
}

// Writes the key members of `sample` (a member left out: its default) in key order; returns
// their largest XCDR1 end offset (cdr::MaxSize), which decides whether a key hash is hashed.
size_t write_key_members(Encoder& enc, const Type& r, const Json& sample,
                         const std::vector<std::vector<const Member*>>& paths) {
  size_t max = 0;
  for (const auto& path : paths) {
    const Json* v = &sample;
    Json fallback;
    std::string where = r.name;
    for (const Member* m : path) {
      where = member_path(where, m->name);
      if (v->is_object() && v->contains(m->name) && !(*v)[m->name].is_null()) {
        v = &(*v)[m->name];
      } else {
        fallback = member_default(*m, 0);
        v = &fallback;
      }
    }
    enc.value(*path.back()->type, *v, where);
    max = max_size_at(*path.back()->type, max, 0);
  }
  return max;
}

}  // namespace

std::vector<std::byte> encode(const Type& type, const Json& sample, cdr::Encoding encoding,
                              cdr::Endianness order) {
  const Type& r = topic_type(type);
  if ((r.representations & cdr::bit_of(encoding)) == 0)
    throw std::invalid_argument(std::string(encoding == Encoding::Xcdr2 ? "XCDR2" : "XCDR1") +
                                " is not among the data representations of '" + r.name + "'");
  std::vector<std::byte> out(cdr::kEncapsulationSize, std::byte{0});
  Encoder enc(encoding, order, out, cdr::kEncapsulationSize);
  enc.value(r, sample, r.name);
  out[1] = std::byte{representation_id(r, encoding, order)};
  if (encoding == Encoding::Xcdr2) out[3] = static_cast<std::byte>(enc.pad_to_4());
  return out;
}

std::vector<std::byte> encode(const Type& type, const Json& sample) {
  return encode(type, sample, default_encoding(type));
}

Json decode(const Type& type, std::span<const std::byte> in) {
  const Type& r = topic_type(type);
  Decoder dec = reader_of(r, in);
  return dec.value(r, r.name);
}

Json decode_key_of(const Type& type, std::span<const std::byte> in) {
  const Type& r = topic_type(type);
  std::set<const Member*> keep;
  if (r.kind == TypeKind::Struct)
    for (const auto& path : key_paths(r))
      keep.insert(path.front());
  Decoder dec = reader_of(r, in);
  dec.keep_only(&keep);
  Json v = dec.value(r, r.name);
  return keep.empty() ? Json(nullptr) : v;
}

Json default_value(const Type& type) {
  return default_of(type, 0);
}

cdr::KeyHash key_hash(const Type& type, const Json& sample) {
  const Type& r = resolve(type);
  const auto paths = key_paths(r);
  cdr::KeyHash hash{};
  if (paths.empty()) return hash;
  std::vector<std::byte> out;
  Encoder enc(Encoding::Xcdr1, Endianness::Big, out, 0);
  const size_t max = write_key_members(enc, r, sample, paths);
  if (max <= 16) {
    std::memcpy(hash.data(), out.data(), out.size());
    return hash;
  }
  return cdr::md5(out);
}

std::vector<std::byte> encode_key(const Type& type, const Json& sample, cdr::Encoding encoding,
                                  cdr::Endianness order) {
  const Type& r = topic_type(type);
  if ((r.representations & cdr::bit_of(encoding)) == 0)
    throw std::invalid_argument(std::string(encoding == Encoding::Xcdr2 ? "XCDR2" : "XCDR1") +
                                " is not among the data representations of '" + r.name + "'");
  const auto paths = key_paths(r);
  if (paths.empty()) throw std::invalid_argument("'" + r.name + "' has no key");
  std::vector<std::byte> out(cdr::kEncapsulationSize, std::byte{0});
  Encoder enc(encoding, order, out, cdr::kEncapsulationSize);
  (void)write_key_members(enc, r, sample, paths);
  out[1] = std::byte{representation_id(r, encoding, order)};
  // Padded to 4 with the count in the options in both encodings, as Cyclone DDS writes keys.
  out[3] = static_cast<std::byte>(enc.pad_to_4());
  return out;
}

Json decode_key(const Type& type, std::span<const std::byte> in) {
  const Type& r = topic_type(type);
  const auto paths = key_paths(r);
  if (paths.empty()) throw DataError(Status::BadParameter, "'" + r.name + "' has no key");
  Json sample = default_of(r, 0);
  Decoder dec = reader_of(r, in);
  for (const auto& path : paths) {
    Json* v = &sample;
    std::string where = r.name;
    for (const Member* m : path) {
      where = member_path(where, m->name);
      v = &(*v)[m->name];
    }
    *v = dec.value(*path.back()->type, where);
  }
  return sample;
}

}  // namespace spindle::types

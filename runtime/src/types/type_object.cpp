// XTypes 1.3 TypeInformation and TypeMapping for the dynamic type model (type_object.hpp).
//
// Writing: every named type reachable from the root gets a MINIMAL and a COMPLETE TypeObject,
// serialized XCDR2 little-endian (the layouts of DDS-XTypes 1.3 Annex B, with the
// extensibility Cyclone DDS gives each of its structs, since its bytes are the reference);
// its identifier is EK_MINIMAL/EK_COMPLETE and the first 14 bytes of the MD5 of those bytes.
// Types are hashed dependencies first (Tarjan's strongly connected components come out in
// that order). Types that reach each other in a cycle cannot be hashed that way; the spec
// (7.3.4.9.3) names them by a TI_STRONGLY_CONNECTED_COMPONENT identifier {hash of the
// component, its length, the type's index in it} without fixing what the hash covers. Ours:
// the component's types ordered by scoped name, serialized as one TypeObjectSeq in which their
// references to each other carry an all-zero hash; the MD5 of that. (Cyclone DDS 0.10.2's
// idlc aborts on recursive types, so there is nothing to match.)
//
// Where the model and Cyclone's idlc part ways, we follow the spec and say so here:
//  - int8/uint8 are TK_INT8/TK_UINT8 (1.3); Cyclone 0.10.2 writes TK_CHAR8/TK_BYTE for them.
//  - union members keep the model's ids (the spec numbers them from 1, as idlc does); Cyclone
//    0.10.2 numbers them from 0 unless @id says otherwise.
//  - struct/union flags say the extensibility the model encodes with. An unannotated struct
//    is APPENDABLE in our model (the XTypes default) and FINAL in Cyclone 0.10.2, so only
//    annotated types give Cyclone's bytes.
//  - wchar, wstring, long double, maps, bitsets and recursive types: Cyclone 0.10.2's idlc
//    refuses or crashes on them; we write them as Annex B says. A bitset's TypeObject has no
//    base (1.3 dropped it), so a derived bitset is written with its base's fields first and
//    comes back without a base; padding is a field with an empty name.
//  - @default and @hashid are not carried (the model keeps no hashid; @default would need a
//    custom annotation type); @min/@max/@range go in AppliedBuiltinMemberAnnotations, as idlc
//    writes them (integers up to 32 bits as TK_INT32 values, whatever the member's width).
//
// Reading (load_type_info) takes bytes from the network: every length is checked against
// what is left before it is used, nesting of identifiers is bounded, named types are built
// without recursion, and everything is built in a scratch library first, checked (no type
// that contains itself by value, bases and discriminators of the right kind, hashes that
// match) and only then copied into the caller's library.
#include <spindle/types/type_object.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

namespace spindle::types {

namespace {

// ------------------------------------------------------------------------- constants
constexpr uint8_t EK_MINIMAL = 0xF1;
constexpr uint8_t EK_COMPLETE = 0xF2;
constexpr uint8_t EK_BOTH = 0xF3;

constexpr uint8_t TK_NONE = 0x00;
constexpr uint8_t TK_BOOLEAN = 0x01;
constexpr uint8_t TK_BYTE = 0x02;
constexpr uint8_t TK_INT16 = 0x03;
constexpr uint8_t TK_INT32 = 0x04;
constexpr uint8_t TK_INT64 = 0x05;
constexpr uint8_t TK_UINT16 = 0x06;
constexpr uint8_t TK_UINT32 = 0x07;
constexpr uint8_t TK_UINT64 = 0x08;
constexpr uint8_t TK_FLOAT32 = 0x09;
constexpr uint8_t TK_FLOAT64 = 0x0A;
constexpr uint8_t TK_FLOAT128 = 0x0B;
constexpr uint8_t TK_INT8 = 0x0C;
constexpr uint8_t TK_UINT8 = 0x0D;
constexpr uint8_t TK_CHAR8 = 0x10;
constexpr uint8_t TK_CHAR16 = 0x11;
constexpr uint8_t TK_STRING8 = 0x20;
constexpr uint8_t TK_ALIAS = 0x30;
constexpr uint8_t TK_ENUM = 0x40;
constexpr uint8_t TK_BITMASK = 0x41;
constexpr uint8_t TK_STRUCTURE = 0x51;
constexpr uint8_t TK_UNION = 0x52;
constexpr uint8_t TK_BITSET = 0x53;

constexpr uint8_t TI_STRING8_SMALL = 0x70;
constexpr uint8_t TI_STRING8_LARGE = 0x71;
constexpr uint8_t TI_STRING16_SMALL = 0x72;
constexpr uint8_t TI_STRING16_LARGE = 0x73;
constexpr uint8_t TI_PLAIN_SEQUENCE_SMALL = 0x80;
constexpr uint8_t TI_PLAIN_SEQUENCE_LARGE = 0x81;
constexpr uint8_t TI_PLAIN_ARRAY_SMALL = 0x90;
constexpr uint8_t TI_PLAIN_ARRAY_LARGE = 0x91;
constexpr uint8_t TI_PLAIN_MAP_SMALL = 0xA0;
constexpr uint8_t TI_PLAIN_MAP_LARGE = 0xA1;
constexpr uint8_t TI_STRONGLY_CONNECTED_COMPONENT = 0xB0;

// MemberFlag / TypeFlag bits
constexpr uint16_t TRY_CONSTRUCT1 = 1u << 0;
constexpr uint16_t IS_EXTERNAL = 1u << 2;
constexpr uint16_t IS_OPTIONAL = 1u << 3;
constexpr uint16_t IS_MUST_UNDERSTAND = 1u << 4;
constexpr uint16_t IS_KEY = 1u << 5;
constexpr uint16_t IS_DEFAULT = 1u << 6;
constexpr uint16_t IS_FINAL = 1u << 0;
constexpr uint16_t IS_APPENDABLE = 1u << 1;
constexpr uint16_t IS_MUTABLE = 1u << 2;
constexpr uint16_t IS_NESTED = 1u << 3;

constexpr uint32_t kInfoMinimal = 0x1001;
constexpr uint32_t kInfoComplete = 0x1002;

using Hash = std::array<uint8_t, 14>;

std::array<uint8_t, 16> md5(const uint8_t* data, size_t n) {
  std::array<uint8_t, 16> out{};
  unsigned len = 0;
  if (EVP_Digest(data, n, out.data(), &len, EVP_md5(), nullptr) != 1 || len != 16)
    throw std::runtime_error("OpenSSL MD5 failed");
  return out;
}

std::array<uint8_t, 4> name_hash(const std::string& name) {
  const auto h = md5(reinterpret_cast<const uint8_t*>(name.data()), name.size());
  return {h[0], h[1], h[2], h[3]};
}

std::optional<uint8_t> primitive_tk(TypeKind k) {
  switch (k) {
    case TypeKind::Boolean:
      return TK_BOOLEAN;
    case TypeKind::Byte:
      return TK_BYTE;
    case TypeKind::Int8:
      return TK_INT8;
    case TypeKind::UInt8:
      return TK_UINT8;
    case TypeKind::Int16:
      return TK_INT16;
    case TypeKind::UInt16:
      return TK_UINT16;
    case TypeKind::Int32:
      return TK_INT32;
    case TypeKind::UInt32:
      return TK_UINT32;
    case TypeKind::Int64:
      return TK_INT64;
    case TypeKind::UInt64:
      return TK_UINT64;
    case TypeKind::Float32:
      return TK_FLOAT32;
    case TypeKind::Float64:
      return TK_FLOAT64;
    case TypeKind::Float128:
      return TK_FLOAT128;
    case TypeKind::Char8:
      return TK_CHAR8;
    case TypeKind::Char16:
      return TK_CHAR16;
    default:
      return std::nullopt;
  }
}

std::optional<TypeKind> kind_of_tk(uint8_t tk) {
  for (int k = 0; k <= static_cast<int>(TypeKind::Char16); ++k) {
    const auto kind = static_cast<TypeKind>(k);
    if (primitive_tk(kind) == tk) return kind;
  }
  return std::nullopt;
}

uint16_t ext_flags(const Type& t) {
  uint16_t f = t.extensibility == Extensibility::Final        ? IS_FINAL
               : t.extensibility == Extensibility::Appendable ? IS_APPENDABLE
                                                              : IS_MUTABLE;
  if (t.nested) f |= IS_NESTED;
  return f;
}

// ------------------------------------------------------------------------- XCDR2 writer
// Alignment is relative to the start of the buffer and at most 4 (XCDR2).
class Out {
 public:
  std::vector<uint8_t> b;

  void align(size_t n) {
    while (b.size() % n != 0)
      b.push_back(0);
  }
  void u8(uint8_t v) { b.push_back(v); }
  void u16(uint16_t v) {
    align(2);
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(v >> 8));
  }
  void u32(uint32_t v) {
    align(4);
    for (int i = 0; i < 4; ++i)
      b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size() + 1));
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
  }
  void bytes(const uint8_t* p, size_t n) { b.insert(b.end(), p, p + n); }
  // A DHEADER: returns where to patch in the length once the body is written.
  size_t open() {
    u32(0);
    return b.size();
  }
  void close(size_t start) {
    const auto n = static_cast<uint32_t>(b.size() - start);
    for (size_t i = 0; i < 4; ++i)
      b[start - 4 + i] = static_cast<uint8_t>(n >> (8 * i));
  }
};

// ------------------------------------------------------------------------- generation
struct Ident {
  bool scc = false;
  uint8_t ek = 0;
  Hash hash{};
  int32_t scc_length = 0;
  int32_t scc_index = 0;
};

bool fully_descriptive(const Type& t, int depth = 0) {
  if (depth > 64) return false;
  switch (t.kind) {
    case TypeKind::Sequence:
    case TypeKind::Array:
      return fully_descriptive(*t.element, depth + 1);
    case TypeKind::Map:
      return fully_descriptive(*t.key, depth + 1) && fully_descriptive(*t.element, depth + 1);
    default:
      return !is_named(t.kind);
  }
}

// The named types `t` refers to directly (through anonymous collections), in the order its
// TypeObject mentions them.
void named_refs(const Type* t, std::vector<const Type*>& out, bool top = true) {
  if (t == nullptr) return;
  if (!top) {
    if (is_named(t->kind)) {
      out.push_back(t);
      return;
    }
  }
  switch (t->kind) {
    case TypeKind::Sequence:
    case TypeKind::Array:
    case TypeKind::Alias:
      named_refs(t->element, out, false);
      break;
    case TypeKind::Map:
      named_refs(t->key, out, false);
      named_refs(t->element, out, false);
      break;
    case TypeKind::Struct:
      if (top) {
        named_refs(t->base, out, false);
        for (const auto& m : t->members)
          named_refs(m.type, out, false);
      }
      break;
    case TypeKind::Union:
      if (top) {
        named_refs(t->discriminator, out, false);
        for (const auto& c : t->cases)
          named_refs(c.member.type, out, false);
      }
      break;
    default:
      break;
  }
}

class Gen {
 public:
  explicit Gen(const Type& root) : root_(root) {}

  TypeInfo run() {
    if (!is_named(root_.kind))
      throw std::invalid_argument(std::string("a ") + to_string(root_.kind) +
                                  " has no type information of its own (only named types do)");
    order_deps();
    tarjan(&root_);
    for (const auto& comp : sccs_)
      hash_component(comp);
    TypeInfo out;
    out.information = to_bytes(information());
    out.mapping = to_bytes(mapping());
    return out;
  }

 private:
  static std::vector<std::byte> to_bytes(const Out& o) {
    std::vector<std::byte> v(o.b.size());
    std::memcpy(v.data(), o.b.data(), o.b.size());
    return v;
  }

  // Dependencies in the order Cyclone lists them: depth first, in the order of first mention.
  void order_deps() {
    std::set<const Type*> seen{&root_};
    std::function<void(const Type*)> visit = [&](const Type* t) {
      std::vector<const Type*> refs;
      named_refs(t, refs);
      for (const Type* r : refs) {
        if (!seen.insert(r).second) continue;
        deps_.push_back(r);
        visit(r);
      }
    };
    visit(&root_);
  }

  void tarjan(const Type* t) {
    index_[t] = low_[t] = next_index_++;
    stack_.push_back(t);
    on_stack_.insert(t);
    std::vector<const Type*> refs;
    named_refs(t, refs);
    for (const Type* r : refs) {
      if (r == t) self_loop_.insert(t);
      if (!index_.contains(r)) {
        tarjan(r);
        low_[t] = std::min(low_[t], low_[r]);
      } else if (on_stack_.contains(r)) {
        low_[t] = std::min(low_[t], index_[r]);
      }
    }
    if (low_[t] == index_[t]) {
      std::vector<const Type*> comp;
      const Type* x = nullptr;
      do {
        x = stack_.back();
        stack_.pop_back();
        on_stack_.erase(x);
        comp.push_back(x);
      } while (x != t);
      sccs_.push_back(std::move(comp));
    }
  }

  void hash_component(std::vector<const Type*> comp) {
    for (const uint8_t ek : {EK_MINIMAL, EK_COMPLETE}) {
      auto& ids = ids_[ek == EK_MINIMAL ? 0 : 1];
      auto& objs = objects_[ek == EK_MINIMAL ? 0 : 1];
      if (comp.size() == 1 && !self_loop_.contains(comp[0])) {
        const Type* t = comp[0];
        Out o;
        write_object(o, *t, ek);
        const auto h = md5(o.b.data(), o.b.size());
        Ident id;
        id.ek = ek;
        std::copy_n(h.begin(), 14, id.hash.begin());
        ids[t] = id;
        objs[t] = std::move(o.b);
        continue;
      }
      std::sort(comp.begin(), comp.end(),
                [](const Type* a, const Type* b) { return a->name < b->name; });
      for (size_t i = 0; i < comp.size(); ++i) {
        Ident id;
        id.scc = true;
        id.ek = ek;
        id.scc_length = static_cast<int32_t>(comp.size());
        id.scc_index = static_cast<int32_t>(i);
        ids[comp[i]] = id;
      }
      Out seq;
      const size_t d = seq.open();
      seq.u32(static_cast<uint32_t>(comp.size()));
      for (const Type* t : comp) {
        seq.align(4);
        write_object(seq, *t, ek);
      }
      seq.close(d);
      const auto h = md5(seq.b.data(), seq.b.size());
      for (const Type* t : comp) {
        std::copy_n(h.begin(), 14, ids[t].hash.begin());
      }
      for (const Type* t : comp) {
        Out o;
        write_object(o, *t, ek);
        objs[t] = std::move(o.b);
      }
    }
  }

  void write_ident(Out& o, const Ident& id) {
    if (!id.scc) {
      o.u8(id.ek);
      o.bytes(id.hash.data(), id.hash.size());
      return;
    }
    o.u8(TI_STRONGLY_CONNECTED_COMPONENT);
    const size_t d = o.open();  // StronglyConnectedComponentId is appendable
    o.u8(id.ek);
    o.bytes(id.hash.data(), id.hash.size());
    o.i32(id.scc_length);
    o.i32(id.scc_index);
    o.close(d);
  }

  void write_ti(Out& o, const Type& t, uint8_t ek) {
    if (const auto tk = primitive_tk(t.kind)) {
      o.u8(*tk);
      return;
    }
    const uint8_t equiv = fully_descriptive(t) ? EK_BOTH : ek;
    switch (t.kind) {
      case TypeKind::String8:
      case TypeKind::String16: {
        const bool wide = t.kind == TypeKind::String16;
        if (t.bound <= 255) {
          o.u8(wide ? TI_STRING16_SMALL : TI_STRING8_SMALL);
          o.u8(static_cast<uint8_t>(t.bound));
        } else {
          o.u8(wide ? TI_STRING16_LARGE : TI_STRING8_LARGE);
          o.u32(static_cast<uint32_t>(t.bound));
        }
        return;
      }
      case TypeKind::Sequence:
        if (t.bound <= 255) {
          o.u8(TI_PLAIN_SEQUENCE_SMALL);
          o.u8(equiv);
          o.u16(TRY_CONSTRUCT1);
          o.u8(static_cast<uint8_t>(t.bound));
        } else {
          o.u8(TI_PLAIN_SEQUENCE_LARGE);
          o.u8(equiv);
          o.u16(TRY_CONSTRUCT1);
          o.u32(static_cast<uint32_t>(t.bound));
        }
        write_ti(o, *t.element, ek);
        return;
      case TypeKind::Array: {
        const bool small =
            std::all_of(t.dims.begin(), t.dims.end(), [](uint32_t d) { return d <= 255; });
        o.u8(small ? TI_PLAIN_ARRAY_SMALL : TI_PLAIN_ARRAY_LARGE);
        o.u8(equiv);
        o.u16(TRY_CONSTRUCT1);
        o.u32(static_cast<uint32_t>(t.dims.size()));
        for (const uint32_t d : t.dims) {
          if (small) {
            o.u8(static_cast<uint8_t>(d));
          } else {
            o.u32(d);
          }
        }
        write_ti(o, *t.element, ek);
        return;
      }
      case TypeKind::Map:
        if (t.bound <= 255) {
          o.u8(TI_PLAIN_MAP_SMALL);
          o.u8(equiv);
          o.u16(TRY_CONSTRUCT1);
          o.u8(static_cast<uint8_t>(t.bound));
        } else {
          o.u8(TI_PLAIN_MAP_LARGE);
          o.u8(equiv);
          o.u16(TRY_CONSTRUCT1);
          o.u32(static_cast<uint32_t>(t.bound));
        }
        write_ti(o, *t.element, ek);
        o.u16(TRY_CONSTRUCT1);
        write_ti(o, *t.key, ek);
        return;
      default:
        break;
    }
    write_ident(o, ids_[ek == EK_MINIMAL ? 0 : 1].at(&t));
  }

  static void write_type_detail(Out& o, const Type& t) {
    o.u8(0);  // ann_builtin: absent
    o.u8(0);  // ann_custom: absent
    o.str(t.name);
  }

  // AnnotationParameterValue of a @min/@max literal; false where Annex B has no case for it.
  static bool write_param_value(Out& o, const Type& member_type, const Literal& v) {
    const Type& t = resolve(member_type);
    const auto as_i64 = [&]() -> int64_t {
      if (const auto* i = std::get_if<int64_t>(&v)) return *i;
      if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<int64_t>(*u);
      if (const auto* d = std::get_if<long double>(&v)) return static_cast<int64_t>(*d);
      if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
      return 0;
    };
    const auto as_f = [&]() -> long double {
      if (const auto* d = std::get_if<long double>(&v)) return *d;
      if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<long double>(*i);
      if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<long double>(*u);
      return 0;
    };
    const auto u64 = [&](uint64_t x) {
      o.align(4);  // XCDR2: 8-byte values align to 4
      o.u32(static_cast<uint32_t>(x));
      o.u32(static_cast<uint32_t>(x >> 32));
    };
    switch (t.kind) {
      case TypeKind::Boolean:
        o.u8(TK_BOOLEAN);
        o.u8(as_i64() != 0 ? 1 : 0);
        return true;
      case TypeKind::Byte:
      case TypeKind::Int8:
      case TypeKind::UInt8:
      case TypeKind::Int16:
      case TypeKind::UInt16:
      case TypeKind::Int32:
      case TypeKind::UInt32: {
        // As Cyclone's idlc writes them: TK_INT32 whatever the member's width, TK_UINT32
        // for what does not fit.
        const int64_t x = as_i64();
        o.u8(x >= INT32_MIN && x <= INT32_MAX ? TK_INT32 : TK_UINT32);
        o.u32(static_cast<uint32_t>(x));
        return true;
      }
      case TypeKind::Int64:
        o.u8(TK_INT64);
        u64(static_cast<uint64_t>(as_i64()));
        return true;
      case TypeKind::UInt64:
        o.u8(TK_UINT64);
        u64(static_cast<uint64_t>(as_i64()));
        return true;
      case TypeKind::Float32: {
        o.u8(TK_FLOAT32);
        const auto f = static_cast<float>(as_f());
        uint32_t bits = 0;
        std::memcpy(&bits, &f, 4);
        o.u32(bits);
        return true;
      }
      case TypeKind::Float64: {
        o.u8(TK_FLOAT64);
        const auto d = static_cast<double>(as_f());
        uint64_t bits = 0;
        std::memcpy(&bits, &d, 8);
        u64(bits);
        return true;
      }
      case TypeKind::Char8:
        o.u8(TK_CHAR8);
        o.u8(static_cast<uint8_t>(as_i64()));
        return true;
      case TypeKind::Enum:
        o.u8(TK_ENUM);
        o.u32(static_cast<uint32_t>(as_i64()));
        return true;
      case TypeKind::String8:
        if (const auto* s = std::get_if<std::string>(&v)) {
          o.u8(TK_STRING8);
          o.str(*s);
          return true;
        }
        return false;
      default:
        return false;
    }
  }

  static bool has_param_case(const Member& m) {
    Out scratch;
    return (!m.min || write_param_value(scratch, *m.type, *m.min)) &&
           (!m.max || write_param_value(scratch, *m.type, *m.max));
  }

  static void write_member_detail(Out& o, const Member& m, uint8_t ek) {
    if (ek == EK_MINIMAL) {
      const auto h = name_hash(m.name);
      o.bytes(h.data(), h.size());
      return;
    }
    o.str(m.name);
    if ((m.min || m.max) && has_param_case(m)) {
      o.u8(1);
      const size_t d = o.open();  // AppliedBuiltinMemberAnnotations
      o.u8(0);                    // unit
      o.u8(m.min ? 1 : 0);
      if (m.min) (void)write_param_value(o, *m.type, *m.min);
      o.u8(m.max ? 1 : 0);
      if (m.max) (void)write_param_value(o, *m.type, *m.max);
      o.u8(0);  // hash_id
      o.close(d);
    } else {
      o.u8(0);
    }
    o.u8(0);  // ann_custom
  }

  void write_object(Out& o, const Type& t, uint8_t ek) {
    const bool complete = ek == EK_COMPLETE;
    const size_t top = o.open();  // TypeObject is appendable
    o.u8(ek);
    switch (t.kind) {
      case TypeKind::Struct: {
        o.u8(TK_STRUCTURE);
        o.u16(ext_flags(t));
        size_t d = o.open();
        if (t.base != nullptr) {
          write_ti(o, *t.base, ek);
        } else {
          o.u8(TK_NONE);
        }
        if (complete) write_type_detail(o, t);
        o.close(d);
        d = o.open();
        o.u32(static_cast<uint32_t>(t.members.size()));
        for (const auto& m : t.members) {
          const size_t md = o.open();
          o.u32(m.id);
          uint16_t f = TRY_CONSTRUCT1;
          if (m.external) f |= IS_EXTERNAL;
          if (m.optional) f |= IS_OPTIONAL;
          if (m.must_understand || m.key) f |= IS_MUST_UNDERSTAND;
          if (m.key) f |= IS_KEY;
          o.u16(f);
          write_ti(o, *m.type, ek);
          write_member_detail(o, m, ek);
          o.close(md);
        }
        o.close(d);
        break;
      }
      case TypeKind::Union: {
        o.u8(TK_UNION);
        o.u16(ext_flags(t));
        size_t d = o.open();
        if (complete) write_type_detail(o, t);
        o.close(d);
        d = o.open();
        o.u16(TRY_CONSTRUCT1 | IS_MUST_UNDERSTAND);
        write_ti(o, *t.discriminator, ek);
        if (complete) {
          o.u8(0);
          o.u8(0);
        }
        o.close(d);
        d = o.open();
        o.u32(static_cast<uint32_t>(t.cases.size()));
        for (const auto& c : t.cases) {
          const size_t md = o.open();
          o.u32(c.member.id);
          uint16_t f = TRY_CONSTRUCT1;
          if (c.member.external) f |= IS_EXTERNAL;
          if (c.is_default) f |= IS_DEFAULT;
          o.u16(f);
          write_ti(o, *c.member.type, ek);
          o.u32(static_cast<uint32_t>(c.labels.size()));
          for (const int64_t l : c.labels)
            o.i32(static_cast<int32_t>(l));
          write_member_detail(o, c.member, ek);
          o.close(md);
        }
        o.close(d);
        break;
      }
      case TypeKind::Enum: {
        o.u8(TK_ENUM);
        o.u16(ext_flags(t));
        size_t d = o.open();
        o.u16(static_cast<uint16_t>(t.bound));
        if (complete) write_type_detail(o, t);
        o.close(d);
        d = o.open();
        o.u32(static_cast<uint32_t>(t.enumerators.size()));
        for (const auto& e : t.enumerators) {
          const size_t md = o.open();
          const size_t cd = o.open();  // CommonEnumeratedLiteral is appendable
          o.i32(e.value);
          o.u16(0);
          o.close(cd);
          write_name(o, e.name, complete);
          o.close(md);
        }
        o.close(d);
        break;
      }
      case TypeKind::Bitmask: {
        o.u8(TK_BITMASK);
        const size_t body = o.open();  // Minimal/CompleteBitmaskType are appendable
        o.u16(static_cast<uint16_t>(ext_flags(t) & ~IS_NESTED));
        size_t d = o.open();
        o.u16(static_cast<uint16_t>(t.bound));
        if (complete) write_type_detail(o, t);
        o.close(d);
        d = o.open();
        o.u32(static_cast<uint32_t>(t.flags.size()));
        for (const auto& f : t.flags) {
          const size_t md = o.open();
          o.u16(static_cast<uint16_t>(f.position));
          o.u16(0);
          write_name(o, f.name, complete);
          o.close(md);
        }
        o.close(d);
        o.close(body);
        break;
      }
      case TypeKind::Bitset: {
        o.u8(TK_BITSET);
        const size_t body = o.open();  // Minimal/CompleteBitsetType are appendable
        o.u16(0);
        size_t d = o.open();
        if (complete) write_type_detail(o, t);
        o.close(d);
        const auto fields = all_bitfields(t);
        d = o.open();
        o.u32(static_cast<uint32_t>(fields.size()));
        for (const Bitfield* f : fields) {
          const size_t md = o.open();
          o.u16(static_cast<uint16_t>(f->offset));
          o.u16(0);
          o.u8(static_cast<uint8_t>(f->width));
          o.u8(primitive_tk(f->holder).value_or(TK_NONE));
          write_name(o, f->name, complete);
          o.close(md);
        }
        o.close(d);
        o.close(body);
        break;
      }
      case TypeKind::Alias: {
        o.u8(TK_ALIAS);
        o.u16(0);
        size_t d = o.open();
        if (complete) write_type_detail(o, t);
        o.close(d);
        d = o.open();
        o.u16(0);
        write_ti(o, *t.element, ek);
        if (complete) {
          o.u8(0);
          o.u8(0);
        }
        o.close(d);
        break;
      }
      default:
        throw std::invalid_argument(std::string("no TypeObject for a ") + to_string(t.kind));
    }
    o.close(top);
  }

  static void write_name(Out& o, const std::string& name, bool complete) {
    if (complete) {
      o.str(name);
      o.u8(0);
      o.u8(0);
    } else {
      const auto h = name_hash(name);
      o.bytes(h.data(), h.size());
    }
  }

  void write_with_size(Out& o, const Type* t, size_t k) {
    const size_t d = o.open();  // TypeIdentifierWithSize is appendable
    write_ident(o, ids_[k].at(t));
    o.u32(static_cast<uint32_t>(objects_[k].at(t).size()));
    o.close(d);
  }

  Out information() {
    Out o;
    const size_t top = o.open();
    for (size_t k = 0; k < 2; ++k) {
      o.u32((k == 0 ? kInfoMinimal : kInfoComplete) | 0x40000000u);  // EMHEADER, LC=4
      const size_t len = o.open();                                   // NEXTINT
      const size_t d = o.open();  // TypeIdentifierWithDependencies is appendable
      write_with_size(o, &root_, k);
      o.i32(static_cast<int32_t>(deps_.size()));
      const size_t s = o.open();
      o.u32(static_cast<uint32_t>(deps_.size()));
      for (const Type* t : deps_)
        write_with_size(o, t, k);
      o.close(s);
      o.close(d);
      o.close(len);
    }
    o.close(top);
    return o;
  }

  Out mapping() {
    std::vector<const Type*> all{&root_};
    all.insert(all.end(), deps_.begin(), deps_.end());
    Out o;
    for (size_t k = 0; k < 2; ++k) {
      const size_t d = o.open();
      o.u32(static_cast<uint32_t>(all.size()));
      for (const Type* t : all) {
        write_ident(o, ids_[k].at(t));
        o.align(4);
        const auto& obj = objects_[k].at(t);
        o.bytes(obj.data(), obj.size());
      }
      o.close(d);
    }
    const size_t d = o.open();
    o.u32(static_cast<uint32_t>(all.size()));
    for (const Type* t : all) {
      write_ident(o, ids_[1].at(t));
      write_ident(o, ids_[0].at(t));
    }
    o.close(d);
    return o;
  }

  const Type& root_;
  std::vector<const Type*> deps_;
  std::unordered_map<const Type*, int> index_, low_;
  int next_index_ = 0;
  std::vector<const Type*> stack_;
  std::set<const Type*> on_stack_, self_loop_;
  std::vector<std::vector<const Type*>> sccs_;
  std::array<std::unordered_map<const Type*, Ident>, 2> ids_;
  std::array<std::unordered_map<const Type*, std::vector<uint8_t>>, 2> objects_;
};

// ------------------------------------------------------------------------- reading
constexpr int kMaxIdentDepth = 16;
constexpr size_t kMaxTypes = 10000;

class In {
 public:
  In(std::span<const std::byte> bytes, const char* what)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(bytes.size()), what_(what) {}

  [[noreturn]] void fail(const std::string& msg) const {
    throw TypeObjectError(std::string(what_) + " at byte " + std::to_string(pos_) + ": " + msg);
  }
  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  const uint8_t* data() const { return p_; }
  void need(size_t n, const char* field) const {
    if (n > end_ - pos_)
      fail(std::string("truncated: ") + field + " needs " + std::to_string(n) + " bytes, " +
           std::to_string(end_ - pos_) + " left");
  }
  void align(size_t n) {
    const size_t to = (pos_ + n - 1) / n * n;
    if (to > end_) fail("truncated: padding past the end");
    pos_ = to;
  }
  uint8_t u8(const char* field) {
    need(1, field);
    return p_[pos_++];
  }
  uint16_t u16(const char* field) {
    align(2);
    need(2, field);
    const auto v = static_cast<uint16_t>(p_[pos_] | (p_[pos_ + 1] << 8));
    pos_ += 2;
    return v;
  }
  uint32_t u32(const char* field) {
    align(4);
    need(4, field);
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(p_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }
  uint64_t u64(const char* field) {
    const uint64_t lo = u32(field);
    return lo | (static_cast<uint64_t>(u32(field)) << 32);
  }
  bool boolean(const char* field) {
    const uint8_t v = u8(field);
    if (v > 1) fail(std::string(field) + ": boolean " + std::to_string(v));
    return v == 1;
  }
  void raw(uint8_t* out, size_t n, const char* field) {
    need(n, field);
    std::memcpy(out, p_ + pos_, n);
    pos_ += n;
  }
  std::string str(const char* field) {
    const uint32_t n = u32(field);
    if (n == 0) fail(std::string(field) + ": string length 0 (no terminating nul)");
    need(n, field);
    if (p_[pos_ + n - 1] != 0) fail(std::string(field) + ": string without terminating nul");
    std::string s(reinterpret_cast<const char*>(p_ + pos_), n - 1);
    if (s.find('\0') != std::string::npos) fail(std::string(field) + ": nul inside a string");
    pos_ += n;
    return s;
  }
  void seek(size_t to) {
    if (to > end_) fail("seek past the end");
    pos_ = to;
  }
  // A DHEADER: returns the end of the body.
  size_t dheader(const char* field) {
    const uint32_t n = u32(field);
    if (n > end_ - pos_)
      fail(std::string(field) + ": length " + std::to_string(n) + " past the end (" +
           std::to_string(end_ - pos_) + " bytes left)");
    return pos_ + n;
  }
  // Leaves an appendable body: what a newer peer added after the known fields is skipped.
  void leave(size_t body_end, const char* field) {
    if (pos_ > body_end) fail(std::string(field) + " runs past its length");
    pos_ = body_end;
  }
  // A sequence count: each element takes at least `min_size` bytes of what is left.
  uint32_t count(const char* field, size_t min_size) {
    const uint32_t n = u32(field);
    if (static_cast<uint64_t>(n) * min_size > end_ - pos_)
      fail(std::string(field) + ": " + std::to_string(n) + " elements cannot fit in the " +
           std::to_string(end_ - pos_) + " bytes left");
    return n;
  }

 private:
  const uint8_t* p_;
  size_t end_;
  size_t pos_ = 0;
  const char* what_;
};

// A TypeIdentifier as read.
struct TI {
  uint8_t d = 0;
  Hash hash{};
  uint8_t scc_ek = 0;
  int32_t scc_length = 0, scc_index = 0;
  uint32_t bound = 0;
  std::vector<uint32_t> dims;
  std::shared_ptr<TI> element, key;

  // The identity of a hashed identifier (EK_COMPLETE / SCC), as a map key.
  [[nodiscard]] std::string key_string() const {
    std::string k(1, static_cast<char>(d));
    k.append(reinterpret_cast<const char*>(hash.data()), hash.size());
    if (d == TI_STRONGLY_CONNECTED_COMPONENT) {
      k.push_back(static_cast<char>(scc_ek));
      k.append(std::to_string(scc_length) + "/" + std::to_string(scc_index));
    }
    return k;
  }
  [[nodiscard]] bool hashed() const {
    return d == EK_COMPLETE || d == EK_MINIMAL || d == TI_STRONGLY_CONNECTED_COMPONENT;
  }
};

TI read_ti(In& in, int depth) {
  if (depth > kMaxIdentDepth)
    in.fail("type identifiers nested deeper than " + std::to_string(kMaxIdentDepth));
  TI t;
  t.d = in.u8("TypeIdentifier discriminator");
  const auto header = [&] {
    const uint8_t equiv = in.u8("PlainCollectionHeader.equiv_kind");
    if (equiv != EK_MINIMAL && equiv != EK_COMPLETE && equiv != EK_BOTH)
      in.fail("PlainCollectionHeader.equiv_kind " + std::to_string(equiv) +
              " is no EquivalenceKind");
    (void)in.u16("PlainCollectionHeader.element_flags");
  };
  switch (t.d) {
    case TI_STRING8_SMALL:
    case TI_STRING16_SMALL:
      t.bound = in.u8("StringSTypeDefn.bound");
      break;
    case TI_STRING8_LARGE:
    case TI_STRING16_LARGE:
      t.bound = in.u32("StringLTypeDefn.bound");
      break;
    case TI_PLAIN_SEQUENCE_SMALL:
    case TI_PLAIN_SEQUENCE_LARGE:
      header();
      t.bound = t.d == TI_PLAIN_SEQUENCE_SMALL ? in.u8("PlainSequenceSElemDefn.bound")
                                               : in.u32("PlainSequenceLElemDefn.bound");
      t.element = std::make_shared<TI>(read_ti(in, depth + 1));
      break;
    case TI_PLAIN_ARRAY_SMALL:
    case TI_PLAIN_ARRAY_LARGE: {
      header();
      const bool small = t.d == TI_PLAIN_ARRAY_SMALL;
      const uint32_t n = in.count("array_bound_seq", small ? 1 : 4);
      if (n == 0) in.fail("array_bound_seq: an array without dimensions");
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t dim = small ? in.u8("array bound") : in.u32("array bound");
        if (dim == 0) in.fail("array bound 0");
        t.dims.push_back(dim);
      }
      t.element = std::make_shared<TI>(read_ti(in, depth + 1));
      break;
    }
    case TI_PLAIN_MAP_SMALL:
    case TI_PLAIN_MAP_LARGE:
      header();
      t.bound = t.d == TI_PLAIN_MAP_SMALL ? in.u8("PlainMapSTypeDefn.bound")
                                          : in.u32("PlainMapLTypeDefn.bound");
      t.element = std::make_shared<TI>(read_ti(in, depth + 1));
      (void)in.u16("key_flags");
      t.key = std::make_shared<TI>(read_ti(in, depth + 1));
      break;
    case TI_STRONGLY_CONNECTED_COMPONENT: {
      const size_t e = in.dheader("StronglyConnectedComponentId");
      t.scc_ek = in.u8("sc_component_id discriminator");
      if (t.scc_ek != EK_MINIMAL && t.scc_ek != EK_COMPLETE)
        in.fail("sc_component_id discriminator " + std::to_string(t.scc_ek) +
                " is neither EK_MINIMAL nor EK_COMPLETE");
      in.raw(t.hash.data(), t.hash.size(), "sc_component_id hash");
      t.scc_length = static_cast<int32_t>(in.u32("scc_length"));
      t.scc_index = static_cast<int32_t>(in.u32("scc_index"));
      if (t.scc_length <= 0 || t.scc_index < 0 || t.scc_index >= t.scc_length)
        in.fail("scc_index " + std::to_string(t.scc_index) + " outside a component of " +
                std::to_string(t.scc_length));
      in.leave(e, "StronglyConnectedComponentId");
      break;
    }
    case EK_COMPLETE:
    case EK_MINIMAL:
      in.raw(t.hash.data(), t.hash.size(), "equivalence_hash");
      break;
    default:
      if (t.d != TK_NONE && !kind_of_tk(t.d))
        in.fail("TypeIdentifier discriminator " + std::to_string(t.d) + " is unknown");
      break;
  }
  return t;
}

struct ObjMember {
  uint32_t id = 0;
  uint16_t flags = 0;
  TI type;
  std::vector<int64_t> labels;
  std::string name;
  std::optional<Literal> min, max;
  // bitset fields
  uint32_t position = 0;
  uint8_t bitcount = 0;
  uint8_t holder = 0;
};

struct Obj {
  uint8_t tk = 0;
  uint16_t flags = 0;
  std::string name;
  TI base;  // struct: base (TK_NONE when none); union: discriminator; alias: related type
  uint16_t bit_bound = 0;
  std::vector<ObjMember> members;  // struct/union members, literals, flags, bitfields
  size_t begin = 0, end = 0;       // the TypeObject's bytes in the mapping
};

class Reader {
 public:
  explicit Reader(In& in) : in_(in) {}

  std::optional<Literal> param_value() {
    const uint8_t d = in_.u8("AnnotationParameterValue discriminator");
    switch (d) {
      case TK_BOOLEAN:
        return Literal{in_.boolean("boolean_value")};
      case TK_BYTE:
        return Literal{static_cast<uint64_t>(in_.u8("byte_value"))};
      case TK_CHAR8:
        return Literal{static_cast<int64_t>(in_.u8("char_value"))};
      case TK_INT16:
        return Literal{static_cast<int64_t>(static_cast<int16_t>(in_.u16("int16_value")))};
      case TK_UINT16:
        return Literal{static_cast<uint64_t>(in_.u16("uint16_value"))};
      case TK_INT32:
        return Literal{static_cast<int64_t>(static_cast<int32_t>(in_.u32("int32_value")))};
      case TK_ENUM:
        return Literal{static_cast<int64_t>(static_cast<int32_t>(in_.u32("enumerated_value")))};
      case TK_UINT32:
        return Literal{static_cast<uint64_t>(in_.u32("uint32_value"))};
      case TK_INT64:
        return Literal{static_cast<int64_t>(in_.u64("int64_value"))};
      case TK_UINT64:
        return Literal{in_.u64("uint64_value")};
      case TK_FLOAT32: {
        const uint32_t bits = in_.u32("float32_value");
        float f = 0;
        std::memcpy(&f, &bits, 4);
        return Literal{static_cast<long double>(f)};
      }
      case TK_FLOAT64: {
        const uint64_t bits = in_.u64("float64_value");
        double v = 0;
        std::memcpy(&v, &bits, 8);
        return Literal{static_cast<long double>(v)};
      }
      case TK_STRING8:
        return Literal{in_.str("string8_value")};
      default: {
        const size_t e = in_.dheader("ExtendedAnnotationParameterValue");
        in_.leave(e, "ExtendedAnnotationParameterValue");
        return std::nullopt;
      }
    }
  }

  void skip_annotation_seq() {
    // AppliedAnnotationSeq: we use none of them; skip the sequence by its DHEADER.
    const size_t e = in_.dheader("AppliedAnnotationSeq");
    in_.leave(e, "AppliedAnnotationSeq");
  }

  void builtin_member_annotations(ObjMember& m) {
    const size_t e = in_.dheader("AppliedBuiltinMemberAnnotations");
    if (in_.boolean("unit present")) (void)in_.str("unit");
    if (in_.boolean("min present")) m.min = param_value();
    if (in_.boolean("max present")) m.max = param_value();
    if (in_.boolean("hash_id present")) (void)in_.str("hash_id");
    in_.leave(e, "AppliedBuiltinMemberAnnotations");
  }

  void member_detail(ObjMember& m) {
    m.name = in_.str("MemberName");
    if (m.name.size() > 256) in_.fail("member name longer than 256");
    if (in_.boolean("ann_builtin present")) builtin_member_annotations(m);
    if (in_.boolean("ann_custom present")) skip_annotation_seq();
  }

  std::string type_detail() {
    if (in_.boolean("ann_builtin present")) {
      const size_t e = in_.dheader("AppliedBuiltinTypeAnnotations");
      in_.leave(e, "AppliedBuiltinTypeAnnotations");
    }
    if (in_.boolean("ann_custom present")) skip_annotation_seq();
    std::string name = in_.str("QualifiedTypeName");
    if (name.empty() || name.size() > 256) in_.fail("type name empty or longer than 256");
    return name;
  }

  template <class F>
  void members(const char* what, F each) {
    const size_t e = in_.dheader(what);
    const uint32_t n = in_.count(what, 4);
    for (uint32_t i = 0; i < n; ++i) {
      const size_t me = in_.dheader(what);
      each();
      in_.leave(me, what);
    }
    in_.leave(e, what);
  }

  // A CompleteTypeObject (after the TypeObject's EK_COMPLETE discriminator).
  Obj complete_object() {
    Obj o;
    o.tk = in_.u8("CompleteTypeObject discriminator");
    switch (o.tk) {
      case TK_STRUCTURE: {
        o.flags = in_.u16("struct_flags");
        size_t e = in_.dheader("CompleteStructHeader");
        o.base = read_ti(in_, 0);
        o.name = type_detail();
        in_.leave(e, "CompleteStructHeader");
        members("CompleteStructMemberSeq", [&] {
          ObjMember m;
          m.id = in_.u32("member_id");
          m.flags = in_.u16("member_flags");
          m.type = read_ti(in_, 0);
          member_detail(m);
          o.members.push_back(std::move(m));
        });
        break;
      }
      case TK_UNION: {
        o.flags = in_.u16("union_flags");
        size_t e = in_.dheader("CompleteUnionHeader");
        o.name = type_detail();
        in_.leave(e, "CompleteUnionHeader");
        e = in_.dheader("CompleteDiscriminatorMember");
        (void)in_.u16("discriminator flags");
        o.base = read_ti(in_, 0);
        if (in_.boolean("ann_builtin present")) {
          const size_t a = in_.dheader("AppliedBuiltinTypeAnnotations");
          in_.leave(a, "AppliedBuiltinTypeAnnotations");
        }
        if (in_.boolean("ann_custom present")) skip_annotation_seq();
        in_.leave(e, "CompleteDiscriminatorMember");
        members("CompleteUnionMemberSeq", [&] {
          ObjMember m;
          m.id = in_.u32("member_id");
          m.flags = in_.u16("member_flags");
          m.type = read_ti(in_, 0);
          const uint32_t n = in_.count("UnionCaseLabelSeq", 4);
          for (uint32_t i = 0; i < n; ++i)
            m.labels.push_back(static_cast<int32_t>(in_.u32("case label")));
          member_detail(m);
          o.members.push_back(std::move(m));
        });
        break;
      }
      case TK_ENUM: {
        o.flags = in_.u16("enum_flags");
        const size_t e = in_.dheader("CompleteEnumeratedHeader");
        o.bit_bound = in_.u16("bit_bound");
        o.name = type_detail();
        in_.leave(e, "CompleteEnumeratedHeader");
        members("CompleteEnumeratedLiteralSeq", [&] {
          ObjMember m;
          const size_t c = in_.dheader("CommonEnumeratedLiteral");
          m.id = in_.u32("literal value");
          m.flags = in_.u16("literal flags");
          in_.leave(c, "CommonEnumeratedLiteral");
          member_detail(m);
          o.members.push_back(std::move(m));
        });
        break;
      }
      case TK_BITMASK: {
        const size_t body = in_.dheader("CompleteBitmaskType");
        o.flags = in_.u16("bitmask_flags");
        const size_t e = in_.dheader("CompleteBitmaskHeader");
        o.bit_bound = in_.u16("bit_bound");
        o.name = type_detail();
        in_.leave(e, "CompleteBitmaskHeader");
        members("CompleteBitflagSeq", [&] {
          ObjMember m;
          m.position = in_.u16("bitflag position");
          (void)in_.u16("bitflag flags");
          member_detail(m);
          o.members.push_back(std::move(m));
        });
        in_.leave(body, "CompleteBitmaskType");
        break;
      }
      case TK_BITSET: {
        const size_t body = in_.dheader("CompleteBitsetType");
        o.flags = in_.u16("bitset_flags");
        const size_t e = in_.dheader("CompleteBitsetHeader");
        o.name = type_detail();
        in_.leave(e, "CompleteBitsetHeader");
        members("CompleteBitfieldSeq", [&] {
          ObjMember m;
          m.position = in_.u16("bitfield position");
          (void)in_.u16("bitfield flags");
          m.bitcount = in_.u8("bitcount");
          m.holder = in_.u8("holder_type");
          member_detail(m);
          o.members.push_back(std::move(m));
        });
        in_.leave(body, "CompleteBitsetType");
        break;
      }
      case TK_ALIAS: {
        o.flags = in_.u16("alias_flags");
        size_t e = in_.dheader("CompleteAliasHeader");
        o.name = type_detail();
        in_.leave(e, "CompleteAliasHeader");
        e = in_.dheader("CompleteAliasBody");
        (void)in_.u16("related_flags");
        o.base = read_ti(in_, 0);
        if (in_.boolean("ann_builtin present")) {
          ObjMember ignored;
          builtin_member_annotations(ignored);
        }
        if (in_.boolean("ann_custom present")) skip_annotation_seq();
        in_.leave(e, "CompleteAliasBody");
        break;
      }
      default:
        in_.fail("CompleteTypeObject of kind " + std::to_string(o.tk) +
                 " is not supported (annotation types and non-plain collections are not)");
    }
    return o;
  }

 private:
  In& in_;
};

// Model equality of two named types (possibly in different libraries), by name for the
// named types they refer to.
bool same_ref(const Type* a, const Type* b, int depth);

bool same_literal(const std::optional<Literal>& a, const std::optional<Literal>& b) {
  return a.has_value() == b.has_value() && (!a || *a == *b);
}

bool same_member(const Member& a, const Member& b, int depth) {
  return a.name == b.name && a.id == b.id && a.key == b.key && a.optional == b.optional &&
         a.must_understand == b.must_understand && a.external == b.external &&
         same_literal(a.min, b.min) && same_literal(a.max, b.max) &&
         same_ref(a.type, b.type, depth);
}

bool same_named(const Type& a, const Type& b) {
  if (a.kind != b.kind || a.name != b.name) return false;
  switch (a.kind) {
    case TypeKind::Struct:
      if (a.extensibility != b.extensibility || a.nested != b.nested ||
          !same_ref(a.base, b.base, 0) || a.members.size() != b.members.size())
        return false;
      for (size_t i = 0; i < a.members.size(); ++i)
        if (!same_member(a.members[i], b.members[i], 0)) return false;
      return true;
    case TypeKind::Union:
      if (a.extensibility != b.extensibility || a.nested != b.nested ||
          !same_ref(a.discriminator, b.discriminator, 0) || a.cases.size() != b.cases.size())
        return false;
      for (size_t i = 0; i < a.cases.size(); ++i) {
        if (a.cases[i].labels != b.cases[i].labels ||
            a.cases[i].is_default != b.cases[i].is_default ||
            !same_member(a.cases[i].member, b.cases[i].member, 0))
          return false;
      }
      return true;
    case TypeKind::Enum:
      if (a.bound != b.bound || a.extensibility != b.extensibility ||
          a.enumerators.size() != b.enumerators.size())
        return false;
      for (size_t i = 0; i < a.enumerators.size(); ++i)
        if (a.enumerators[i].name != b.enumerators[i].name ||
            a.enumerators[i].value != b.enumerators[i].value)
          return false;
      return true;
    case TypeKind::Bitmask:
      if (a.bound != b.bound || a.flags.size() != b.flags.size()) return false;
      for (size_t i = 0; i < a.flags.size(); ++i)
        if (a.flags[i].name != b.flags[i].name || a.flags[i].position != b.flags[i].position)
          return false;
      return true;
    case TypeKind::Bitset: {
      const auto fa = all_bitfields(a);
      const auto fb = all_bitfields(b);
      if (a.total_bits != b.total_bits || fa.size() != fb.size()) return false;
      for (size_t i = 0; i < fa.size(); ++i)
        if (fa[i]->name != fb[i]->name || fa[i]->width != fb[i]->width ||
            fa[i]->offset != fb[i]->offset || fa[i]->holder != fb[i]->holder)
          return false;
      return true;
    }
    case TypeKind::Alias:
      return same_ref(a.element, b.element, 0);
    default:
      return false;
  }
}

bool same_ref(const Type* a, const Type* b, int depth) {
  if (a == nullptr || b == nullptr) return a == b;
  if (depth > 64 || a->kind != b->kind) return false;
  if (is_named(a->kind)) return a->name == b->name;  // named types are compared one by one
  if (a->bound != b->bound || a->dims != b->dims) return false;
  return same_ref(a->element, b->element, depth + 1) && same_ref(a->key, b->key, depth + 1);
}

class Loader {
 public:
  Loader(TypeLibrary& lib, std::span<const std::byte> information,
         std::span<const std::byte> mapping)
      : lib_(lib), info_(information, "TypeInformation"), map_(mapping, "TypeMapping") {}

  const Type* run() {
    const TI root = read_information();
    read_mapping();
    const Type* scratch_root = build(root);
    check_containment();
    check_hashes();
    return merge(scratch_root);
  }

 private:
  TI read_information() {
    const size_t e = info_.dheader("TypeInformation");
    std::optional<TI> complete;
    while (info_.pos() < e) {
      const uint32_t em = info_.u32("EMHEADER");
      const uint32_t lc = (em >> 28) & 7;
      const uint32_t id = em & 0x0FFFFFFF;
      size_t start = info_.pos();
      size_t len = size_t{1} << (lc < 4 ? lc : 0);
      if (lc >= 4) {
        const size_t next = info_.u32("NEXTINT");
        // LC 4: NEXTINT is the length; LC 5..7: NEXTINT is also the member's own length
        // word (a DHEADER), counted in the member.
        start = lc == 4 ? info_.pos() : info_.pos() - 4;
        len = lc == 4 ? next : lc == 5 ? 4 + next : lc == 6 ? 4 + 4 * next : 4 + 8 * next;
      }
      if (len > e - start) info_.fail("member " + std::to_string(id) + " runs past the end");
      if (id == kInfoComplete) {
        info_.seek(start);
        const size_t d = info_.dheader("TypeIdentifierWithDependencies");
        const size_t s = info_.dheader("TypeIdentifierWithSize");
        complete = read_ti(info_, 0);
        (void)info_.u32("typeobject_serialized_size");
        info_.leave(s, "TypeIdentifierWithSize");
        info_.leave(d, "TypeIdentifierWithDependencies");
        if (info_.pos() > start + len) info_.fail("member 0x1002 runs past its length");
      }
      info_.seek(start + len);
    }
    info_.leave(e, "TypeInformation");
    if (!complete) info_.fail("no complete type identifier (member 0x1002)");
    if (complete->d != EK_COMPLETE &&
        (complete->d != TI_STRONGLY_CONNECTED_COMPONENT || complete->scc_ek != EK_COMPLETE))
      info_.fail("the complete type identifier is no EK_COMPLETE hash");
    return *complete;
  }

  void read_mapping() {
    // Minimal pairs: not used (names come from the complete objects); skipped by length.
    size_t e = map_.dheader("identifier_object_pair_minimal");
    map_.leave(e, "identifier_object_pair_minimal");
    e = map_.dheader("identifier_object_pair_complete");
    const uint32_t n = map_.count("identifier_object_pair_complete", 8);
    Reader r(map_);
    for (uint32_t i = 0; i < n; ++i) {
      const TI id = read_ti(map_, 0);
      if (id.d != EK_COMPLETE && id.d != TI_STRONGLY_CONNECTED_COMPONENT)
        map_.fail("a complete pair's identifier is no EK_COMPLETE hash");
      map_.align(4);
      const size_t begin = map_.pos();
      const size_t oe = map_.dheader("TypeObject");
      const uint8_t ek = map_.u8("TypeObject discriminator");
      if (ek != EK_COMPLETE)
        map_.fail("TypeObject discriminator " + std::to_string(ek) + " in a complete pair");
      Obj o = r.complete_object();
      map_.leave(oe, "TypeObject");
      o.begin = begin;
      o.end = oe;
      if (!objects_.emplace(id.key_string(), std::pair{id, std::move(o)}).second)
        map_.fail("type identifier given twice");
      if (objects_.size() > kMaxTypes) map_.fail("more than 10000 types");
    }
    map_.leave(e, "identifier_object_pair_complete");
    e = map_.dheader("identifier_complete_minimal");
    map_.leave(e, "identifier_complete_minimal");
  }

  // ------------------------------------------------------------------ build (scratch)
  [[noreturn]] void fail(const std::string& msg) const { throw TypeObjectError(msg); }

  const Type* build(const TI& root) {
    // Phase 1: every named type reachable from the root gets its Type, without recursion.
    std::vector<const TI*> work{&root};
    while (!work.empty()) {
      const TI* t = work.back();
      work.pop_back();
      for_named(*t, [&](const TI& named) {
        const std::string k = named.key_string();
        if (types_.contains(k)) return;
        auto it = objects_.find(k);
        if (it == objects_.end())
          fail("unknown type identifier " + describe(named) +
               ": no complete TypeObject for it in the TypeMapping");
        const Obj& o = it->second.second;
        const TypeKind kind = o.tk == TK_STRUCTURE ? TypeKind::Struct
                              : o.tk == TK_UNION   ? TypeKind::Union
                              : o.tk == TK_ENUM    ? TypeKind::Enum
                              : o.tk == TK_BITMASK ? TypeKind::Bitmask
                              : o.tk == TK_BITSET  ? TypeKind::Bitset
                                                   : TypeKind::Alias;
        if (scratch_.find(o.name) != nullptr)
          fail("two different types are named '" + o.name + "'");
        Type* made = scratch_.add_named(kind, o.name);
        types_.emplace(k, made);
        pending_.emplace_back(made, &o);
        work.push_back(&o.base);
        for (const auto& m : o.members)
          work.push_back(&m.type);
      });
    }
    for (auto& [t, o] : pending_)
      fill(*t, *o);
    // What needs the other types filled: the discriminator may be an alias or enum.
    for (auto& [t, o] : pending_) {
      if (t->kind != TypeKind::Union) continue;
      const Type& d = resolve(*t->discriminator);
      const bool ok = d.kind == TypeKind::Enum || d.kind == TypeKind::Boolean ||
                      d.kind == TypeKind::Char8 || d.kind == TypeKind::Char16 ||
                      (d.kind >= TypeKind::Byte && d.kind <= TypeKind::UInt64);
      if (!ok)
        fail("union '" + t->name + "': a discriminator of kind " + to_string(d.kind) +
             " (it must be integral, char, boolean or an enum)");
      const bool has_default = std::any_of(t->cases.begin(), t->cases.end(),
                                           [](const UnionCase& c) { return c.is_default; });
      if (!has_default) t->implicit_default = implicit_default(*t);
    }
    return anon(root, 0);
  }

  // Calls f for each hashed identifier inside t (t itself or its collections' elements).
  template <class F>
  void for_named(const TI& t, F&& f) {
    if (t.hashed()) {
      if (t.d == EK_MINIMAL || (t.d == TI_STRONGLY_CONNECTED_COMPONENT && t.scc_ek != EK_COMPLETE))
        fail("a complete type refers to a minimal type identifier " + describe(t));
      f(t);
      return;
    }
    if (t.element) for_named(*t.element, f);
    if (t.key) for_named(*t.key, f);
  }

  static std::string describe(const TI& t) {
    static const char* hex = "0123456789abcdef";
    std::string s = t.d == TI_STRONGLY_CONNECTED_COMPONENT ? "SCC " : "";
    for (const uint8_t b : t.hash) {
      s.push_back(hex[b >> 4]);
      s.push_back(hex[b & 15]);
    }
    if (t.d == TI_STRONGLY_CONNECTED_COMPONENT)
      s += " [" + std::to_string(t.scc_index) + "/" + std::to_string(t.scc_length) + "]";
    return s;
  }

  const Type* anon(const TI& t, int depth) {
    if (depth > kMaxIdentDepth) fail("type identifiers nested too deep");
    if (t.hashed()) return types_.at(t.key_string());
    if (const auto k = kind_of_tk(t.d)) return scratch_.primitive(*k);
    switch (t.d) {
      case TI_STRING8_SMALL:
      case TI_STRING8_LARGE:
        return scratch_.string(TypeKind::String8, t.bound);
      case TI_STRING16_SMALL:
      case TI_STRING16_LARGE:
        return scratch_.string(TypeKind::String16, t.bound);
      case TI_PLAIN_SEQUENCE_SMALL:
      case TI_PLAIN_SEQUENCE_LARGE:
        return scratch_.sequence(anon(*t.element, depth + 1), t.bound);
      case TI_PLAIN_ARRAY_SMALL:
      case TI_PLAIN_ARRAY_LARGE:
        return scratch_.array(anon(*t.element, depth + 1), t.dims);
      case TI_PLAIN_MAP_SMALL:
      case TI_PLAIN_MAP_LARGE:
        return scratch_.map(anon(*t.key, depth + 1), anon(*t.element, depth + 1), t.bound);
      default:
        fail("TK_NONE where a type is needed");
    }
  }

  static Extensibility ext_of(uint16_t flags, const std::string& name) {
    const int n =
        ((flags & IS_FINAL) != 0) + ((flags & IS_APPENDABLE) != 0) + ((flags & IS_MUTABLE) != 0);
    if (n != 1)
      throw TypeObjectError("type '" + name + "': flags " + std::to_string(flags) +
                            " give no single extensibility");
    return (flags & IS_FINAL) != 0        ? Extensibility::Final
           : (flags & IS_APPENDABLE) != 0 ? Extensibility::Appendable
                                          : Extensibility::Mutable;
  }

  Member member_of(const ObjMember& m) {
    Member out;
    out.name = m.name;
    out.id = m.id;
    out.type = anon(m.type, 0);
    out.key = (m.flags & IS_KEY) != 0;
    out.optional = (m.flags & IS_OPTIONAL) != 0;
    out.must_understand = (m.flags & IS_MUST_UNDERSTAND) != 0 && !out.key;
    out.external = (m.flags & IS_EXTERNAL) != 0;
    out.min = m.min;
    out.max = m.max;
    return out;
  }

  void fill(Type& t, const Obj& o) {
    const std::string& n = o.name;
    switch (t.kind) {
      case TypeKind::Struct: {
        t.extensibility = ext_of(o.flags, n);
        t.extensibility_explicit = true;
        t.nested = (o.flags & IS_NESTED) != 0;
        if (o.base.d != TK_NONE) {
          t.base = anon(o.base, 0);
          if (t.base->kind != TypeKind::Struct)
            fail("struct '" + n + "': its base '" + t.base->name + "' is no struct");
        }
        std::set<std::string> names;
        for (const auto& m : o.members) {
          if (!names.insert(m.name).second)
            fail("struct '" + n + "': member '" + m.name + "' twice");
          t.members.push_back(member_of(m));
        }
        break;
      }
      case TypeKind::Union: {
        t.extensibility = ext_of(o.flags, n);
        t.extensibility_explicit = true;
        t.nested = (o.flags & IS_NESTED) != 0;
        t.discriminator = anon(o.base, 0);
        int defaults = 0;
        for (const auto& m : o.members) {
          UnionCase c;
          c.labels = m.labels;
          c.is_default = (m.flags & IS_DEFAULT) != 0;
          defaults += c.is_default ? 1 : 0;
          c.member = member_of(m);
          t.cases.push_back(std::move(c));
        }
        if (defaults > 1) fail("union '" + n + "': more than one default case");
        break;
      }
      case TypeKind::Enum:
        // Annex B calls enum_flags unused; Cyclone writes the enum's extensibility there.
        t.extensibility = o.flags == 0 ? Extensibility::Final : ext_of(o.flags, n);
        t.bound = o.bit_bound;
        if (t.bound < 1 || t.bound > 32)
          fail("enum '" + n + "': bit_bound " + std::to_string(t.bound));
        for (const auto& m : o.members)
          t.enumerators.push_back({m.name, static_cast<int32_t>(m.id)});
        break;
      case TypeKind::Bitmask:
        t.bound = o.bit_bound;
        if (t.bound < 1 || t.bound > 64)
          fail("bitmask '" + n + "': bit_bound " + std::to_string(t.bound));
        for (const auto& m : o.members) {
          if (m.position >= t.bound)
            fail("bitmask '" + n + "': flag '" + m.name + "' at position " +
                 std::to_string(m.position) + " outside its bit_bound");
          t.flags.push_back({m.name, m.position});
        }
        break;
      case TypeKind::Bitset:
        for (const auto& m : o.members) {
          const auto holder = kind_of_tk(m.holder);
          const bool int_holder =
              holder && (*holder == TypeKind::Boolean ||
                         (*holder >= TypeKind::Int8 && *holder <= TypeKind::UInt64));
          if (!int_holder || m.bitcount == 0 || m.bitcount > 64)
            fail("bitset '" + n + "': bitfield '" + m.name + "' of " + std::to_string(m.bitcount) +
                 " bits in holder kind " + std::to_string(m.holder));
          if (m.position + m.bitcount > 64)
            fail("bitset '" + n + "': bitfield '" + m.name + "' past bit 64");
          t.bitfields.push_back({m.name, m.bitcount, m.position, *holder});
          t.total_bits = std::max<uint32_t>(t.total_bits, m.position + m.bitcount);
        }
        break;
      case TypeKind::Alias:
        t.element = anon(o.base, 0);
        break;
      default:
        break;
    }
  }

  // The first discriminator value no label selects, as idlc's sema chooses it.
  static std::optional<int64_t> implicit_default(const Type& u) {
    std::set<int64_t> used;
    for (const auto& c : u.cases)
      used.insert(c.labels.begin(), c.labels.end());
    const Type& d = resolve(*u.discriminator);
    if (d.kind == TypeKind::Enum) {
      for (const auto& e : d.enumerators)
        if (!used.contains(e.value)) return e.value;
      return std::nullopt;
    }
    const bool sig = d.kind == TypeKind::Int8 || d.kind == TypeKind::Int16 ||
                     d.kind == TypeKind::Int32 || d.kind == TypeKind::Int64;
    const int64_t max =
        d.kind == TypeKind::Boolean                                                          ? 1
        : d.kind == TypeKind::Char8 || d.kind == TypeKind::Byte || d.kind == TypeKind::UInt8 ? 0xFF
        : d.kind == TypeKind::Char16 || d.kind == TypeKind::UInt16 ? 0xFFFF
        : d.kind == TypeKind::Int8                                 ? 0x7F
        : d.kind == TypeKind::Int16                                ? 0x7FFF
                                                                   : INT64_MAX;
    for (int64_t v = 0; v <= max && v <= static_cast<int64_t>(used.size()) + 1; ++v)
      if (!used.contains(v)) return v;
    for (int64_t v = -1; sig && -v <= static_cast<int64_t>(used.size()) + 1; --v)
      if (!used.contains(v)) return v;
    return std::nullopt;
  }

  // A struct, union or alias that holds itself by value has no finite size.
  void check_containment() {
    std::map<const Type*, int> state;  // 1: on the path, 2: done
    for (const auto& [t, o] : pending_) {
      if (state[t] != 0) continue;
      // Iterative depth-first search over by-value edges.
      std::vector<std::pair<const Type*, size_t>> stack{{t, 0}};
      state[t] = 1;
      while (!stack.empty()) {
        auto& [cur, next] = stack.back();
        const auto edges = by_value(*cur);
        if (next == edges.size()) {
          state[cur] = 2;
          stack.pop_back();
          continue;
        }
        const Type* to = edges[next++];
        if (state[to] == 1)
          fail("type '" + to->name +
               "' contains itself (a cycle without a "
               "sequence, map, @optional or @external member)");
        if (state[to] == 0) {
          state[to] = 1;
          stack.emplace_back(to, 0);
        }
      }
    }
  }

  static std::vector<const Type*> by_value(const Type& t) {
    std::vector<const Type*> out;
    const auto add = [&](const Type* m) {
      while (m != nullptr && m->kind == TypeKind::Array)
        m = m->element;
      if (m != nullptr && is_named(m->kind)) out.push_back(m);
    };
    switch (t.kind) {
      case TypeKind::Struct:
        if (t.base != nullptr) out.push_back(t.base);
        for (const auto& m : t.members)
          if (!m.optional && !m.external) add(m.type);
        break;
      case TypeKind::Union:
        add(t.discriminator);
        for (const auto& c : t.cases)
          if (!c.member.external) add(c.member.type);
        break;
      case TypeKind::Alias:
        add(t.element);
        break;
      default:
        break;
    }
    return out;
  }

  void check_hashes() {
    for (const auto& [k, entry] : objects_) {
      const auto& [id, o] = entry;
      if (id.d != EK_COMPLETE || !types_.contains(k)) continue;
      const auto h = md5(map_.data() + o.begin, o.end - o.begin);
      if (!std::equal(id.hash.begin(), id.hash.end(), h.begin()))
        fail("type '" + o.name + "': its identifier " + describe(id) +
             " is not the hash of its TypeObject");
    }
  }

  // ------------------------------------------------------------------ merge
  const Type* merge(const Type* root) {
    // Refuse a clash before adding anything.
    for (const Type* t : scratch_.named()) {
      if (const Type* have = lib_.find(t->name)) {
        if (!same_named(*have, *t))
          fail("type '" + t->name + "' differs from the type of that name already known");
      }
    }
    std::unordered_map<const Type*, const Type*> to;
    std::vector<std::pair<const Type*, Type*>> fresh;
    for (const Type* t : scratch_.named()) {
      if (const Type* have = lib_.find(t->name)) {
        to[t] = have;
      } else {
        Type* n = lib_.add_named(t->kind, t->name);
        to[t] = n;
        fresh.emplace_back(t, n);
      }
    }
    std::function<const Type*(const Type*)> copy = [&](const Type* t) -> const Type* {
      if (t == nullptr) return nullptr;
      if (is_named(t->kind)) return to.at(t);
      if (is_primitive(t->kind)) return lib_.primitive(t->kind);
      switch (t->kind) {
        case TypeKind::String8:
        case TypeKind::String16:
          return lib_.string(t->kind, t->bound);
        case TypeKind::Sequence:
          return lib_.sequence(copy(t->element), t->bound);
        case TypeKind::Array:
          return lib_.array(copy(t->element), t->dims);
        default:
          return lib_.map(copy(t->key), copy(t->element), t->bound);
      }
    };
    for (auto& [from, n] : fresh) {
      Type c = *from;
      c.element = copy(from->element);
      c.key = copy(from->key);
      c.base = copy(from->base);
      c.discriminator = copy(from->discriminator);
      for (auto& m : c.members)
        m.type = copy(m.type);
      for (auto& uc : c.cases)
        uc.member.type = copy(uc.member.type);
      *n = std::move(c);
    }
    return copy(root);
  }

  TypeLibrary& lib_;
  In info_;
  In map_;
  std::map<std::string, std::pair<TI, Obj>> objects_;
  TypeLibrary scratch_;
  std::unordered_map<std::string, Type*> types_;
  std::vector<std::pair<Type*, const Obj*>> pending_;
};

}  // namespace

TypeInfo make_type_info(const Type& type) {
  return Gen(type).run();
}

const Type* load_type_info(TypeLibrary& library, std::span<const std::byte> information,
                           std::span<const std::byte> mapping) {
  try {
    return Loader(library, information, mapping).run();
  } catch (const std::invalid_argument& e) {
    // The model refused something (an array dimension of 0, a name taken twice).
    throw TypeObjectError(std::string("type information not usable: ") + e.what());
  }
}

}  // namespace spindle::types

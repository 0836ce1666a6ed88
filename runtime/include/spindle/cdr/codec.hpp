// CDR (XCDR1) encoding of IDL types, the runtime half of what idlc generates.
//
// Generated code describes each type once, as a list of one-line calls such as
// `w.template put<Str<8>>(v.callsign())`, inside a `Codec<T>` specialization. Everything
// else — primitives, strings, sequences, arrays, optionals, parameter lists, bounds and
// length checks — lives here, so generated code stays thin and every rule is written once.
//
// Wire format: classic CDR as written by Fast-CDR 1.0 (the bytes equal direct Fast-CDR
// calls), a 4-byte encapsulation header (CDR_BE/CDR_LE, PL_CDR_BE/PL_CDR_LE for mutable
// types), alignment relative to the end of that header. `docs/cdr.md` is the format spec,
// including the XCDR1 parameter-list form used for @mutable types and @optional members.
//
// Error model: encoding and decoding throw CodecError internally; the entry points in
// <spindle/cdr/serialize.hpp> catch it and return a Result. Decoding never trusts a length
// from the buffer: each is checked against the bytes that remain and against the IDL bound
// before anything is allocated.
//
// Threading: all types here are stack objects used by one thread; no shared state.
#pragma once

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace spindle::cdr {

enum class Endianness : uint8_t { Big, Little };
inline constexpr Endianness kNativeEndianness =
    std::endian::native == std::endian::little ? Endianness::Little : Endianness::Big;

enum class Extensibility : uint8_t { Final, Appendable, Mutable };

// The two encodings of DDS-XTypes 1.3 (7.4.3): XCDR1 (classic CDR, PL_CDR for mutable types)
// and XCDR2 (DHEADER and EMHEADER, 8-byte values aligned to 4). `docs/cdr.md` says which a
// type is written in.
enum class Encoding : uint8_t { Xcdr1 = 1, Xcdr2 = 2 };
// A set of encodings (the @data_representation of a type): bit 0 XCDR1, bit 1 XCDR2.
inline constexpr uint8_t kXcdr1Bit = 1;
inline constexpr uint8_t kXcdr2Bit = 2;
[[nodiscard]] constexpr uint8_t bit_of(Encoding e) {
  return e == Encoding::Xcdr1 ? kXcdr1Bit : kXcdr2Bit;
}

// A member of a @mutable type (or an @optional member) as the writer needs it: its id, and
// whether a reader that does not know it must drop the sample (@must_understand; XCDR2 also
// sets the flag for key members, as the peers do).
struct MemberId {
  uint32_t id;
  bool must_understand = false;
  bool key = false;
};

// What went wrong, classified by cause. Decoding errors mean the bytes are bad (drop the
// sample, suspect the sender); encoding errors mean the application's value is bad.
enum class Status : uint8_t {
  Ok,
  Truncated,              // the buffer ends inside a value
  LengthTooLarge,         // a length field exceeds the bytes that remain
  BoundExceeded,          // a string or sequence longer than its IDL bound
  BadDiscriminator,       // a union discriminator outside its type
  BadEnumerator,          // an enum value that names no enumerator
  BadBoolean,             // a boolean byte other than 0 or 1
  BadString,              // a string without its terminating NUL, or with a NUL inside
  BadBitmask,             // bits set beyond the bitmask's bit_bound
  BadEncapsulation,       // unknown or mismatched encapsulation header
  BadParameter,           // malformed parameter-list header
  MissingMustUnderstand,  // an unknown parameter flagged must-understand
  OutOfRange,             // a value outside its @range/@min/@max
  BufferTooSmall,         // encoding: the destination cannot hold the sample
  NestingTooDeep,         // recursive types nested deeper than kMaxNesting
  DuplicateMapKey,        // a map whose encoding holds one key twice
};

// Recursive types (a struct holding a sequence of itself) are decoded by recursion; a hostile
// buffer could nest them deep enough to exhaust the stack, so nesting is capped.
inline constexpr int kMaxNesting = 200;

[[nodiscard]] constexpr const char* to_string(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::Truncated:
      return "truncated buffer";
    case Status::LengthTooLarge:
      return "length exceeds remaining bytes";
    case Status::BoundExceeded:
      return "bound exceeded";
    case Status::BadDiscriminator:
      return "bad union discriminator";
    case Status::BadEnumerator:
      return "bad enumerator";
    case Status::BadBoolean:
      return "bad boolean";
    case Status::BadString:
      return "string not NUL-terminated";
    case Status::BadBitmask:
      return "bits beyond bit_bound";
    case Status::BadEncapsulation:
      return "bad encapsulation header";
    case Status::BadParameter:
      return "malformed parameter header";
    case Status::MissingMustUnderstand:
      return "unknown must-understand parameter";
    case Status::OutOfRange:
      return "value out of range";
    case Status::BufferTooSmall:
      return "buffer too small";
    case Status::NestingTooDeep:
      return "nesting too deep";
    case Status::DuplicateMapKey:
      return "duplicate map key";
  }
  return "unknown";
}

// "member 'Sensors::Reading.unit': string of 12 elements over its bound of 8": what a
// BoundExceeded error of a writer says (`member` may be null: not named).
inline std::string over(const char* member, const char* what, size_t size, uint64_t bound) {
  std::string s;
  if (member != nullptr) {
    s += "member '";
    s += member;
    s += "': ";
  }
  s += what;
  s += " of ";
  s += std::to_string(size);
  s += " elements over its bound of ";
  s += std::to_string(bound);
  return s;
}

class CodecError : public std::runtime_error {
 public:
  CodecError(Status status, const std::string& detail)
      : std::runtime_error(std::string(to_string(status)) + (detail.empty() ? "" : ": " + detail)),
        status_(status) {}
  [[nodiscard]] Status status() const { return status_; }

 private:
  Status status_;
};

// ----------------------------------------------------------------------------- shapes
// A shape tells the codec how the IDL sees a C++ value whose type alone does not say:
// bounds of strings and sequences (all map to std::string / std::vector), nesting.
struct Plain {};  // primitive, enum, bitmask, struct or union: the C++ type decides
template <uint64_t Bound>
struct Str {};  // string / wstring; Bound 0 = unbounded
template <uint64_t Bound, class Elem = Plain>
struct Seq {};  // sequence; Bound 0 = unbounded
template <class Elem = Plain>
struct Arr {};  // std::array (one dimension; nest for more)
template <uint64_t Bound, class Key = Plain, class Value = Plain>
struct Map {};  // map<K, V> as std::map; Bound 0 = unbounded
template <class S>
struct is_arr_shape : std::false_type {};
template <class E>
struct is_arr_shape<Arr<E>> : std::true_type {};

// Specialized by generated code for every struct, union, enum and bitmask.
template <class T>
struct Codec;

// ----------------------------------------------------------------------------- sizes
inline constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();

[[nodiscard]] constexpr size_t add_size(size_t off, size_t n) {
  return (off == kUnbounded || n == kUnbounded || off > kUnbounded - n) ? kUnbounded : off + n;
}
[[nodiscard]] constexpr size_t align_to(size_t off, size_t a) {
  return off == kUnbounded ? kUnbounded : add_size(off, (a - off % a) % a);
}
[[nodiscard]] constexpr size_t mul_size(size_t n, size_t each) {
  if (n == 0 || each == 0) return 0;
  return (n == kUnbounded || each == kUnbounded || n > kUnbounded / each) ? kUnbounded : n * each;
}

template <class T>
concept Primitive = std::is_arithmetic_v<T>;  // includes bool, char, wchar_t, long double

// Size and alignment of primitives as Fast-CDR writes them: wchar_t as 4 bytes, long
// double as 16 bytes aligned to 8, everything else natural size aligned to itself.
template <Primitive T>
inline constexpr size_t kPrimSize = std::is_same_v<T, wchar_t>       ? 4
                                    : std::is_same_v<T, long double> ? 16
                                                                     : sizeof(T);
// Bytes of a long double that carry its value (x86: 80-bit extended precision).
inline constexpr size_t kLongDoubleBytes =
    std::numeric_limits<long double>::digits == 64 ? 10 : sizeof(long double);

template <Primitive T>
inline constexpr size_t kPrimAlign = kPrimSize<T> > 8 ? 8 : kPrimSize<T>;

template <class T>
struct is_std_array : std::false_type {};
template <class T, size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

// Size and alignment of a primitive in an encoding: XCDR2 writes a wchar as 2 bytes and
// aligns nothing beyond 4.
template <Primitive T, Encoding E>
inline constexpr size_t kPrimSizeIn =
    E == Encoding::Xcdr2&& std::is_same_v<T, wchar_t> ? 2 : kPrimSize<T>;
template <Primitive T, Encoding E>
inline constexpr size_t kPrimAlignIn =
    E == Encoding::Xcdr2 ? (kPrimSizeIn<T, E> > 4 ? 4 : kPrimSizeIn<T, E>) : kPrimAlign<T>;

// XCDR2 puts a DHEADER before a sequence or array whose elements are not primitive
// (written bare: kBareElement). Enums and bitmasks are not primitive here, as Cyclone DDS
// writes them. NeedsDheader<S, Elem>: whether a collection of elements of shape S / type Elem
// starts with one; for a map, S and Elem are the map's own shape and type.
template <class S, class Elem>
inline constexpr bool kBareElement = std::is_same_v<S, Plain>&& Primitive<Elem>;
template <class S, class Elem>
struct NeedsDheader {
  static constexpr bool value = !kBareElement<S, Elem>;
};
template <uint64_t N, class KS, class VS, class M>
struct NeedsDheader<Map<N, KS, VS>, M> {
  static constexpr bool value =
      !(kBareElement<KS, typename M::key_type> && kBareElement<VS, typename M::mapped_type>);
};

// The 4 bytes of a DHEADER (XCDR2 only) at `off`: where what it bounds starts.
template <Encoding E>
[[nodiscard]] constexpr size_t after_dheader(size_t off, bool present) {
  return E == Encoding::Xcdr2 && present ? add_size(align_to(off, 4), 4) : off;
}

// Highest end offset of a value of shape S / C++ type V starting at `off`, in encoding E.
template <class S, class V, Encoding E = Encoding::Xcdr1>
struct MaxSize;

template <class V, Encoding E>
struct MaxSize<Plain, V, E> {
  static constexpr size_t at(size_t off) {
    if constexpr (Primitive<V>) {
      return add_size(align_to(off, kPrimAlignIn<V, E>), kPrimSizeIn<V, E>);
    } else {
      return Codec<V>::template max_size<E>(
          after_dheader<E>(off, Codec<V>::kExtensibility != Extensibility::Final));
    }
  }
};

template <uint64_t N, class V, Encoding E>
struct MaxSize<Str<N>, V, E> {
  static constexpr size_t at(size_t off) {
    if constexpr (N == 0) {
      return kUnbounded;
    } else if constexpr (std::is_same_v<V, std::wstring>) {
      // XCDR1: 4-byte characters; XCDR2: UTF-16, at most two units of 2 bytes each.
      return add_size(add_size(align_to(off, 4), 4), mul_size(N, 4));
    } else {
      return add_size(add_size(align_to(off, 4), 4), add_size(N, 1));
    }
  }
};

// Bytes an element of shape S / type Elem can take, padding included, from any start offset:
// an element starts at most 7 padding bytes after the previous one ends, so the worst of
// the 8 start offsets bounds every element. kUnbounded when the element is unbounded.
template <class S, class Elem, Encoding E = Encoding::Xcdr1>
[[nodiscard]] constexpr size_t worst_element_size() {
  size_t worst = 0;
  for (size_t r = 0; r < 8; ++r) {
    const size_t end = MaxSize<S, Elem, E>::at(r);
    if (end == kUnbounded) return kUnbounded;
    worst = end - r > worst ? end - r : worst;
  }
  return worst;
}

template <class S, class V, Encoding E>
struct MaxSize<Arr<S>, V, E> {
  static constexpr size_t at(size_t off) {
    using Elem = typename V::value_type;
    constexpr size_t n = std::tuple_size_v<V>;
    off = after_dheader<E>(off, NeedsDheader<S, Elem>::value);
    if constexpr (n == 0) {
      return off;
    } else if constexpr (kBareElement<S, Elem>) {
      return add_size(align_to(off, kPrimAlignIn<Elem, E>), n * kPrimSizeIn<Elem, E>);
    } else {
      const size_t first = MaxSize<S, Elem, E>::at(off);
      return add_size(first, mul_size(n - 1, worst_element_size<S, Elem, E>()));
    }
  }
};

template <uint64_t N, class S, class V, Encoding E>
struct MaxSize<Seq<N, S>, V, E> {
  static constexpr size_t at(size_t off) {
    using Elem = typename V::value_type;
    if constexpr (N == 0) {
      return kUnbounded;
    } else {
      off = after_dheader<E>(off, NeedsDheader<S, Elem>::value);
      const size_t body = add_size(align_to(off, 4), 4);
      if constexpr (kBareElement<S, Elem>) {
        return add_size(align_to(body, kPrimAlignIn<Elem, E>), mul_size(N, kPrimSizeIn<Elem, E>));
      } else {
        return add_size(body, mul_size(N, worst_element_size<S, Elem, E>()));
      }
    }
  }
};

// Bytes a key/value pair can take from any start offset, padding included (as
// worst_element_size); kUnbounded when either half is unbounded.
template <class KS, class K, class VS, class V, Encoding E = Encoding::Xcdr1>
[[nodiscard]] constexpr size_t worst_pair_size() {
  size_t worst = 0;
  for (size_t r = 0; r < 8; ++r) {
    const size_t key_end = MaxSize<KS, K, E>::at(r);
    if (key_end == kUnbounded) return kUnbounded;
    const size_t end = MaxSize<VS, V, E>::at(key_end);
    if (end == kUnbounded) return kUnbounded;
    worst = end - r > worst ? end - r : worst;
  }
  return worst;
}

// XTypes 1.3 (XCDR map serialization): a uint32 count, then that many key/value pairs.
template <uint64_t N, class KS, class VS, class M, Encoding E>
struct MaxSize<Map<N, KS, VS>, M, E> {
  static constexpr size_t at(size_t off) {
    if constexpr (N == 0) {
      return kUnbounded;
    } else {
      using K = typename M::key_type;
      using V = typename M::mapped_type;
      off = after_dheader<E>(off, NeedsDheader<Map<N, KS, VS>, M>::value);
      return add_size(add_size(align_to(off, 4), 4),
                      mul_size(N, worst_pair_size<KS, K, VS, V, E>()));
    }
  }
};

template <class S, class V, Encoding E = Encoding::Xcdr1>
[[nodiscard]] constexpr size_t max_size_at(size_t off) {
  return MaxSize<S, V, E>::at(off);
}

// Parameter-list framing (PL_CDR) for @mutable types and @optional members: each member is
// `align(4) | u16 id+flags | u16 length | value`, the value aligned from its own start; a
// mutable struct ends with the sentinel id 0x3F02 and length 0.
inline constexpr uint16_t kPidSentinel = 0x3F02;
inline constexpr uint16_t kPidMustUnderstand = 0x4000;
inline constexpr uint16_t kPidIdMask = 0x3FFF;
inline constexpr size_t kParamHeaderSize = 4;

// A member of a @mutable type. XCDR1: its parameter header, then the value from offset 0.
// XCDR2: its EMHEADER and, at most, a NEXTINT; the value starts 4-aligned, which XCDR2's
// largest alignment (4) makes the same as offset 0.
template <class S, class V, Encoding E = Encoding::Xcdr1>
[[nodiscard]] constexpr size_t max_param_size_at(size_t off) {
  const size_t value_end = MaxSize<S, V, E>::at(0);
  const size_t header = E == Encoding::Xcdr2 ? 8 : kParamHeaderSize;
  return add_size(add_size(align_to(off, 4), header), value_end);
}
// An @optional member of a final or appendable type: as a parameter (XCDR1), or a presence
// byte then the value (XCDR2).
template <class S, class V, Encoding E = Encoding::Xcdr1>
[[nodiscard]] constexpr size_t max_optional_size_at(size_t off) {
  if constexpr (E == Encoding::Xcdr2) {
    return MaxSize<S, V, E>::at(add_size(off, 1));
  } else {
    return max_param_size_at<S, V, E>(off);
  }
}
// What ends a mutable type's members: XCDR1's sentinel; nothing in XCDR2 (the DHEADER).
template <Encoding E = Encoding::Xcdr1>
[[nodiscard]] constexpr size_t max_end_params(size_t off) {
  return E == Encoding::Xcdr2 ? off : add_size(align_to(off, 4), kParamHeaderSize);
}

// ============================================================================= writing
// Shape dispatch shared by the XCDR1 writer (Fast-CDR), its size counter and the XCDR2
// writer (xcdr2.hpp). `Derived` provides: prim(v), prim_array(p, n), length(n), str_body(s),
// param_begin(id) -> mark, param_end(mark), sentinel(). The structure hooks below (a
// struct's or union's start and end, a collection's, an optional's, a mutable member's) are
// those of XCDR1, where nothing but the parameter header marks them; the XCDR2 writer
// declares its own (DHEADER, EMHEADER, the presence flag).
template <class Derived>
class BasicWriter {
 public:
  template <class S = Plain, class V>
  void put(const V& v) {
    if constexpr (std::is_same_v<S, Plain>) {
      if constexpr (Primitive<V>) {
        self().prim(v);
      } else {
        auto mark = self().template aggregate_begin<V>();
        Codec<V>::write(self(), v);
        self().aggregate_end(mark);
      }
    } else {
      put_shaped(S{}, v);
    }
  }

  // XCDR1 structure hooks (no bytes of their own).
  struct NoMark {};
  template <class V>
  NoMark aggregate_begin() {
    return {};
  }
  void aggregate_end(NoMark) {}
  template <class E, class Elem>
  NoMark collection_begin() {
    return {};
  }
  void collection_end(NoMark) {}
  auto optional_begin(MemberId id, bool) { return self().param_begin(pid_of(id)); }
  template <class M>
  void optional_end(M mark) {
    self().param_end(mark);
  }
  template <class S, class V>
  auto member_begin(MemberId id) {
    return self().param_begin(pid_of(id));
  }
  template <class M>
  void member_end(M mark) {
    self().param_end(mark);
  }
  // The same for a string, sequence or map member: `member` ("Module::Type.name") is what
  // a bound error names.
  template <class S = Plain, class V>
  void put(const V& v, const char* member) {
    member_ = member;
    put<S>(v);
  }

  // An @optional member outside a mutable type: a parameter header with length 0 when
  // absent (XCDR1), a presence byte before the value (XCDR2).
  template <class S = Plain, class V>
  void put_optional(MemberId id, const std::optional<V>& v, const char* member = nullptr) {
    auto mark = self().optional_begin(id, v.has_value());
    if (v) put<S>(*v, member);
    self().optional_end(mark);
  }

  // A member of a @mutable type.
  template <class S = Plain, class V>
  void put_param(MemberId id, const V& v, const char* member = nullptr) {
    auto mark = self().template member_begin<S, V>(id);
    put<S>(v, member);
    self().member_end(mark);
  }
  template <class S = Plain, class V>
  void put_param(MemberId id, const std::optional<V>& v, const char* member = nullptr) {
    if (!v) return;  // absent optionals of mutable types are simply not sent
    put_param<S>(id, *v, member);
  }
  void end_params() { self().sentinel(); }

  // The XCDR1 parameter id of a member: ids above 0x3F00 need the extended header, which
  // this codec does not write.
  static uint16_t pid_of(MemberId id) {
    if (id.id > 0x3F00) throw CodecError(Status::BadParameter, "member id above 0x3F00");
    return static_cast<uint16_t>(id.id | (id.must_understand ? kPidMustUnderstand : 0));
  }

  template <class V>
  void check_range(const V& v, const V& lo, const V& hi, const char* member) {
    if (v < lo || hi < v) throw CodecError(Status::OutOfRange, member);
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }

  const char* member_ = nullptr;  // the member being written, for bound errors

  template <uint64_t N>
  void put_shaped(Str<N>, const std::string& s) {
    if (N != 0 && s.size() > N)
      throw CodecError(Status::BoundExceeded, over(member_, "string", s.size(), N));
    // A CDR string ends at its NUL: one inside would cut it short on the wire.
    if (s.find('\0') != std::string::npos) {
      std::string what = "a NUL character inside";
      if (member_ != nullptr) {
        what += " member '";
        what += member_;
        what += "'";
      }
      throw CodecError(Status::BadString, what);
    }
    self().str_body(s);
  }
  template <uint64_t N>
  void put_shaped(Str<N>, const std::wstring& s) {
    if (N != 0 && s.size() > N)
      throw CodecError(Status::BoundExceeded, over(member_, "wstring", s.size(), N));
    self().str_body(s);
  }
  template <uint64_t N, class E, class V>
  void put_shaped(Seq<N, E>, const std::vector<V>& seq) {
    if (N != 0 && seq.size() > N) {
      throw CodecError(Status::BoundExceeded, over(member_, "sequence", seq.size(), N));
    }
    if (seq.size() > std::numeric_limits<uint32_t>::max()) {
      throw CodecError(Status::BoundExceeded, "sequence longer than 2^32-1");
    }
    auto mark = self().template collection_begin<E, V>();
    self().length(static_cast<uint32_t>(seq.size()));
    put_elements<E>(seq.data(), seq.size());
    self().collection_end(mark);
  }
  template <uint64_t N, class E>
  void put_shaped(Seq<N, E>, const std::vector<bool>& seq) {
    if (N != 0 && seq.size() > N) {
      throw CodecError(Status::BoundExceeded, over(member_, "sequence", seq.size(), N));
    }
    self().length(static_cast<uint32_t>(seq.size()));
    for (bool b : seq)
      self().prim(b);
  }
  template <class E, class V, size_t M>
  void put_shaped(Arr<E>, const std::array<V, M>& arr) {
    auto mark = self().template collection_begin<E, V>();
    put_elements<E>(arr.data(), M);
    self().collection_end(mark);
  }
  template <uint64_t N, class KS, class VS, class K, class V, class C, class A>
  void put_shaped(Map<N, KS, VS>, const std::map<K, V, C, A>& map) {
    if (N != 0 && map.size() > N) {
      throw CodecError(Status::BoundExceeded, over(member_, "map", map.size(), N));
    }
    if (map.size() > std::numeric_limits<uint32_t>::max()) {
      throw CodecError(Status::BoundExceeded, "map larger than 2^32-1");
    }
    auto mark = self().template collection_begin<Map<N, KS, VS>, std::map<K, V, C, A>>();
    self().length(static_cast<uint32_t>(map.size()));
    for (const auto& [k, v] : map) {
      put<KS>(k);
      put<VS>(v);
    }
    self().collection_end(mark);
  }

  template <class E, class V>
  void put_elements(const V* p, size_t n) {
    if constexpr (std::is_same_v<E, Plain> && Primitive<V>) {
      if (n > 0) self().prim_array(p, n);
    } else {
      for (size_t i = 0; i < n; ++i)
        put<E>(p[i]);
    }
  }
};

// Writes through Fast-CDR into its buffer.
class Writer : public BasicWriter<Writer> {
 public:
  explicit Writer(eprosima::fastcdr::Cdr& cdr) : cdr_(cdr) {}

  template <Primitive V>
  void prim(V v) {
    if constexpr (std::is_same_v<V, long double>) {
      put_long_double(v);
    } else {
      cdr_ << v;
    }
  }
  template <Primitive V>
  void prim_array(const V* p, size_t n) {
    if constexpr (std::is_same_v<V, bool> || std::is_same_v<V, long double>) {
      for (size_t i = 0; i < n; ++i)
        prim(p[i]);
    } else {
      cdr_.serializeArray(p, n);
    }
  }
  void length(uint32_t n) { cdr_ << n; }
  void str_body(const std::string& s) { cdr_ << s; }
  void str_body(const std::wstring& s) { cdr_ << s; }

  struct ParamMark {
    char* length_field;
    char* value_start;
  };
  // `id` may carry kPidMustUnderstand (@must_understand members).
  ParamMark param_begin(uint16_t id) {
    if ((id & kPidIdMask) > 0x3F00 || (id & ~(kPidIdMask | kPidMustUnderstand)) != 0) {
      throw CodecError(Status::BadParameter, "member id above 0x3F00");
    }
    cdr_ << param_header(id);  // as one u32 so that it is aligned to 4
    char* value = cdr_.getCurrentPosition();
    cdr_.resetAlignment();
    return {value - 2, value};
  }
  void param_end(ParamMark m) {
    const size_t len = static_cast<size_t>(cdr_.getCurrentPosition() - m.value_start);
    if (len > 0xFFFF) throw CodecError(Status::BadParameter, "member longer than 65535 bytes");
    auto len16 = static_cast<uint16_t>(len);
    if (big_endian() != (std::endian::native == std::endian::big)) {
      len16 = static_cast<uint16_t>((len16 >> 8) | (len16 << 8));
    }
    std::memcpy(m.length_field, &len16, 2);
  }
  void sentinel() { cdr_ << param_header(kPidSentinel); }

 private:
  [[nodiscard]] bool big_endian() const {
    return cdr_.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS;
  }
  // A long double occupies 16 bytes on the wire as Fast-CDR writes it, but x86's 80-bit
  // format leaves 6 of them indeterminate; they are written as zero so that equal samples
  // encode to equal bytes. Two u64 halves give Fast-CDR's alignment and byte swap.
  void put_long_double(long double v) {
    std::array<unsigned char, 16> raw{};
    std::memcpy(raw.data(), &v, kLongDoubleBytes);
    uint64_t lo = 0;
    uint64_t hi = 0;
    std::memcpy(&lo, raw.data(), 8);
    std::memcpy(&hi, raw.data() + 8, 8);
    if (big_endian() == (std::endian::native == std::endian::little)) {
      cdr_ << hi << lo;  // the 16 bytes reversed as a whole
    } else {
      cdr_ << lo << hi;
    }
  }
  // `u16 id | u16 length(0)` as the u32 whose bytes in this stream's order are those.
  [[nodiscard]] uint32_t param_header(uint16_t id) const {
    return big_endian() ? uint32_t{id} << 16 : uint32_t{id};
  }

  eprosima::fastcdr::Cdr& cdr_;
};

// Computes the exact encoded size of a value without writing it.
class SizeCounter : public BasicWriter<SizeCounter> {
 public:
  explicit SizeCounter(size_t start = 0) : pos_(start), origin_(0) {}
  [[nodiscard]] size_t size() const { return pos_; }

  template <Primitive V>
  void prim(V) {
    advance(kPrimAlign<V>, kPrimSize<V>);
  }
  template <Primitive V>
  void prim_array(const V*, size_t n) {
    advance(kPrimAlign<V>, n * kPrimSize<V>);
  }
  void length(uint32_t) { advance(4, 4); }
  void str_body(const std::string& s) { advance(4, 4 + s.size() + 1); }
  void str_body(const std::wstring& s) { advance(4, 4 + 4 * s.size()); }

  struct ParamMark {
    size_t outer_origin;
  };
  ParamMark param_begin(uint16_t) {
    advance(4, 4);
    ParamMark m{origin_};
    origin_ = pos_;
    return m;
  }
  void param_end(ParamMark) {}  // the origin stays at the last value's start (docs/cdr.md)
  void sentinel() { advance(4, 4); }

 private:
  void advance(size_t align, size_t n) {
    const size_t rel = pos_ - origin_;
    pos_ += (align - rel % align) % align + n;
  }
  size_t pos_;
  size_t origin_;
};

// ============================================================================= reading
// Reads through Fast-CDR from a buffer of known size. Every length is validated against
// the bytes that remain and the IDL bound before anything is allocated.
class Reader {
 public:
  Reader(eprosima::fastcdr::Cdr& cdr, const char* end) : cdr_(cdr), end_(end) {}

  [[nodiscard]] size_t remaining() const {
    const char* cur = cdr_.getCurrentPosition();
    return cur < end_ ? static_cast<size_t>(end_ - cur) : 0;
  }

  template <class S = Plain, class V>
  void get(V& v) {
    if constexpr (std::is_same_v<S, Plain>) {
      if constexpr (std::is_same_v<V, bool>) {
        uint8_t b = 0;
        cdr_ >> b;
        if (b > 1) throw CodecError(Status::BadBoolean, "");
        v = b != 0;
      } else if constexpr (std::is_same_v<V, long double>) {
        uint64_t a = 0;
        uint64_t b = 0;
        cdr_ >> a >> b;
        const bool swapped = (cdr_.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS) ==
                             (std::endian::native == std::endian::little);
        std::array<unsigned char, 16> raw{};
        std::memcpy(raw.data(), swapped ? &b : &a, 8);
        std::memcpy(raw.data() + 8, swapped ? &a : &b, 8);
        v = 0;
        std::memcpy(&v, raw.data(), kLongDoubleBytes);
      } else if constexpr (Primitive<V>) {
        cdr_ >> v;
      } else if constexpr (std::is_enum_v<V>) {
        Codec<V>::read(*this, v);
      } else {
        if (++depth_ > kMaxNesting) throw CodecError(Status::NestingTooDeep, "");
        Codec<V>::read(*this, v);
        --depth_;
      }
    } else {
      get_shaped(S{}, v);
    }
  }

  struct Param {
    uint16_t id;
    bool must_understand;
    const char* value_end;
  };

  // Next parameter of a parameter list; nullopt at the sentinel.
  std::optional<Param> next_param() {
    uint32_t header = 0;  // `u16 id | u16 length`, read as one u32 aligned to 4
    cdr_ >> header;
    const bool big = cdr_.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS;
    const auto pid = static_cast<uint16_t>(big ? header >> 16 : header & 0xFFFF);
    const auto len = static_cast<uint16_t>(big ? header & 0xFFFF : header >> 16);
    if ((pid & kPidIdMask) == kPidSentinel) return std::nullopt;
    if ((pid & kPidIdMask) > 0x3F00) throw CodecError(Status::BadParameter, "reserved id");
    if (len > remaining()) throw CodecError(Status::LengthTooLarge, "parameter");
    const char* value_end = cdr_.getCurrentPosition() + len;
    cdr_.resetAlignment();
    return Param{static_cast<uint16_t>(pid & kPidIdMask), (pid & kPidMustUnderstand) != 0,
                 value_end};
  }
  // Moves past the rest of a parameter's value; the value may not overrun its length.
  void end_param(const Param& p) {
    const char* cur = cdr_.getCurrentPosition();
    if (cur > p.value_end) throw CodecError(Status::BadParameter, "value overruns its length");
    skip(static_cast<size_t>(p.value_end - cur));
  }
  void skip_param(const Param& p) {
    if (p.must_understand) {
      throw CodecError(Status::MissingMustUnderstand, "id " + std::to_string(p.id));
    }
    end_param(p);
  }

  template <class S = Plain, class V>
  void get_optional(uint16_t id, std::optional<V>& v) {
    auto p = next_param();
    if (!p || p->id != id) throw CodecError(Status::BadParameter, "optional member header");
    if (cdr_.getCurrentPosition() == p->value_end) {
      v.reset();
    } else {
      get<S>(v.emplace());
    }
    end_param(*p);
  }
  template <class S = Plain, class V>
  void get_param(const Param& p, V& v) {
    get<S>(v);
    end_param(p);
  }
  template <class S = Plain, class V>
  void get_param(const Param& p, std::optional<V>& v) {
    get<S>(v.emplace());
    end_param(p);
  }

  template <class V>
  void check_range(const V& v, const V& lo, const V& hi, const char* member) {
    if (v < lo || hi < v) throw CodecError(Status::OutOfRange, member);
  }

  // A length field: must fit in what remains when each element takes `min_elem` bytes.
  uint32_t length(uint64_t bound, size_t min_elem, const char* what) {
    uint32_t n = 0;
    cdr_ >> n;
    if (bound != 0 && n > bound) throw CodecError(Status::BoundExceeded, what);
    last_length_end_ = cdr_.getCurrentPosition();
    const size_t left = last_length_end_ < end_ ? static_cast<size_t>(end_ - last_length_end_) : 0;
    if (mul_size(n, min_elem) > left) throw CodecError(Status::LengthTooLarge, what);
    return n;
  }

 private:
  template <uint64_t N>
  void get_shaped(Str<N>, std::string& s) {
    const uint32_t n = length(0, 1, "string");
    if (n == 0) {  // tolerated: some writers encode "" without its NUL
      s.clear();
      return;
    }
    if (N != 0 && n - 1 > N) throw CodecError(Status::BoundExceeded, "string");
    if (last_length_end_[n - 1] != '\0') throw CodecError(Status::BadString, "");
    // Read through Fast-CDR (not Cdr::jump) so that it aligns the next value correctly.
    s.resize(n);
    cdr_.deserializeArray(s.data(), n);
    s.pop_back();  // the NUL
    // Only the last byte may be NUL: the writer would send a string with one inside as a
    // shorter one (and two map keys could then collide).
    if (s.find('\0') != std::string::npos) {
      throw CodecError(Status::BadString, "a NUL character inside the string");
    }
  }
  template <uint64_t N>
  void get_shaped(Str<N>, std::wstring& s) {
    const uint32_t n = length(N, 4, "wstring");
    s.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t c = 0;
      cdr_ >> c;
      s[i] = static_cast<wchar_t>(c);
    }
  }
  template <uint64_t N, class E, class V>
  void get_shaped(Seq<N, E>, std::vector<V>& seq) {
    const uint32_t n = length(N, min_elem_size<E, V>(), "sequence");
    seq.resize(n);
    get_elements<E>(seq.data(), n);
  }
  template <uint64_t N, class E>
  void get_shaped(Seq<N, E>, std::vector<bool>& seq) {
    const uint32_t n = length(N, 1, "sequence");
    seq.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      bool b = false;
      get(b);
      seq[i] = b;
    }
  }
  template <class E, class V, size_t M>
  void get_shaped(Arr<E>, std::array<V, M>& arr) {
    get_elements<E>(arr.data(), M);
  }
  template <uint64_t N, class KS, class VS, class K, class V, class C, class A>
  void get_shaped(Map<N, KS, VS>, std::map<K, V, C, A>& map) {
    const uint32_t n = length(N, min_elem_size<KS, K>() + min_elem_size<VS, V>(), "map");
    map.clear();
    for (uint32_t i = 0; i < n; ++i) {
      K k{};
      get<KS>(k);
      V v{};
      get<VS>(v);
      if (!map.emplace(std::move(k), std::move(v)).second) {
        throw CodecError(Status::DuplicateMapKey, "");
      }
    }
  }

  template <class E, class V>
  void get_elements(V* p, size_t n) {
    if constexpr (std::is_same_v<E, Plain> && Primitive<V> && !std::is_same_v<V, bool> &&
                  !std::is_same_v<V, long double>) {
      if (n > 0) {
        if (mul_size(n, kPrimSize<V>) > remaining()) {
          throw CodecError(Status::Truncated, "array");
        }
        cdr_.deserializeArray(p, n);
      }
    } else {
      for (size_t i = 0; i < n; ++i)
        get<E>(p[i]);
    }
  }

  // Moves over `n` bytes already known to be in the buffer. Reads them rather than using
  // Cdr::jump(), which leaves Fast-CDR's record of the last datum's size stale and so would
  // skip the alignment of the next value.
  void skip(size_t n) {
    std::array<char, 256> scratch{};
    while (n > 0) {
      const size_t chunk = n < scratch.size() ? n : scratch.size();
      cdr_.deserializeArray(scratch.data(), chunk);
      n -= chunk;
    }
  }

  // The least a sequence element can occupy on the wire; a lower bound that lets a
  // hostile length be rejected before the vector is resized.
  template <class E, class V>
  static constexpr size_t min_elem_size() {
    if constexpr (std::is_same_v<E, Plain> && Primitive<V>) {
      return kPrimSize<V>;
    } else if constexpr (std::is_same_v<E, Plain>) {
      return Codec<V>::kMinSize > 0 ? Codec<V>::kMinSize : 1;
    } else if constexpr (is_arr_shape<E>::value) {
      return 1;  // arrays of non-primitives: at least a byte each
    } else {
      return 4;  // strings and sequences: at least their length field
    }
  }

  eprosima::fastcdr::Cdr& cdr_;
  const char* end_;
  const char* last_length_end_ = nullptr;  // where the bytes after the last length start
  int depth_ = 0;
};

// Helpers for generated enum / bitmask codecs.
template <class E, class W>
void write_enum(W& w, E e) {
  w.prim(static_cast<uint32_t>(e));
}
template <class Bits, class U, class W>
void write_bits(W& w, Bits b) {
  w.prim(static_cast<U>(b));
}
template <class Bits, class U, class R>
Bits read_bits(R& r, uint32_t bit_bound) {
  U raw{};
  r.get(raw);
  if (bit_bound < 8 * sizeof(U) && (static_cast<uint64_t>(raw) >> bit_bound) != 0) {
    throw CodecError(Status::BadBitmask, "");
  }
  return static_cast<Bits>(raw);
}

// Bitsets (XTypes 1.3 7.3.1.2.1.x): the bitfields are packed from the least significant bit
// of one holder integer of the bitset's total width, which is what the wire carries. A
// value that does not fit its bitfield is refused rather than cut.
[[nodiscard]] constexpr uint64_t low_bits(unsigned width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}
class BitsetPacker {
 public:
  template <class V>
  void put(V v, unsigned offset, unsigned width, const char* field) {
    uint64_t raw = 0;
    if constexpr (std::is_same_v<V, bool>) {
      raw = v ? 1 : 0;
    } else if constexpr (std::is_signed_v<V>) {
      const auto s = static_cast<int64_t>(v);
      const int64_t hi = width >= 64 ? std::numeric_limits<int64_t>::max()
                                     : static_cast<int64_t>(low_bits(width - 1));
      if (s > hi || s < -hi - 1) throw CodecError(Status::OutOfRange, field);
      raw = static_cast<uint64_t>(s) & low_bits(width);
    } else {
      raw = static_cast<uint64_t>(v);
      if ((raw & ~low_bits(width)) != 0) throw CodecError(Status::OutOfRange, field);
    }
    bits_ |= raw << offset;
  }
  [[nodiscard]] uint64_t bits() const { return bits_; }

 private:
  uint64_t bits_ = 0;
};
template <class V>
[[nodiscard]] V unpack_bits(uint64_t holder, unsigned offset, unsigned width) {
  uint64_t raw = (holder >> offset) & low_bits(width);
  if constexpr (std::is_same_v<V, bool>) {
    return raw != 0;
  } else if constexpr (std::is_signed_v<V>) {
    if (width < 64 && ((raw >> (width - 1)) & 1) != 0) raw |= ~low_bits(width);  // sign-extend
    return static_cast<V>(static_cast<int64_t>(raw));
  } else {
    return static_cast<V>(raw);
  }
}
// Reads a bitset's holder; bits beyond the bitset's width are refused like a bitmask's.
template <class U, class R>
[[nodiscard]] U read_bitset_holder(R& r, unsigned total_bits) {
  U raw{};
  r.get(raw);
  if ((static_cast<uint64_t>(raw) & ~low_bits(total_bits)) != 0) {
    throw CodecError(Status::BadBitmask, "bitset");
  }
  return raw;
}

}  // namespace spindle::cdr

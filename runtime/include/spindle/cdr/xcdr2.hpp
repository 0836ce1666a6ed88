// XCDR2 (DDS-XTypes 1.3, 7.4.3): the encoding current DDS implementations use for appendable
// and mutable types. The same generated Codec<T> functions drive it as drive XCDR1; what
// differs lives here:
//   - 8- and 16-byte values are aligned to 4, not 8; a wchar is 2 bytes, a wstring is its
//     length in bytes then UTF-16 code units without a terminator;
//   - an appendable or mutable struct or union starts with a DHEADER (u32: the bytes that
//     follow it), as does a sequence or array whose elements are not primitive (strings,
//     enums, bitmasks, structs, unions, collections: the rule Cyclone DDS writes);
//   - each member of a mutable struct starts with an EMHEADER (u32: must-understand flag,
//     3-bit length code, 28-bit member id), and a length (NEXTINT) where the code says so;
//     no sentinel ends the list, the DHEADER does;
//   - an optional member of a final or appendable struct is a presence byte, then the value.
// Which length code a member gets follows Cyclone DDS, so that equal samples give equal
// bytes (docs/cdr.md, "XCDR2"). Alignment is relative to the end of the encapsulation header.
//
// Error model and threading as codec.hpp: CodecError inside, stack objects of one thread.
#pragma once

#include <spindle/cdr/codec.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spindle::cdr {

namespace xcdr2 {

// XCDR2 size and alignment of a primitive (codec.hpp's kPrimSizeIn, kPrimAlignIn).
template <Primitive T>
inline constexpr size_t kSize = kPrimSizeIn<T, Encoding::Xcdr2>;
template <Primitive T>
inline constexpr size_t kAlign = kPrimAlignIn<T, Encoding::Xcdr2>;

// EMHEADER length codes (XTypes 1.3, 7.4.3.4.2).
inline constexpr uint32_t kLc1 = 0, kLc2 = 1, kLc4 = 2, kLc8 = 3;
inline constexpr uint32_t kLcNextInt = 4;       // a u32 length follows the EMHEADER
inline constexpr uint32_t kLcAlsoNextInt = 5;   // the member's own first u32 is its length
inline constexpr uint32_t kLcAlsoNextInt4 = 6;  // ... its element count, of 4-byte elements
inline constexpr uint32_t kLcAlsoNextInt8 = 7;  // ... of 8-byte elements
inline constexpr uint32_t kMustUnderstandFlag = 0x80000000U;
inline constexpr uint32_t kMaxMemberId = 0x0FFFFFFFU;

constexpr uint32_t swap32(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00U) | ((v << 8) & 0xFF0000U) | (v << 24);
}

constexpr uint32_t code_of_size(size_t n) {
  return n == 1 ? kLc1 : n == 2 ? kLc2 : n == 4 ? kLc4 : n == 8 ? kLc8 : kLcNextInt;
}

// The length code of a mutable member of shape S and C++ type V, as Cyclone DDS chooses it.
template <class S, class V>
struct LengthCode {
  static constexpr uint32_t value = [] {
    if constexpr (Primitive<V>) {
      return code_of_size(kSize<V>);
    } else if constexpr (std::is_enum_v<V>) {
      return code_of_size(Codec<V>::kMinSize);  // an enum's or bitmask's wire integer
    } else {
      return kLcNextInt;  // structs, unions, bitsets
    }
  }();
};
template <uint64_t N, class V>
struct LengthCode<Str<N>, V> {
  static constexpr uint32_t value = kLcAlsoNextInt;  // string: its length counts its bytes
};
template <uint64_t N, class E, class V>
struct LengthCode<Seq<N, E>, V> {
  static constexpr uint32_t value = [] {
    using Elem = typename V::value_type;
    if constexpr (NeedsDheader<E, Elem>::value) {
      return kLcAlsoNextInt;  // the DHEADER
    } else if constexpr (kSize<Elem> == 1) {
      return kLcAlsoNextInt;
    } else if constexpr (kSize<Elem> == 4) {
      return kLcAlsoNextInt4;
    } else if constexpr (kSize<Elem> == 8) {
      return kLcAlsoNextInt8;
    } else {
      return kLcNextInt;
    }
  }();
};
template <class E, class V>
struct LengthCode<Arr<E>, V> {
  static constexpr uint32_t value =
      NeedsDheader<E, typename V::value_type>::value ? kLcAlsoNextInt : kLcNextInt;
};
template <uint64_t N, class KS, class VS, class V>
struct LengthCode<Map<N, KS, VS>, V> {
  static constexpr uint32_t value = kLcNextInt;
};

}  // namespace xcdr2

// ============================================================================= writing
// Writes XCDR2 into a caller's buffer, or only counts when the buffer is null. Positions are
// relative to the start of the body (after the encapsulation header).
class Xcdr2Writer : public BasicWriter<Xcdr2Writer> {
 public:
  Xcdr2Writer(std::byte* out, size_t capacity, Endianness endianness)
      : out_(out), capacity_(capacity), swap_(endianness != kNativeEndianness) {}
  // Counting only.
  Xcdr2Writer() = default;

  [[nodiscard]] size_t size() const { return pos_; }

  template <Primitive V>
  void prim(V v) {
    if constexpr (std::is_same_v<V, bool>) {
      const auto b = static_cast<uint8_t>(v ? 1 : 0);
      bytes(&b, 1);
    } else if constexpr (std::is_same_v<V, wchar_t>) {
      const auto c = static_cast<uint32_t>(v);
      if (c > 0xFFFF) throw CodecError(Status::OutOfRange, "a wchar beyond 16 bits (XCDR2)");
      number(static_cast<uint16_t>(c));
    } else if constexpr (std::is_same_v<V, long double>) {
      // 16 bytes as XCDR1 writes them (the unused ones zero), aligned to 4.
      std::array<unsigned char, 16> raw{};
      std::memcpy(raw.data(), &v, kLongDoubleBytes);
      align(4);
      if (swap_) {
        std::array<unsigned char, 16> rev{};
        for (size_t i = 0; i < 16; ++i)
          rev[i] = raw[15 - i];
        raw = rev;
      }
      bytes(raw.data(), 16);
    } else {
      number(v);
    }
  }
  template <Primitive V>
  void prim_array(const V* p, size_t n) {
    if constexpr (std::is_same_v<V, bool> || std::is_same_v<V, wchar_t> ||
                  std::is_same_v<V, long double>) {
      for (size_t i = 0; i < n; ++i)
        prim(p[i]);
    } else {
      align(xcdr2::kAlign<V>);
      if (!swap_ || sizeof(V) == 1) {
        bytes(p, mul_size(n, sizeof(V)));  // elements follow each other without padding
      } else {
        for (size_t i = 0; i < n; ++i)
          number(p[i]);
      }
    }
  }
  void length(uint32_t n) { number(n); }
  void str_body(const std::string& s) {
    if (s.size() >= std::numeric_limits<uint32_t>::max())
      throw CodecError(Status::BoundExceeded, "string longer than 2^32-2");
    number(static_cast<uint32_t>(s.size() + 1));
    bytes(s.data(), s.size());
    const char nul = 0;
    bytes(&nul, 1);
  }
  // UTF-16 code units, their number of bytes first, no terminator (XTypes 1.3, 7.4.3.5.2).
  void str_body(const std::wstring& s) {
    std::vector<uint16_t> units;
    units.reserve(s.size());
    for (const wchar_t w : s) {
      const auto c = static_cast<uint32_t>(w);
      if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        throw CodecError(Status::BadString, "a wstring character that is not Unicode");
      if (c < 0x10000) {
        units.push_back(static_cast<uint16_t>(c));
      } else {
        units.push_back(static_cast<uint16_t>(0xD800 + ((c - 0x10000) >> 10)));
        units.push_back(static_cast<uint16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
      }
    }
    if (units.size() > std::numeric_limits<uint32_t>::max() / 2)
      throw CodecError(Status::BoundExceeded, "wstring longer than 2^31-1 code units");
    number(static_cast<uint32_t>(2 * units.size()));
    for (const uint16_t u : units)
      number(u);
  }

  // A u32 reserved now and filled with the bytes written after it (DHEADER, NEXTINT).
  struct Mark {
    size_t at = 0;
    bool used = false;
  };

  template <class V>
  Mark aggregate_begin() {
    if constexpr (Codec<V>::kExtensibility != Extensibility::Final) {
      return reserve_length();
    } else {
      return {};
    }
  }
  void aggregate_end(Mark m) { fill_length(m); }
  template <class E, class C>
  Mark collection_begin() {
    if constexpr (NeedsDheader<E, C>::value) {
      return reserve_length();
    } else {
      return {};
    }
  }
  void collection_end(Mark m) { fill_length(m); }

  Mark optional_begin(MemberId, bool present) {
    prim(present);
    return {};
  }
  void optional_end(Mark) {}

  template <class S, class V>
  Mark member_begin(MemberId id) {
    if (id.id > xcdr2::kMaxMemberId)
      throw CodecError(Status::BadParameter, "member id above 0x0FFFFFFF");
    constexpr uint32_t lc = xcdr2::LengthCode<S, V>::value;
    const uint32_t flag = id.must_understand || id.key ? xcdr2::kMustUnderstandFlag : 0;
    number(flag | (lc << 28) | id.id);
    if constexpr (lc == xcdr2::kLcNextInt) {
      return reserve_length();
    } else {
      return {};
    }
  }
  void member_end(Mark m) { fill_length(m); }
  void sentinel() {}  // the DHEADER bounds a mutable type's members

  // Pads the body to a multiple of 4 (the encapsulation options say by how much).
  size_t pad_to_4() {
    const size_t before = pos_;
    align(4);
    return pos_ - before;
  }

 private:
  void align(size_t a) {
    const size_t pad = (a - pos_ % a) % a;
    if (pad == 0) return;
    static constexpr std::array<std::byte, 8> kZeros{};
    bytes(kZeros.data(), pad);
  }
  void bytes(const void* p, size_t n) {
    if (out_ != nullptr) {
      if (n > capacity_ - pos_)
        throw CodecError(Status::BufferTooSmall,
                         "XCDR2 body needs more than " + std::to_string(capacity_) + " bytes");
      if (n > 0) std::memcpy(out_ + pos_, p, n);
    }
    pos_ = add_size(pos_, n);
  }
  template <class V>
  void number(V v) {
    align(xcdr2::kAlign<V>);
    if constexpr (sizeof(V) == 1) {
      bytes(&v, 1);
    } else {
      std::array<unsigned char, sizeof(V)> raw{};
      std::memcpy(raw.data(), &v, sizeof(V));
      if (swap_) {
        for (size_t i = 0; i < sizeof(V) / 2; ++i)
          std::swap(raw[i], raw[sizeof(V) - 1 - i]);
      }
      bytes(raw.data(), sizeof(V));
    }
  }
  Mark reserve_length() {
    align(4);
    Mark m{pos_, true};
    number(uint32_t{0});
    return m;
  }
  void fill_length(Mark m) {
    if (!m.used) return;
    const size_t n = pos_ - m.at - 4;
    if (n > std::numeric_limits<uint32_t>::max())
      throw CodecError(Status::BoundExceeded, "a struct or collection over 4 GiB");
    if (out_ == nullptr) return;
    auto v = static_cast<uint32_t>(n);
    if (swap_) v = xcdr2::swap32(v);
    std::memcpy(out_ + m.at, &v, 4);
  }

  std::byte* out_ = nullptr;
  size_t capacity_ = 0;
  size_t pos_ = 0;
  bool swap_ = false;
};

// ============================================================================= reading
// Reads XCDR2 from untrusted bytes (the body, after the encapsulation header). Every length
// — DHEADER, NEXTINT, sequence count — is checked against the bytes that remain before
// anything is allocated; a member never reads past the length its header gives.
class Xcdr2Reader {
 public:
  Xcdr2Reader(const std::byte* body, size_t size, Endianness endianness)
      : in_(body), end_(size), swap_(endianness != kNativeEndianness) {}

  [[nodiscard]] size_t position() const { return pos_; }
  [[nodiscard]] size_t remaining() const { return pos_ < end_ ? end_ - pos_ : 0; }

  template <class S = Plain, class V>
  void get(V& v) {
    if constexpr (std::is_same_v<S, Plain>) {
      if constexpr (std::is_same_v<V, bool>) {
        uint8_t b = 0;
        number(b);
        if (b > 1) throw CodecError(Status::BadBoolean, "");
        v = b != 0;
      } else if constexpr (std::is_same_v<V, wchar_t>) {
        uint16_t c = 0;
        number(c);
        v = static_cast<wchar_t>(c);
      } else if constexpr (std::is_same_v<V, long double>) {
        align(4);
        std::array<unsigned char, 16> raw{};
        take(raw.data(), 16);
        if (swap_) {
          for (size_t i = 0; i < 8; ++i)
            std::swap(raw[i], raw[15 - i]);
        }
        v = 0;
        std::memcpy(&v, raw.data(), kLongDoubleBytes);
      } else if constexpr (Primitive<V>) {
        number(v);
      } else if constexpr (std::is_enum_v<V>) {
        Codec<V>::read(*this, v);
      } else {
        if (++depth_ > kMaxNesting) throw CodecError(Status::NestingTooDeep, "");
        if constexpr (Codec<V>::kExtensibility != Extensibility::Final) {
          const size_t outer = enter_length("struct or union");
          Codec<V>::read(*this, v);
          leave(outer);  // members appended by a newer version of the type are skipped
        } else {
          Codec<V>::read(*this, v);
        }
        --depth_;
      }
    } else {
      get_shaped(S{}, v);
    }
  }

  struct Param {
    uint32_t id;
    bool must_understand;
    size_t value_end;
  };

  // The next member of a mutable struct; nullopt where its DHEADER ends.
  std::optional<Param> next_param() {
    // The last member may end unaligned where the DHEADER does: no padding follows it.
    if (pos_ + (4 - pos_ % 4) % 4 >= end_) return std::nullopt;
    align(4);
    uint32_t h = 0;
    number(h);
    const uint32_t lc = (h >> 28) & 7;
    Param p{h & xcdr2::kMaxMemberId, (h & xcdr2::kMustUnderstandFlag) != 0, 0};
    uint64_t len = 0;
    if (lc <= xcdr2::kLc8) {
      len = uint64_t{1} << lc;
    } else if (lc == xcdr2::kLcNextInt) {
      uint32_t n = 0;
      number(n);
      len = n;
    } else {
      if (end_ - pos_ < 4) throw CodecError(Status::Truncated, "member length");
      uint32_t n = 0;
      std::memcpy(&n, in_ + pos_, 4);
      if (swap_) n = xcdr2::swap32(n);
      len = 4 + uint64_t{n} * (lc == xcdr2::kLcAlsoNextInt    ? 1
                               : lc == xcdr2::kLcAlsoNextInt4 ? 4
                                                              : 8);
    }
    if (len > end_ - pos_) throw CodecError(Status::LengthTooLarge, "member");
    p.value_end = pos_ + static_cast<size_t>(len);
    return p;
  }
  void end_param(const Param& p) {
    if (pos_ > p.value_end) throw CodecError(Status::BadParameter, "value overruns its length");
    pos_ = p.value_end;
  }
  void skip_param(const Param& p) {
    if (p.must_understand)
      throw CodecError(Status::MissingMustUnderstand, "id " + std::to_string(p.id));
    end_param(p);
  }
  template <class S = Plain, class V>
  void get_param(const Param& p, V& v) {
    const size_t outer = end_;
    end_ = p.value_end;  // the value may not read past its member's length
    get<S>(v);
    end_ = outer;
    end_param(p);
  }
  template <class S = Plain, class V>
  void get_param(const Param& p, std::optional<V>& v) {
    get_param<S>(p, v.emplace());
  }

  // An optional member of a final or appendable struct: its presence byte, then the value.
  template <class S = Plain, class V>
  void get_optional(uint32_t, std::optional<V>& v) {
    bool present = false;
    get(present);
    if (present) {
      get<S>(v.emplace());
    } else {
      v.reset();
    }
  }

  template <class V>
  void check_range(const V& v, const V& lo, const V& hi, const char* member) {
    if (v < lo || hi < v) throw CodecError(Status::OutOfRange, member);
  }

  uint32_t length(uint64_t bound, size_t min_elem, const char* what) {
    uint32_t n = 0;
    number(n);
    if (bound != 0 && n > bound) throw CodecError(Status::BoundExceeded, what);
    if (mul_size(n, min_elem) > remaining()) throw CodecError(Status::LengthTooLarge, what);
    return n;
  }

 private:
  void align(size_t a) {
    const size_t pad = (a - pos_ % a) % a;
    if (pad > remaining()) throw CodecError(Status::Truncated, "");
    pos_ += pad;
  }
  void take(void* p, size_t n) {
    if (n > remaining()) throw CodecError(Status::Truncated, "");
    std::memcpy(p, in_ + pos_, n);
    pos_ += n;
  }
  template <class V>
  void number(V& v) {
    align(xcdr2::kAlign<V>);
    std::array<unsigned char, sizeof(V)> raw{};
    take(raw.data(), sizeof(V));
    if (swap_) {
      for (size_t i = 0; i < sizeof(V) / 2; ++i)
        std::swap(raw[i], raw[sizeof(V) - 1 - i]);
    }
    std::memcpy(&v, raw.data(), sizeof(V));
  }
  // Reads a DHEADER and bounds what follows by it; returns the bound to restore.
  size_t enter_length(const char* what) {
    uint32_t n = 0;
    number(n);
    if (n > remaining()) throw CodecError(Status::LengthTooLarge, what);
    const size_t outer = end_;
    end_ = pos_ + n;
    return outer;
  }
  void leave(size_t outer) {
    pos_ = end_;
    end_ = outer;
  }

  template <uint64_t N>
  void get_shaped(Str<N>, std::string& s) {
    const uint32_t n = length(0, 1, "string");
    if (n == 0) {  // tolerated, as in XCDR1
      s.clear();
      return;
    }
    if (N != 0 && n - 1 > N) throw CodecError(Status::BoundExceeded, "string");
    if (static_cast<char>(in_[pos_ + n - 1]) != '\0') throw CodecError(Status::BadString, "");
    s.assign(reinterpret_cast<const char*>(in_ + pos_), n - 1);
    pos_ += n;
    if (s.find('\0') != std::string::npos)
      throw CodecError(Status::BadString, "a NUL character inside the string");
  }
  template <uint64_t N>
  void get_shaped(Str<N>, std::wstring& s) {
    const uint32_t bytes = length(0, 1, "wstring");
    if (bytes % 2 != 0) throw CodecError(Status::BadString, "a wstring of an odd byte count");
    s.clear();
    for (uint32_t i = 0; i < bytes / 2; ++i) {
      uint16_t u = 0;
      number(u);
      if (u >= 0xD800 && u <= 0xDBFF) {
        uint16_t lo = 0;
        if (++i >= bytes / 2) throw CodecError(Status::BadString, "a lone surrogate");
        number(lo);
        if (lo < 0xDC00 || lo > 0xDFFF) throw CodecError(Status::BadString, "a lone surrogate");
        s.push_back(static_cast<wchar_t>(0x10000 + ((uint32_t{u} - 0xD800) << 10) +
                                         (uint32_t{lo} - 0xDC00)));
      } else if (u >= 0xDC00 && u <= 0xDFFF) {
        throw CodecError(Status::BadString, "a lone surrogate");
      } else {
        s.push_back(static_cast<wchar_t>(u));
      }
      if (N != 0 && s.size() > N) throw CodecError(Status::BoundExceeded, "wstring");
    }
  }
  template <uint64_t N, class E, class V>
  void get_shaped(Seq<N, E>, std::vector<V>& seq) {
    size_t outer = 0;
    constexpr bool dheader = NeedsDheader<E, V>::value;
    if constexpr (dheader) outer = enter_length("sequence");
    const uint32_t n = length(N, min_elem_size<E, V>(), "sequence");
    seq.resize(n);
    if constexpr (std::is_same_v<V, bool>) {
      for (uint32_t i = 0; i < n; ++i) {
        bool b = false;
        get(b);
        seq[i] = b;
      }
    } else {
      get_elements<E>(seq.data(), n);
    }
    if constexpr (dheader) leave(outer);
  }
  template <class E, class V, size_t M>
  void get_shaped(Arr<E>, std::array<V, M>& arr) {
    size_t outer = 0;
    constexpr bool dheader = NeedsDheader<E, V>::value;
    if constexpr (dheader) outer = enter_length("array");
    get_elements<E>(arr.data(), M);
    if constexpr (dheader) leave(outer);
  }
  template <uint64_t N, class KS, class VS, class K, class V, class C, class A>
  void get_shaped(Map<N, KS, VS>, std::map<K, V, C, A>& map) {
    size_t outer = 0;
    constexpr bool dheader = NeedsDheader<Map<N, KS, VS>, std::map<K, V, C, A>>::value;
    if constexpr (dheader) outer = enter_length("map");
    const uint32_t n = length(N, min_elem_size<KS, K>() + min_elem_size<VS, V>(), "map");
    map.clear();
    for (uint32_t i = 0; i < n; ++i) {
      K k{};
      get<KS>(k);
      V v{};
      get<VS>(v);
      if (!map.emplace(std::move(k), std::move(v)).second)
        throw CodecError(Status::DuplicateMapKey, "");
    }
    if constexpr (dheader) leave(outer);
  }

  template <class E, class V>
  void get_elements(V* p, size_t n) {
    if constexpr (std::is_same_v<E, Plain> && Primitive<V> && !std::is_same_v<V, bool> &&
                  !std::is_same_v<V, wchar_t> && !std::is_same_v<V, long double>) {
      if (n == 0) return;
      align(xcdr2::kAlign<V>);
      if (mul_size(n, sizeof(V)) > remaining()) throw CodecError(Status::Truncated, "array");
      std::memcpy(p, in_ + pos_, n * sizeof(V));
      pos_ += n * sizeof(V);
      if (swap_ && sizeof(V) > 1) {
        for (size_t i = 0; i < n; ++i) {
          std::array<unsigned char, sizeof(V)> raw{};
          std::memcpy(raw.data(), &p[i], sizeof(V));
          for (size_t k = 0; k < sizeof(V) / 2; ++k)
            std::swap(raw[k], raw[sizeof(V) - 1 - k]);
          std::memcpy(&p[i], raw.data(), sizeof(V));
        }
      }
    } else {
      for (size_t i = 0; i < n; ++i)
        get<E>(p[i]);
    }
  }

  template <class E, class V>
  static constexpr size_t min_elem_size() {
    if constexpr (std::is_same_v<E, Plain> && Primitive<V>) {
      return xcdr2::kSize<V>;
    } else if constexpr (std::is_same_v<E, Plain> && std::is_enum_v<V>) {
      return Codec<V>::kMinSize;  // the enum's or bitmask's integer
    } else if constexpr (std::is_same_v<E, Plain> || is_arr_shape<E>::value) {
      return 1;  // Codec<V>::kMinSize is XCDR1's, whose alignment can be the larger
    } else {
      return 4;
    }
  }

  const std::byte* in_;
  size_t pos_ = 0;
  size_t end_;
  bool swap_;
  int depth_ = 0;
};

}  // namespace spindle::cdr

// Entry points for turning samples into encapsulated CDR and back: into a caller's buffer
// (an SMC slot, with no intermediate copy), into a vector, and out of untrusted bytes.
// Also the DDS key hash.
//
// Threading: free functions; no shared state.
#pragma once

#include <spindle/cdr/codec.hpp>
#include <spindle/cdr/xcdr2.hpp>

#include <fastcdr/exceptions/BadParamException.h>
#include <fastcdr/exceptions/NotEnoughMemoryException.h>

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace spindle::cdr {

// Encapsulation header (RTPS 10.5, XTypes 1.3 7.6.3.1.2): 2 bytes representation id, 2 bytes
// options (XCDR2: the low two bits count the padding bytes that end the body).
//   XCDR1: 0x0000 CDR_BE    0x0001 CDR_LE    0x0002 PL_CDR_BE   0x0003 PL_CDR_LE
//   XCDR2: 0x0006 CDR2_BE   0x0007 CDR2_LE   0x0008 D_CDR2_BE   0x0009 D_CDR2_LE
//          0x000a PL_CDR2_BE 0x000b PL_CDR2_LE  (final, appendable, mutable types)
inline constexpr size_t kEncapsulationSize = 4;

// The encodings a type may be written in (its @data_representation; both by default) and
// the one a writer uses unless told otherwise (docs/cdr.md, "Which encoding").
template <class T>
[[nodiscard]] constexpr uint8_t representations() {
  if constexpr (requires { Codec<T>::kRepresentations; }) {
    return Codec<T>::kRepresentations;
  } else {
    return kXcdr1Bit | kXcdr2Bit;
  }
}
template <class T>
[[nodiscard]] constexpr Encoding default_encoding() {
  if constexpr (requires { Codec<T>::kEncoding; }) {
    return Codec<T>::kEncoding;
  } else {
    return Encoding::Xcdr1;
  }
}

// The representation id of T's samples in an encoding and byte order.
template <class T>
[[nodiscard]] constexpr uint8_t representation_id(Encoding e, Endianness endianness) {
  constexpr Extensibility x = Codec<T>::kExtensibility;
  const uint8_t le = endianness == Endianness::Little ? 1 : 0;
  if (e == Encoding::Xcdr1) return static_cast<uint8_t>((x == Extensibility::Mutable ? 2 : 0) | le);
  return static_cast<uint8_t>((x == Extensibility::Final        ? 6
                               : x == Extensibility::Appendable ? 8
                                                                : 10) |
                              le);
}

struct Result {
  Status status = Status::Ok;
  size_t size = 0;     // bytes written (serialize) or consumed (deserialize)
  std::string detail;  // human-readable cause when !ok()
  [[nodiscard]] bool ok() const { return status == Status::Ok; }
  explicit operator bool() const { return ok(); }
};

namespace detail {
inline eprosima::fastcdr::Cdr::Endianness to_fastcdr(Endianness e) {
  return e == Endianness::Big ? eprosima::fastcdr::Cdr::BIG_ENDIANNESS
                              : eprosima::fastcdr::Cdr::LITTLE_ENDIANNESS;
}
template <class Fn>
Result guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const CodecError& e) {
    return {e.status(), 0, e.what()};
  } catch (const eprosima::fastcdr::exception::NotEnoughMemoryException& e) {
    return {Status::Truncated, 0, e.what()};
  } catch (const eprosima::fastcdr::exception::BadParamException& e) {
    return {Status::BadEncapsulation, 0, e.what()};
  }
}
inline Result not_allowed(Encoding e) {
  return {Status::BadEncapsulation, 0,
          std::string(e == Encoding::Xcdr2 ? "XCDR2" : "XCDR1") +
              " is not among the type's data representations (@data_representation)"};
}
}  // namespace detail

// Highest encoded size of any T including the encapsulation header (and, in XCDR2, the
// padding that ends it); kUnbounded when T has an unbounded string or sequence somewhere.
template <class T, Encoding E = default_encoding<T>()>
[[nodiscard]] constexpr size_t max_serialized_size() {
  const size_t body = MaxSize<Plain, T, E>::at(0);
  return add_size(kEncapsulationSize, E == Encoding::Xcdr2 ? align_to(body, 4) : body);
}

// Exact encoded size of `sample`, encapsulation header included.
template <class T>
[[nodiscard]] size_t serialized_size(const T& sample, Encoding e = default_encoding<T>()) {
  if (e == Encoding::Xcdr2) {
    Xcdr2Writer counter;
    counter.put(sample);
    counter.pad_to_4();
    return kEncapsulationSize + counter.size();
  }
  SizeCounter counter;
  Codec<T>::write(counter, sample);  // a mutable type's codec writes its own sentinel
  return kEncapsulationSize + counter.size();
}

// Writes `sample` into `out` (header + body). On BufferTooSmall nothing useful is in `out`.
template <class T>
[[nodiscard]] Result serialize(const T& sample, std::span<std::byte> out,
                               Endianness endianness = kNativeEndianness,
                               Encoding e = default_encoding<T>()) {
  if ((representations<T>() & bit_of(e)) == 0) return detail::not_allowed(e);
  if (e == Encoding::Xcdr2) {
    return detail::guarded([&]() -> Result {
      if (out.size() < kEncapsulationSize)
        return {Status::BufferTooSmall, 0, "no room for the encapsulation header"};
      Xcdr2Writer w(out.data() + kEncapsulationSize, out.size() - kEncapsulationSize, endianness);
      w.put(sample);
      const size_t pad = w.pad_to_4();
      out[0] = std::byte{0};
      out[1] = std::byte{representation_id<T>(e, endianness)};
      out[2] = std::byte{0};
      out[3] = static_cast<std::byte>(pad);
      return {Status::Ok, kEncapsulationSize + w.size(), {}};
    });
  }
  return detail::guarded([&]() -> Result {
    eprosima::fastcdr::FastBuffer buffer(reinterpret_cast<char*>(out.data()), out.size());
    eprosima::fastcdr::Cdr cdr(buffer, detail::to_fastcdr(endianness),
                               eprosima::fastcdr::Cdr::DDS_CDR);
    constexpr bool pl = Codec<T>::kExtensibility == Extensibility::Mutable;
    cdr.setDDSCdrPlFlag(pl ? eprosima::fastcdr::Cdr::DDS_CDR_WITH_PL
                           : eprosima::fastcdr::Cdr::DDS_CDR_WITHOUT_PL);
    try {
      cdr.serialize_encapsulation();
      Writer w(cdr);
      Codec<T>::write(w, sample);
    } catch (const eprosima::fastcdr::exception::NotEnoughMemoryException& full) {
      return {Status::BufferTooSmall, 0, full.what()};
    }
    return {Status::Ok, cdr.getSerializedDataLength(), {}};
  });
}

template <class T>
[[nodiscard]] Result serialize(const T& sample, std::vector<std::byte>& out,
                               Endianness endianness = kNativeEndianness,
                               Encoding e = default_encoding<T>()) {
  if ((representations<T>() & bit_of(e)) == 0) {
    out.clear();
    return detail::not_allowed(e);
  }
  size_t size = 0;
  Result counted = detail::guarded([&]() -> Result {
    size = serialized_size(sample, e);
    return {};
  });
  if (!counted.ok()) {
    out.clear();
    return counted;
  }
  out.assign(size, std::byte{0});  // padding bytes are zero, so equal samples give equal bytes
  Result r = serialize(sample, std::span<std::byte>(out), endianness, e);
  out.resize(r.ok() ? r.size : 0);
  return r;
}

// Reads one encapsulated sample from untrusted bytes, in whichever of T's encodings the
// header names. `sample` is unspecified on error.
template <class T>
[[nodiscard]] Result deserialize(std::span<const std::byte> in, T& sample) {
  if (in.size() < kEncapsulationSize) {
    return {Status::Truncated, 0, "shorter than the encapsulation header"};
  }
  const auto kind = static_cast<uint8_t>(in[1]);
  const Encoding e = kind <= 3 ? Encoding::Xcdr1 : Encoding::Xcdr2;
  const Endianness endianness = (kind & 1) != 0 ? Endianness::Little : Endianness::Big;
  if (static_cast<uint8_t>(in[0]) != 0 || (kind > 3 && (kind < 6 || kind > 11)) ||
      kind != representation_id<T>(e, endianness) || (representations<T>() & bit_of(e)) == 0) {
    const bool pl = Codec<T>::kExtensibility == Extensibility::Mutable;
    std::string want;
    if ((representations<T>() & kXcdr1Bit) != 0) want += pl ? "PL_CDR" : "CDR";
    if ((representations<T>() & kXcdr2Bit) != 0) {
      if (!want.empty()) want += " or ";
      want += Codec<T>::kExtensibility == Extensibility::Final ? "CDR2" : pl ? "PL_CDR2" : "D_CDR2";
    }
    return {Status::BadEncapsulation, 0,
            "representation " + std::to_string(static_cast<int>(in[0])) + "/" +
                std::to_string(static_cast<int>(kind)) + ", expected " + want};
  }
  if (e == Encoding::Xcdr2) {
    return detail::guarded([&]() -> Result {
      Xcdr2Reader r(in.data() + kEncapsulationSize, in.size() - kEncapsulationSize, endianness);
      r.get(sample);
      const size_t pad = static_cast<uint8_t>(in[3]) & 3U;
      const size_t used = kEncapsulationSize + r.position();
      return {Status::Ok, used + pad <= in.size() ? used + pad : used, {}};
    });
  }
  return detail::guarded([&]() -> Result {
    // Fast-CDR only reads through a non-const pointer; it never writes while deserializing.
    auto* data = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
    eprosima::fastcdr::FastBuffer buffer(data, in.size());
    eprosima::fastcdr::Cdr cdr(buffer, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                               eprosima::fastcdr::Cdr::DDS_CDR);
    cdr.read_encapsulation();
    Reader r(cdr, data + in.size());
    Codec<T>::read(r, sample);  // a mutable type's codec reads through its sentinel
    return {Status::Ok, cdr.getSerializedDataLength(), {}};
  });
}

// ----------------------------------------------------------------------------- key hash
using KeyHash = std::array<uint8_t, 16>;

// MD5 of `bytes` (OpenSSL).
[[nodiscard]] inline KeyHash md5(std::span<const std::byte> bytes) {
  KeyHash out{};
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_md5(), nullptr) != 1 ||
      len != out.size()) {
    throw std::runtime_error("OpenSSL MD5 failed");
  }
  return out;
}

// The DDS key hash: the key members serialized as big-endian CDR (no header); the bytes
// zero-padded to 16 when every key of the type fits in 16 bytes, else their MD5.
template <class T>
[[nodiscard]] KeyHash key_hash(const T& sample) {
  SizeCounter counter;
  Codec<T>::write_key(counter, sample);
  const size_t size = counter.size();
  // Zeroed memory: Fast-CDR leaves padding untouched and the hash covers it.
  std::array<char, 256> small{};
  std::vector<char> large;
  char* memory = small.data();
  if (size > small.size()) {
    large.assign(size, 0);
    memory = large.data();
  }
  eprosima::fastcdr::FastBuffer buffer(memory, size > small.size() ? size : small.size());
  eprosima::fastcdr::Cdr cdr(buffer, eprosima::fastcdr::Cdr::BIG_ENDIANNESS,
                             eprosima::fastcdr::Cdr::CORBA_CDR);
  Writer w(cdr);
  Codec<T>::write_key(w, sample);
  const auto len = cdr.getSerializedDataLength();
  if (Codec<T>::key_max_size(0) <= 16) {
    KeyHash hash{};
    std::memcpy(hash.data(), memory, len);
    return hash;
  }
  return md5(std::span<const std::byte>(reinterpret_cast<const std::byte*>(memory), len));
}

}  // namespace spindle::cdr

// Entry points for turning samples into encapsulated CDR and back: into a caller's buffer
// (an SMC slot, with no intermediate copy), into a vector, and out of untrusted bytes.
// Also the DDS key hash.
//
// Threading: free functions; no shared state.
#pragma once

#include <spindle/cdr/codec.hpp>

#include <fastcdr/exceptions/BadParamException.h>
#include <fastcdr/exceptions/NotEnoughMemoryException.h>

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace spindle::cdr {

// Encapsulation header (RTPS 10.5): 2 bytes representation id, 2 bytes options.
//   0x0000 CDR_BE   0x0001 CDR_LE   0x0002 PL_CDR_BE   0x0003 PL_CDR_LE
inline constexpr size_t kEncapsulationSize = 4;

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
}  // namespace detail

// Highest encoded size of any T including the encapsulation header; kUnbounded when T has
// an unbounded string or sequence somewhere.
template <class T>
[[nodiscard]] constexpr size_t max_serialized_size() {
  return add_size(kEncapsulationSize, Codec<T>::max_size(0));
}

// Exact encoded size of `sample`, encapsulation header included.
template <class T>
[[nodiscard]] size_t serialized_size(const T& sample) {
  SizeCounter counter;
  Codec<T>::write(counter, sample);  // a mutable type's codec writes its own sentinel
  return kEncapsulationSize + counter.size();
}

// Writes `sample` into `out` (header + body). On BufferTooSmall nothing useful is in `out`.
template <class T>
[[nodiscard]] Result serialize(const T& sample, std::span<std::byte> out,
                               Endianness endianness = kNativeEndianness) {
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
    } catch (const eprosima::fastcdr::exception::NotEnoughMemoryException& e) {
      return {Status::BufferTooSmall, 0, e.what()};
    }
    return {Status::Ok, cdr.getSerializedDataLength(), {}};
  });
}

template <class T>
[[nodiscard]] Result serialize(const T& sample, std::vector<std::byte>& out,
                               Endianness endianness = kNativeEndianness) {
  size_t size = 0;
  Result counted = detail::guarded([&]() -> Result {
    size = serialized_size(sample);
    return {};
  });
  if (!counted.ok()) {
    out.clear();
    return counted;
  }
  out.assign(size, std::byte{0});  // padding bytes are zero, so equal samples give equal bytes
  Result r = serialize(sample, std::span<std::byte>(out), endianness);
  out.resize(r.ok() ? r.size : 0);
  return r;
}

// Reads one encapsulated sample from untrusted bytes. `sample` is unspecified on error.
template <class T>
[[nodiscard]] Result deserialize(std::span<const std::byte> in, T& sample) {
  if (in.size() < kEncapsulationSize) {
    return {Status::Truncated, 0, "shorter than the encapsulation header"};
  }
  const auto kind = static_cast<uint8_t>(in[1]);
  constexpr bool pl = Codec<T>::kExtensibility == Extensibility::Mutable;
  if (static_cast<uint8_t>(in[0]) != 0 || kind > 3 || ((kind & 2) != 0) != pl) {
    return {Status::BadEncapsulation, 0,
            "representation " + std::to_string(static_cast<int>(in[0])) + "/" +
                std::to_string(static_cast<int>(kind)) +
                (pl ? ", expected PL_CDR" : ", expected CDR")};
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

// What the generated-code tests share: a sample's bytes (the encode must succeed) and a round
// trip in both byte orders that checks every size function against what was written.
#pragma once

#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace codec_check {

// The bytes of `sample` in XCDR1 (what the hand-built vectors and the hostile tests take
// apart) unless another encoding is asked for.
template <class T>
std::vector<std::byte> encode(const T& sample,
                              spindle::cdr::Endianness e = spindle::cdr::Endianness::Little,
                              spindle::cdr::Encoding enc = spindle::cdr::Encoding::Xcdr1) {
  std::vector<std::byte> out;
  const auto r = spindle::cdr::serialize(sample, out, e, enc);
  INFO(r.detail);
  REQUIRE(r.ok());
  return out;
}

template <class T, spindle::cdr::Encoding Enc>
void check_roundtrip_in(const T& sample) {
  using spindle::cdr::Endianness;
  constexpr size_t max = spindle::cdr::max_serialized_size<T, Enc>();
  for (Endianness e : {Endianness::Big, Endianness::Little}) {
    CAPTURE(e == Endianness::Big ? "big-endian" : "little-endian");
    std::vector<std::byte> bytes;
    const auto w = spindle::cdr::serialize(sample, bytes, e, Enc);
    INFO(w.detail);
    REQUIRE(w.ok());
    CHECK(w.size == bytes.size());
    CHECK(spindle::cdr::serialized_size(sample, Enc) == bytes.size());
    if (max != spindle::cdr::kUnbounded) CHECK(bytes.size() <= max);
    CHECK(static_cast<std::uint8_t>(bytes[1]) % 2 == (e == Endianness::Little ? 1 : 0));
    CHECK((static_cast<std::uint8_t>(bytes[1]) >= 6) == (Enc == spindle::cdr::Encoding::Xcdr2));
    T back;
    const auto r = spindle::cdr::deserialize(std::span<const std::byte>(bytes), back);
    INFO(r.detail);
    REQUIRE(r.ok());
    CHECK(r.size == bytes.size());
    CHECK(back == sample);
  }
}

// A round trip in both byte orders, in each encoding the type allows; the writer's default
// encoding is the type's.
template <class T>
void check_roundtrip(const T& sample) {
  using spindle::cdr::Encoding;
  if constexpr ((spindle::cdr::representations<T>() & spindle::cdr::kXcdr1Bit) != 0) {
    CAPTURE("XCDR1");
    check_roundtrip_in<T, Encoding::Xcdr1>(sample);
  }
  if constexpr ((spindle::cdr::representations<T>() & spindle::cdr::kXcdr2Bit) != 0) {
    CAPTURE("XCDR2");
    check_roundtrip_in<T, Encoding::Xcdr2>(sample);
  }
  std::vector<std::byte> bytes;
  REQUIRE(spindle::cdr::serialize(sample, bytes).ok());
  CHECK((static_cast<std::uint8_t>(bytes[1]) >= 6) ==
        (spindle::cdr::default_encoding<T>() == Encoding::Xcdr2));
}

}  // namespace codec_check

// What the generated-code tests share: a sample's bytes (the encode must succeed) and a round
// trip in both byte orders that checks every size function against what was written.
#pragma once

#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace codec_check {

template <class T>
std::vector<std::byte> encode(const T& sample,
                              spindle::cdr::Endianness e = spindle::cdr::Endianness::Little) {
  std::vector<std::byte> out;
  const auto r = spindle::cdr::serialize(sample, out, e);
  INFO(r.detail);
  REQUIRE(r.ok());
  return out;
}

template <class T>
void check_roundtrip(const T& sample) {
  using spindle::cdr::Endianness;
  for (Endianness e : {Endianness::Big, Endianness::Little}) {
    CAPTURE(e == Endianness::Big ? "big-endian" : "little-endian");
    std::vector<std::byte> bytes;
    const auto w = spindle::cdr::serialize(sample, bytes, e);
    INFO(w.detail);
    REQUIRE(w.ok());
    CHECK(w.size == bytes.size());
    CHECK(spindle::cdr::serialized_size(sample) == bytes.size());
    if (spindle::cdr::max_serialized_size<T>() != spindle::cdr::kUnbounded) {
      CHECK(bytes.size() <= spindle::cdr::max_serialized_size<T>());
    }
    CHECK(static_cast<std::uint8_t>(bytes[1]) % 2 == (e == Endianness::Little ? 1 : 0));
    T back;
    const auto r = spindle::cdr::deserialize(std::span<const std::byte>(bytes), back);
    INFO(r.detail);
    REQUIRE(r.ok());
    CHECK(r.size == bytes.size());
    CHECK(back == sample);
  }
}

}  // namespace codec_check

// Hostile buffers against every generated deserializer: every truncation, huge lengths,
// bad discriminators, enumerators and booleans, over-bound sequences and strings, garbage.
// Each must give an error, never a crash (this suite runs under ASan/UBSan).
#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <cstring>
#include <random>

#include "Sequence.hpp"
#include "Vectors.hpp"
#include "avionics.hpp"
#include "codec_check.hpp"
#include "gaps.hpp"
#include "samples.hpp"

using codec_check::encode;
using spindle::cdr::Encoding;
using spindle::cdr::Endianness;
using spindle::cdr::Status;

namespace {

template <class T>
spindle::cdr::Result decode(const std::vector<std::byte>& bytes, size_t len) {
  T out;
  return spindle::cdr::deserialize(std::span<const std::byte>(bytes.data(), len), out);
}

// Every truncation (in XCDR2: short of the padding that ends the sample) fails.
template <class T>
void every_truncation_fails(const T& sample, Encoding enc = Encoding::Xcdr1) {
  for (auto e : {Endianness::Big, Endianness::Little}) {
    const auto bytes = encode(sample, e, enc);
    REQUIRE(decode<T>(bytes, bytes.size()).ok());
    const size_t pad = enc == Encoding::Xcdr2 ? (static_cast<size_t>(bytes[3]) & 3U) : 0;
    for (size_t len = 0; len < bytes.size() - pad; ++len) {
      CAPTURE(len, bytes.size());
      const auto r = decode<T>(bytes, len);
      CHECK_FALSE(r.ok());
      CHECK_FALSE(r.detail.empty());
    }
  }
}

// Overwrites the u32 at `offset` (little-endian encoding) and decodes.
template <class T>
spindle::cdr::Result with_u32(std::vector<std::byte> bytes, size_t offset, uint32_t value) {
  std::memcpy(bytes.data() + offset, &value, 4);
  return decode<T>(bytes, bytes.size());
}

// Every single-byte corruption and random garbage: any result is fine except a crash.
template <class T>
void garbage_never_crashes(const T& sample, uint32_t seed, Encoding enc = Encoding::Xcdr1) {
  std::mt19937 rng(seed);
  const auto bytes = encode(sample, Endianness::Little, enc);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      auto copy = bytes;
      copy[i] = static_cast<std::byte>(rng());
      (void)decode<T>(copy, copy.size());
    }
  }
  for (int k = 0; k < 200; ++k) {
    std::vector<std::byte> noise(4 + rng() % 256);
    for (auto& b : noise)
      b = static_cast<std::byte>(rng());
    noise[0] = std::byte{0};
    noise[1] = bytes[1];
    (void)decode<T>(noise, noise.size());
  }
}

}  // namespace

TEST_CASE("every truncation of every type is rejected", "[hostile]") {
  every_truncation_fails(samples::primitives());
  every_truncation_fails(samples::strings());
  every_truncation_fails(samples::collections());
  every_truncation_fails(samples::derived());
  every_truncation_fails(samples::annotated(true));
  every_truncation_fails(samples::annotated(false));
  every_truncation_fails(samples::extensible(true));
  every_truncation_fails(samples::outer());
  every_truncation_fails(samples::legacy());
  every_truncation_fails(samples::tree());
  every_truncation_fails(samples::reopened());
}

TEST_CASE("huge sequence and string lengths are rejected before allocating", "[hostile]") {
  const auto c = samples::collections();
  const auto bytes = encode(c);
  // Offset 4: length of `longs` (first member).
  auto r = with_u32<Test::Collections>(bytes, 4, 0xFFFFFFFFU);
  CHECK(r.status == Status::LengthTooLarge);
  r = with_u32<Test::Collections>(bytes, 4, 1U << 28);
  CHECK(r.status == Status::LengthTooLarge);

  const auto s = encode(samples::strings());
  CHECK(with_u32<Test::Strings>(s, 4, 0x7FFFFFFFU).status == Status::LengthTooLarge);

  Bench::Sequence seq;
  seq.payload(std::vector<uint8_t>(64, 7));
  const auto sb = encode(seq);
  // writer_id (4) seq (8 @8) send_time (8) then payload length at offset 4 + 24.
  CHECK(with_u32<Bench::Sequence>(sb, 4 + 24, 65).status == Status::LengthTooLarge);
  CHECK(with_u32<Bench::Sequence>(sb, 4 + 24, 63).ok());  // shorter is fine, trailing bytes ignored
}

TEST_CASE("over-bound sequences and strings are rejected", "[hostile]") {
  // few_longs: sequence<long, 5>; write a valid 6-element encoding by hand.
  Test::Collections c;
  c.few_longs({1, 2, 3, 4, 5});
  auto bytes = encode(c);
  // longs is empty (length 0 at 4); few_longs length at 8, elements at 12..31.
  uint32_t six = 6;
  std::memcpy(bytes.data() + 8, &six, 4);
  bytes.insert(bytes.begin() + 32, 4, std::byte{0});
  CHECK(decode<Test::Collections>(bytes, bytes.size()).status == Status::BoundExceeded);

  // Strings.bounded is string<8>: offset of its length = 4 + 4 + len(unbounded)+1 aligned.
  Test::Strings s;
  s.bounded("12345678");
  auto sb = encode(s);
  // unbounded "" -> len 1 + NUL at 4..8, pad to 12; bounded length at 12.
  REQUIRE(sb[12] == std::byte{9});
  sb[12] = std::byte{10};
  sb.insert(sb.begin() + 16 + 8, std::byte{'x'});
  CHECK(decode<Test::Strings>(sb, sb.size()).status == Status::BoundExceeded);
}

TEST_CASE("bad discriminators, enumerators, booleans and bitmasks are rejected", "[hostile]") {
  Avionics::Navigation nav;
  nav.source(Avionics::NavSource::ILS);
  auto bytes = encode(nav);
  // aircraft_id at 4, source at 8, timestamp at 12 (8-aligned after the header), fix
  // discriminator at 20.
  CHECK(with_u32<Avionics::Navigation>(bytes, 8, 4).status == Status::BadEnumerator);
  CHECK(with_u32<Avionics::Navigation>(bytes, 20, 99).status == Status::BadEnumerator);
  CHECK(with_u32<Avionics::Navigation>(bytes, 20, 3).ok());

  Test::Derived d;
  d.by_bool().yes(1);
  auto db = encode(d);
  // Find the by_bool discriminator: encode with yes and no differ only there.
  Test::Derived d2 = d;
  d2.by_bool().no("", false);
  const auto db2 = encode(d2);
  size_t at = 0;
  while (at < db.size() && db[at] == db2[at])
    ++at;
  REQUIRE(at < db.size());
  db[at] = std::byte{2};
  CHECK(decode<Test::Derived>(db, db.size()).status == Status::BadBoolean);

  // Permissions has bit_bound 12: bits 12..15 must be clear.
  Test::Derived p;
  auto pb = encode(p);
  Test::Derived p2;
  p2.perms(Test::Permissions::READ);
  const auto pb2 = encode(p2);
  at = 0;
  while (at < pb.size() && pb[at] == pb2[at])
    ++at;
  REQUIRE(at + 1 < pb.size());
  pb[at + 1] = std::byte{0x10};  // bit 12
  CHECK(decode<Test::Derived>(pb, pb.size()).status == Status::BadBitmask);
}

TEST_CASE("bad encapsulation headers are rejected", "[hostile]") {
  auto bytes = encode(samples::primitives());
  bytes[0] = std::byte{1};
  CHECK(decode<Test::Primitives>(bytes, bytes.size()).status == Status::BadEncapsulation);
  bytes[0] = std::byte{0};
  bytes[1] = std::byte{3};  // PL_CDR_LE for a final type
  CHECK(decode<Test::Primitives>(bytes, bytes.size()).status == Status::BadEncapsulation);
  auto mb = encode(samples::extensible(true));
  mb[1] = std::byte{1};  // CDR_LE for a mutable type
  CHECK(decode<Test::Extensible>(mb, mb.size()).status == Status::BadEncapsulation);
}

TEST_CASE("parameter lists with bad lengths or unknown must-understand ids are rejected",
          "[hostile]") {
  const auto x = encode(samples::extensible(false));
  // First parameter header at 4: id 1, length 4 (little-endian: 01 00 04 00).
  CHECK(with_u32<Test::Extensible>(x, 4, (0xFFFFU << 16) | 1U).status == Status::LengthTooLarge);
  CHECK(with_u32<Test::Extensible>(x, 4, (4U << 16) | 0x4000U | 0x99U).status ==
        Status::MissingMustUnderstand);
  CHECK(with_u32<Test::Extensible>(x, 4, (4U << 16) | 0x99U).ok());  // unknown, skipped
  CHECK(with_u32<Test::Extensible>(x, 4, (2U << 16) | 1U).status == Status::BadParameter);
}

TEST_CASE("strings without their NUL are rejected", "[hostile]") {
  Test::Strings s;
  s.unbounded("abc");
  auto b = encode(s);
  REQUIRE(b[11] == std::byte{0});
  b[11] = std::byte{'!'};
  CHECK(decode<Test::Strings>(b, b.size()).status == Status::BadString);
}

TEST_CASE("a NUL inside a string is refused both ways", "[hostile]") {
  Test::Strings s;
  s.unbounded("abc");
  auto b = encode(s);
  b[9] = std::byte{0};  // "a\0c" with its NUL: the writer would have sent "a"
  CHECK(decode<Test::Strings>(b, b.size()).status == Status::BadString);
  s.unbounded(std::string("a\0c", 3));
  std::vector<std::byte> out;
  const auto r = spindle::cdr::serialize(s, out);
  CHECK(r.status == Status::BadString);
  CHECK_THAT(r.detail, Catch::Contains("NUL character inside") && Catch::Contains("Test::Strings"));
}

TEST_CASE("corrupted and random bytes never crash a deserializer", "[hostile]") {
  garbage_never_crashes(samples::primitives(), 1);
  garbage_never_crashes(samples::strings(), 2);
  garbage_never_crashes(samples::collections(), 3);
  garbage_never_crashes(samples::derived(), 4);
  garbage_never_crashes(samples::annotated(true), 5);
  garbage_never_crashes(samples::extensible(true), 6);
  garbage_never_crashes(samples::tree(), 7);
  garbage_never_crashes(samples::outer(), 8);
}

TEST_CASE("every truncation of every type is rejected in XCDR2", "[hostile][xcdr2]") {
  const auto x2 = Encoding::Xcdr2;
  every_truncation_fails(samples::primitives(), x2);
  every_truncation_fails(samples::strings(), x2);
  every_truncation_fails(samples::collections(), x2);
  every_truncation_fails(samples::derived(), x2);
  every_truncation_fails(samples::annotated(true), x2);
  every_truncation_fails(samples::annotated(false), x2);
  every_truncation_fails(samples::extensible(true), x2);
  every_truncation_fails(samples::outer(), x2);
  every_truncation_fails(samples::tree(), x2);
  every_truncation_fails(samples::reopened(), x2);
}

TEST_CASE("corrupted and random XCDR2 bytes never crash a deserializer", "[hostile][xcdr2]") {
  const auto x2 = Encoding::Xcdr2;
  garbage_never_crashes(samples::primitives(), 11, x2);
  garbage_never_crashes(samples::strings(), 12, x2);
  garbage_never_crashes(samples::collections(), 13, x2);
  garbage_never_crashes(samples::derived(), 14, x2);
  garbage_never_crashes(samples::annotated(true), 15, x2);
  garbage_never_crashes(samples::extensible(true), 16, x2);
  garbage_never_crashes(samples::tree(), 17, x2);
  garbage_never_crashes(samples::outer(), 18, x2);
}

// Test::Extensible in XCDR2, little-endian: DHEADER at 4, then member a's EMHEADER at 8
// (id 1, length code 2: 4 bytes) and its value at 12.
TEST_CASE("XCDR2 lengths and member headers from a hostile writer are rejected",
          "[hostile][xcdr2]") {
  const auto x = encode(samples::extensible(false), Endianness::Little, Encoding::Xcdr2);
  REQUIRE(static_cast<uint8_t>(x[1]) == 0x0b);  // PL_CDR2_LE
  uint32_t h = 0;
  std::memcpy(&h, x.data() + 8, 4);
  REQUIRE(h == 0x20000001U);
  CHECK(with_u32<Test::Extensible>(x, 4, 0x00FFFFFFU).status == Status::LengthTooLarge);
  CHECK(with_u32<Test::Extensible>(x, 8, 0xA0000099U).status == Status::MissingMustUnderstand);
  CHECK(with_u32<Test::Extensible>(x, 8, 0x20000099U).ok());  // unknown, skipped
  // A 1-byte member length under a 4-byte value: the value may not read past it.
  CHECK(with_u32<Test::Extensible>(x, 8, 0x00000001U).status == Status::Truncated);
  // NEXTINT past the DHEADER's end.
  CHECK(with_u32<Test::Extensible>(x, 8, 0x40000001U).status == Status::LengthTooLarge);
  // A representation that is not the type's: D_CDR2 for a mutable type, CDR2 for it.
  for (const int id : {0x09, 0x07, 0x05, 0x0c}) {
    auto y = x;
    y[1] = static_cast<std::byte>(id);
    CHECK(decode<Test::Extensible>(y, y.size()).status == Status::BadEncapsulation);
  }
  // A presence byte other than 0 or 1 (Xv::Opt{1, absent, absent}: its flags at 12 and 13).
  auto o = encode(Xv::Opt(1, std::nullopt, std::nullopt), Endianness::Little, Encoding::Xcdr2);
  REQUIRE(o.size() == 16);
  o[12] = std::byte{2};
  CHECK(decode<Xv::Opt>(o, o.size()).status == Status::BadBoolean);
}

TEST_CASE("a type's @data_representation is kept by writers and readers", "[hostile][xcdr2]") {
  Gaps::Plain1 p;  // @data_representation(XCDR1)
  p.a(3);
  STATIC_REQUIRE(spindle::cdr::representations<Gaps::Plain1>() == spindle::cdr::kXcdr1Bit);
  std::vector<std::byte> out;
  const auto w = spindle::cdr::serialize(p, out, Endianness::Little, Encoding::Xcdr2);
  CHECK(w.status == Status::BadEncapsulation);
  CHECK_THAT(w.detail, Catch::Contains("XCDR2"));
  // XCDR2 bytes of the same layout are refused by its reader.
  const std::vector<std::byte> x2{std::byte{0}, std::byte{7}, std::byte{0}, std::byte{0},
                                  std::byte{3}, std::byte{0}, std::byte{0}, std::byte{0}};
  const auto r = decode<Gaps::Plain1>(x2, x2.size());
  CHECK(r.status == Status::BadEncapsulation);
  CHECK_THAT(r.detail, Catch::Contains("expected CDR"));
}

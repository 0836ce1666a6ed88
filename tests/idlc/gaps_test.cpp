// The constructs of issue 23 in generated code: maps, bitsets, sequence and union keys,
// enum extensibility, @external, bitmask defaults, @optional(TRUE/FALSE) and user-declared
// annotations. Each serializes, deserializes (also from hostile bytes), compares and prints.
#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>
#include <spindle/detail/type_support.hpp>
#include <spindle/topic_traits.hpp>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <sstream>
#include <type_traits>

#include "codec_check.hpp"
#include "gaps.hpp"

using codec_check::check_roundtrip;
using codec_check::encode;
using eprosima::fastcdr::Cdr;
using spindle::cdr::Endianness;
using spindle::cdr::Status;

namespace {

template <class T>
spindle::cdr::Result decode(const std::vector<std::byte>& bytes, T& out) {
  return spindle::cdr::deserialize(std::span<const std::byte>(bytes), out);
}

// Encapsulated bytes written by direct Fast-CDR calls (zeroed memory, as the codec pads).
template <class Fn>
std::vector<std::byte> by_hand(Endianness e, Fn&& fn) {
  std::vector<char> memory(4096, 0);
  eprosima::fastcdr::FastBuffer buffer(memory.data(), memory.size());
  Cdr cdr(buffer, e == Endianness::Big ? Cdr::BIG_ENDIANNESS : Cdr::LITTLE_ENDIANNESS,
          Cdr::DDS_CDR);
  cdr.serialize_encapsulation();
  fn(cdr);
  const auto* p = reinterpret_cast<const std::byte*>(buffer.getBuffer());
  return {p, p + cdr.getSerializedDataLength()};
}

// Big-endian CDR without a header, as the key hash serializes a key.
template <class Fn>
std::vector<std::byte> big_endian_key(Fn&& fn) {
  std::vector<char> memory(4096, 0);
  eprosima::fastcdr::FastBuffer buffer(memory.data(), memory.size());
  Cdr cdr(buffer, Cdr::BIG_ENDIANNESS, Cdr::CORBA_CDR);
  fn(cdr);
  const auto* p = reinterpret_cast<const std::byte*>(buffer.getBuffer());
  return {p, p + cdr.getSerializedDataLength()};
}

Gaps::Maps maps() {
  Gaps::Maps m;
  m.by_name() = {{"one", 1}, {"two", 2}, {"", -1}};
  m.bounded() = {{3, "three"}, {-4, "minus4"}};
  m.nested() = {{Gaps::Level::HIGH, {1.5, 2.5}}, {Gaps::Level::LOW, {}}};
  m.points() = {{7, Common::Point(1, 2)}, {255, Common::Point(-3, 4)}};
  m.dict() = {{9, "nine"}};
  return m;
}

Gaps::Bits bits() {
  Gaps::Bits b;
  b.id(3);
  b.small().a(5);
  b.small().b(-7);
  b.padded().on(true);
  b.padded().count(4095);
  b.wider().on(true);
  b.wider().count(17);
  b.wider().more(0xFFFFF);
  b.wider().x(1);
  b.wider().y(3);
  b.full().all(0xFEDCBA9876543210ULL);
  b.flags(Gaps::Flags::B);
  b.t(1.5);
  b.marked(4);
  b.ext(Common::Point(8, 9));
  b.opt(12);
  b.notopt(13);
  b.mode(Gaps::Mode::MANUAL);
  b.phase(Gaps::Phase::TWO);
  return b;
}

}  // namespace

TEST_CASE("maps round-trip in both byte orders", "[gaps][map]") {
  check_roundtrip(maps());
  check_roundtrip(Gaps::Maps());
  Gaps::BoundedMap bm;
  bm.values() = {{1, 0.5}, {-2, 1e300}, {3, -1.0}, {4, 0.0}};
  check_roundtrip(bm);
}

TEST_CASE("a map encodes as its count then key/value pairs in key order", "[gaps][map][vectors]") {
  Gaps::BoundedMap bm;
  bm.values() = {{3, 4.0}, {1, 2.5}};
  for (Endianness e : {Endianness::Big, Endianness::Little}) {
    const auto expected =
        by_hand(e, [](Cdr& cdr) { cdr << uint32_t{2} << int16_t{1} << 2.5 << int16_t{3} << 4.0; });
    CHECK(encode(bm, e) == expected);
  }
}

TEST_CASE("a bounded map has a bounded size and refuses more entries than its bound",
          "[gaps][map][bounds]") {
  STATIC_REQUIRE(spindle::cdr::max_serialized_size<Gaps::BoundedMap>() != spindle::cdr::kUnbounded);
  STATIC_REQUIRE(spindle::cdr::max_serialized_size<Gaps::Maps>() == spindle::cdr::kUnbounded);
  Gaps::BoundedMap bm;
  for (int16_t k = 0; k < 4; ++k)
    bm.values()[k] = k;
  CHECK(spindle::cdr::serialized_size(bm) <= spindle::cdr::max_serialized_size<Gaps::BoundedMap>());
  bm.values()[4] = 4;  // five entries, bound 4
  std::vector<std::byte> out;
  const auto r = spindle::cdr::serialize(bm, out);
  CHECK(r.status == Status::BoundExceeded);  // the same error as an over-bound sequence
  CHECK(r.detail.find("map") != std::string::npos);
}

TEST_CASE("hostile map bytes are refused with a reason", "[gaps][map][hostile]") {
  const auto e = Endianness::Little;
  Gaps::BoundedMap out;
  SECTION("a count above the bound") {
    const auto bytes = by_hand(e, [](Cdr& cdr) {
      cdr << uint32_t{5};
      for (int16_t k = 0; k < 5; ++k)
        cdr << k << 1.0;
    });
    CHECK(decode(bytes, out).status == Status::BoundExceeded);
  }
  SECTION("a count larger than the bytes that follow") {
    Gaps::Maps m;
    const auto bytes = by_hand(e, [](Cdr& cdr) { cdr << uint32_t{0x7FFFFFFF}; });
    CHECK(decode(bytes, m).status == Status::LengthTooLarge);
  }
  SECTION("a key given twice") {
    const auto bytes =
        by_hand(e, [](Cdr& cdr) { cdr << uint32_t{2} << int16_t{1} << 2.0 << int16_t{1} << 3.0; });
    const auto r = decode(bytes, out);
    CHECK(r.status == Status::DuplicateMapKey);
    CHECK(r.detail == "duplicate map key");
  }
  SECTION("every truncation") {
    const auto bytes = encode(maps());
    for (size_t len = 0; len < bytes.size(); ++len) {
      Gaps::Maps m;
      CAPTURE(len);
      CHECK_FALSE(spindle::cdr::deserialize(std::span<const std::byte>(bytes.data(), len), m).ok());
    }
  }
}

TEST_CASE("bitsets round-trip and encode as one holder integer", "[gaps][bitset]") {
  check_roundtrip(bits());
  check_roundtrip(Gaps::Bits());
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const Gaps::Small&>().a()), uint8_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const Gaps::Small&>().b()), int8_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const Gaps::Padded&>().on()), bool>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const Gaps::Padded&>().count()), uint16_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const Gaps::Wider&>().more()), uint32_t>);
  STATIC_REQUIRE(spindle::cdr::Codec<Gaps::Small>::max_size(0) == 1);
  STATIC_REQUIRE(spindle::cdr::Codec<Gaps::Padded>::max_size(0) == 4);  // 17 bits
  STATIC_REQUIRE(spindle::cdr::Codec<Gaps::Wider>::max_size(0) == 8);   // 17 + 24 bits
  Gaps::Small s;
  s.a(5);
  s.b(-7);  // -7 in 5 bits is 0b11001
  for (Endianness e : {Endianness::Big, Endianness::Little}) {
    CHECK(encode(s, e) == by_hand(e, [](Cdr& cdr) { cdr << uint8_t{5 | (0x19 << 3)}; }));
  }
  Gaps::Wider w;
  w.on(true);
  w.count(2);
  w.more(3);
  w.y(1);
  // on: bit 0, padding 1..4, count 5..16, more 17..36, x 37..38, y 39..40.
  const uint64_t holder = 1ULL | (2ULL << 5) | (3ULL << 17) | (1ULL << 39);
  CHECK(encode(w, Endianness::Big) == by_hand(Endianness::Big, [&](Cdr& cdr) { cdr << holder; }));
}

TEST_CASE("a bitfield value that does not fit its width is refused", "[gaps][bitset][bounds]") {
  std::vector<std::byte> out;
  Gaps::Small s;
  s.a(8);  // 3 bits
  auto r = spindle::cdr::serialize(s, out);
  CHECK(r.status == Status::OutOfRange);
  CHECK(r.detail.find("Gaps::Small.a") != std::string::npos);
  s.a(0);
  s.b(16);  // signed 5 bits: -16..15
  CHECK(spindle::cdr::serialize(s, out).status == Status::OutOfRange);
  s.b(-16);
  CHECK(spindle::cdr::serialize(s, out).ok());
}

TEST_CASE("bits beyond a bitset's width are refused when decoding", "[gaps][bitset][hostile]") {
  Gaps::Padded p;  // 17 bits in a uint32
  const auto bad = by_hand(Endianness::Little, [](Cdr& cdr) { cdr << uint32_t{1U << 20}; });
  CHECK(decode(bad, p).status == Status::BadBitmask);
  const auto good = by_hand(Endianness::Little, [](Cdr& cdr) { cdr << uint32_t{1U | (7U << 5)}; });
  REQUIRE(decode(good, p).ok());
  CHECK(p.on());
  CHECK(p.count() == 7);
}

TEST_CASE("sequence and union keys hash their big-endian CDR through MD5", "[gaps][keyhash]") {
  using SK = spindle::topic_traits<Gaps::SeqKey>;
  STATIC_REQUIRE(SK::is_keyed);
  STATIC_REQUIRE(SK::key_hash_is_md5);
  STATIC_REQUIRE(spindle::topic_traits<Gaps::UnionKey>::is_keyed);
  STATIC_REQUIRE(spindle::topic_traits<Gaps::UnionKey>::key_hash_is_md5);

  Gaps::SeqKey sk;
  sk.ids({1, 2, 3});
  sk.payload("ignored by the key");
  const auto seq_bytes = big_endian_key(
      [](Cdr& cdr) { cdr << uint32_t{3} << int32_t{1} << int32_t{2} << int32_t{3}; });
  CHECK(spindle::cdr::key_hash(sk) == spindle::cdr::md5(seq_bytes));

  Gaps::UnionKey uk;
  uk.which().s("hello");
  uk.payload(9);
  const auto union_bytes =
      big_endian_key([](Cdr& cdr) { cdr << int16_t{2} << std::string("hello"); });
  CHECK(spindle::cdr::key_hash(uk) == spindle::cdr::md5(union_bytes));
}

TEST_CASE("keyed instances of sequence- and union-keyed types are told apart by key only",
          "[gaps][keyhash][instances]") {
  // The table DataWriter<T>/DataReader<T> use for instances.
  const auto& seq = spindle::detail::type_support<Gaps::SeqKey>();
  CHECK(seq.keyed);
  Gaps::SeqKey a;
  a.ids({1, 2});
  a.payload("first");
  Gaps::SeqKey b = a;
  b.payload("second write of the same instance");
  Gaps::SeqKey c = a;
  c.ids({1, 2, 0});
  CHECK(seq.key_hash(&a) == seq.key_hash(&b));
  CHECK(seq.key_hash(&a) != seq.key_hash(&c));
  // A sample read back from the wire has the same instance.
  std::vector<std::byte> bytes(seq.size(&a, seq.encoding));
  REQUIRE(seq.serialize(&a, bytes, seq.encoding).ok());
  std::string error;
  const auto back = seq.decode(bytes, error);
  REQUIRE(back);
  CHECK(seq.key_hash(back.get()) == seq.key_hash(&a));

  const auto& uni = spindle::detail::type_support<Gaps::UnionKey>();
  CHECK(uni.keyed);
  Gaps::UnionKey u1;
  u1.which().n(5);
  Gaps::UnionKey u2 = u1;
  u2.payload(77);
  Gaps::UnionKey u3;
  u3.which().s("5");
  CHECK(uni.key_hash(&u1) == uni.key_hash(&u2));
  CHECK(uni.key_hash(&u1) != uni.key_hash(&u3));
  std::vector<std::byte> ubytes(uni.size(&u3, uni.encoding));
  REQUIRE(uni.serialize(&u3, ubytes, uni.encoding).ok());
  const auto uback = uni.decode(ubytes, error);
  REQUIRE(uback);
  CHECK(uni.key_hash(uback.get()) == uni.key_hash(&u3));
}

TEST_CASE("annotations that do not change the encoding keep the generated code as it was",
          "[gaps][annotations]") {
  Gaps::Bits b;
  CHECK(b.flags() == (Gaps::Flags::A | Gaps::Flags::C));  // @default(5)
  STATIC_REQUIRE(std::is_same_v<std::decay_t<decltype(b.opt())>, std::optional<int32_t>>);
  STATIC_REQUIRE(std::is_same_v<std::decay_t<decltype(b.notopt())>, int32_t>);  // @optional(FALSE)
  STATIC_REQUIRE(std::is_same_v<std::decay_t<decltype(b.ext())>, Common::Point>);  // @external
  // Enums keep their 4-byte encoding whatever their extensibility.
  STATIC_REQUIRE(spindle::cdr::Codec<Gaps::Mode>::max_size(0) == 4);
  STATIC_REQUIRE(spindle::cdr::Codec<Gaps::Phase>::max_size(0) == 4);
  STATIC_REQUIRE(spindle::cdr::max_serialized_size<Gaps::Plain1>() == 8);
}

TEST_CASE("@must_understand sets the M flag of the member's parameter header", "[gaps][vectors]") {
  Gaps::Understood u;
  u.a(1);
  u.b(2);
  const auto e = Endianness::Big;
  // `u16 id | u16 length` as one big-endian u32.
  const auto expected = by_hand(e, [](Cdr& cdr) {
    cdr << uint32_t{(0x4001U << 16) | 4} << int32_t{1} << uint32_t{(2U << 16) | 4} << int32_t{2}
        << uint32_t{0x3F02U << 16};
  });
  auto bytes = encode(u, e);
  bytes[1] = std::byte{0};  // compare the body: PL_CDR_BE vs by_hand's CDR_BE header
  CHECK(std::vector<std::byte>(bytes.begin() + 4, bytes.end()) ==
        std::vector<std::byte>(expected.begin() + 4, expected.end()));
  check_roundtrip(u);

  Gaps::OptionalUnderstood o;
  o.a(7);
  const auto opt = by_hand(e, [](Cdr& cdr) { cdr << uint32_t{(0x4000U << 16) | 4} << int32_t{7}; });
  CHECK(encode(o, e) == opt);
  check_roundtrip(o);
  check_roundtrip(Gaps::OptionalUnderstood());
}

TEST_CASE("maps and bitsets print readably", "[gaps][print]") {
  std::ostringstream os;
  Gaps::BoundedMap bm;
  bm.values() = {{2, 0.5}, {1, 1.5}};
  os << bm;
  CHECK(os.str() == "Gaps::BoundedMap{values: {1: 1.5, 2: 0.5}}");
  os.str("");
  Gaps::Small s;
  s.a(5);
  s.b(-7);
  os << s;
  CHECK(os.str() == "Gaps::Small{a: 5, b: -7}");
  os.str("");
  Gaps::Wider w;
  w.on(true);
  w.y(2);
  os << w;
  CHECK(os.str() == "Gaps::Wider{on: true, count: 0, more: 0, x: 0, y: 2}");
}

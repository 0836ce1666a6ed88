// Byte-level vectors: what generated code writes equals what direct Fast-CDR calls write
// for the same values, in both byte orders; key hashes follow the DDS rule.
#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <algorithm>

#include "avionics.hpp"
#include "samples.hpp"

using eprosima::fastcdr::Cdr;
using spindle::cdr::Endianness;

namespace {

// Fast-CDR leaves padding bytes untouched, so both sides write into zeroed memory.
template <class Fn>
std::vector<std::byte> by_hand(Endianness e, bool pl, Fn&& fn) {
  std::vector<char> memory(64 * 1024, 0);
  eprosima::fastcdr::FastBuffer buffer(memory.data(), memory.size());
  Cdr cdr(buffer, e == Endianness::Big ? Cdr::BIG_ENDIANNESS : Cdr::LITTLE_ENDIANNESS,
          Cdr::DDS_CDR);
  cdr.setDDSCdrPlFlag(pl ? eprosima::fastcdr::Cdr::DDS_CDR_WITH_PL
                         : eprosima::fastcdr::Cdr::DDS_CDR_WITHOUT_PL);
  cdr.serialize_encapsulation();
  fn(cdr);
  const auto* p = reinterpret_cast<const std::byte*>(buffer.getBuffer());
  return {p, p + cdr.getSerializedDataLength()};
}

template <class T>
std::vector<std::byte> generated(const T& sample, Endianness e) {
  std::vector<std::byte> out;
  REQUIRE(spindle::cdr::serialize(sample, out, e, spindle::cdr::Encoding::Xcdr1).ok());
  return out;
}

// A parameter header as the u32 whose bytes are `u16 id | u16 length` in stream order.
uint32_t param(Endianness e, uint16_t id, uint16_t len) {
  return e == Endianness::Big ? (uint32_t{id} << 16 | len) : (uint32_t{len} << 16 | id);
}

void point(Cdr& cdr, const Common::Point& p) {
  cdr << p.x() << p.y();
}

const std::vector<Endianness> kBoth = {Endianness::Big, Endianness::Little};

}  // namespace

TEST_CASE("primitives encode as direct Fast-CDR calls", "[vectors]") {
  const auto p = samples::primitives();
  for (auto e : kBoth) {
    auto want = by_hand(e, false, [&](Cdr& c) {
      c << p.b() << p.c() << p.wc() << p.o() << p.i8() << p.u8() << p.s() << p.us() << p.l()
        << p.ul() << p.ll() << p.ull() << p.i16() << p.u16() << p.i32() << p.u32() << p.i64()
        << p.u64() << p.f() << p.d() << p.ld();
    });
    // The last member is the 16-byte long double; Fast-CDR copies its 6 indeterminate x86
    // padding bytes, Spindle writes them as zero (docs/cdr.md).
    const size_t pad = e == Endianness::Little ? want.size() - 6 : want.size() - 16;
    std::fill_n(want.begin() + static_cast<std::ptrdiff_t>(pad), 6, std::byte{0});
    CHECK(generated(p, e) == want);
  }
}

TEST_CASE("strings encode as direct Fast-CDR calls", "[vectors]") {
  const auto s = samples::strings();
  for (auto e : kBoth) {
    auto want = by_hand(e, false, [&](Cdr& c) {
      c << s.unbounded() << s.bounded() << s.wunbounded() << s.wbounded() << s.name();
    });
    CHECK(generated(s, e) == want);
  }
}

TEST_CASE("sequences and arrays encode as direct Fast-CDR calls", "[vectors]") {
  const auto v = samples::collections();
  for (auto e : kBoth) {
    auto want = by_hand(e, false, [&](Cdr& c) {
      c << v.longs() << v.few_longs() << v.words();
      c << static_cast<uint32_t>(v.points().size());
      for (const auto& pt : v.points())
        point(c, pt);
      c << v.flags();
      c << static_cast<uint32_t>(v.nested().size());
      for (const auto& inner : v.nested())
        c << inner;
      c.serializeArray(&v.matrix()[0][0], 6);
      c.serializeArray(&v.grid()[0][0], 4);
      c << v.labels()[0] << v.labels()[1];
      for (const auto& pt : v.corners())
        point(c, pt);
      c << static_cast<uint32_t>(v.shapes().size());
      for (auto sh : v.shapes())
        c << static_cast<uint32_t>(sh);
    });
    CHECK(generated(v, e) == want);
  }
}

TEST_CASE("inheritance, enums, bitmasks and unions encode as direct Fast-CDR calls", "[vectors]") {
  const auto d = samples::derived();
  for (auto e : kBoth) {
    auto want = by_hand(e, false, [&](Cdr& c) {
      c << d.id() << d.label();
      c << static_cast<uint32_t>(d.color());
      c << static_cast<uint16_t>(d.perms());  // bit_bound 12 -> 16 bits
      c << static_cast<uint64_t>(d.wide());   // bit_bound 40 -> 64 bits
      c << d.by_long()._d() << d.by_long().small();
      c << d.by_char()._d() << d.by_char().b();
      c << d.by_bool()._d() << d.by_bool().no();
      c << static_cast<uint32_t>(d.by_enum()._d()) << d.by_enum().side();
      c << d.by_other()._d();
      point(c, d.by_other().where());
    });
    CHECK(generated(d, e) == want);
  }
}

TEST_CASE("optional members use XCDR1 parameter headers", "[vectors]") {
  for (bool present : {true, false}) {
    const auto a = samples::annotated(present);
    for (auto e : kBoth) {
      auto want = by_hand(e, false, [&](Cdr& c) {
        c << a.key1() << a.key2();
        // @id(5) on key1, then sequential ids: key2 6, maybe 7, maybe_text 8.
        if (present) {
          c << param(e, 7, 4);
          c.resetAlignment();
          c << *a.maybe();
          c << param(e, 8, static_cast<uint16_t>(4 + a.maybe_text()->size() + 1));
          c.resetAlignment();
          c << *a.maybe_text();
        } else {
          c << param(e, 7, 0) << param(e, 8, 0);
        }
        c << a.answer() << a.bounded() << a.ratio();
      });
      CHECK(generated(a, e) == want);
    }
  }
}

TEST_CASE("mutable types encode as PL_CDR parameter lists", "[vectors]") {
  const auto x = samples::extensible(true);
  for (auto e : kBoth) {
    auto want = by_hand(e, true, [&](Cdr& c) {
      c << param(e, 1, 4);
      c.resetAlignment();
      c << x.a();
      c << param(e, 7, static_cast<uint16_t>(4 + x.b().size() + 1));
      c.resetAlignment();
      c << x.b();
      c << param(e, 3, 8);
      c.resetAlignment();
      c << *x.c();
      c << param(e, 4, 8);
      c.resetAlignment();
      point(c, x.p());
      c << param(e, 0x3F02, 0);
    });
    const auto got = generated(x, e);
    CHECK(static_cast<uint8_t>(got[1]) == (e == Endianness::Big ? 2 : 3));  // PL_CDR_BE/LE
    CHECK(got == want);
  }
}

TEST_CASE("key hash is the padded big-endian key when it fits in 16 bytes", "[keyhash]") {
  Avionics::FlightState fs;
  fs.aircraft_id(0x01020304);
  const spindle::cdr::KeyHash want{1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(spindle::cdr::key_hash(fs) == want);
  STATIC_REQUIRE_FALSE(spindle::topic_traits<Avionics::FlightState>::key_hash_is_md5);

  // Outer: key inner.k (short), then where.x and where.y (every member of a keyless struct).
  const auto o = samples::outer();
  const spindle::cdr::KeyHash want_outer{0xFF, 0xF9, 0, 0, 0, 0, 0, 11, 0, 0, 0, 12, 0, 0, 0, 0};
  CHECK(spindle::cdr::key_hash(o) == want_outer);
}

TEST_CASE("key hash is the MD5 of the big-endian key when keys can exceed 16 bytes", "[keyhash]") {
  const auto a = samples::annotated(true);
  eprosima::fastcdr::FastBuffer buffer;
  Cdr cdr(buffer, Cdr::BIG_ENDIANNESS, Cdr::CORBA_CDR);
  cdr << a.key1() << a.key2();
  const auto* p = reinterpret_cast<const std::byte*>(buffer.getBuffer());
  const auto want = spindle::cdr::md5({p, cdr.getSerializedDataLength()});
  CHECK(spindle::cdr::key_hash(a) == want);
  STATIC_REQUIRE(spindle::topic_traits<Test::Annotated>::key_hash_is_md5);
  // Samples differing only outside the key hash the same.
  auto b = a;
  b.answer(1);
  CHECK(spindle::cdr::key_hash(b) == want);
  b.key2("other");
  CHECK(spindle::cdr::key_hash(b) != want);
}

TEST_CASE("an empty string is encoded with its NUL as Fast-CDR does", "[vectors]") {
  const Test::Strings empty;
  const auto bytes = generated(empty, Endianness::Little);
  auto want = by_hand(Endianness::Little, false, [&](Cdr& c) {
    c << std::string() << std::string() << std::wstring() << std::wstring() << std::string();
  });
  CHECK(bytes == want);
}

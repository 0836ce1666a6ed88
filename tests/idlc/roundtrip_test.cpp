// Every generated construct survives serialize -> deserialize unchanged, in both byte
// orders, and the size functions agree with what is written.
#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <sstream>

#include "avionics.hpp"
#include "codec_check.hpp"
#include "samples.hpp"

using codec_check::check_roundtrip;
using spindle::cdr::Endianness;

TEST_CASE("every basic type round-trips", "[roundtrip]") {
  check_roundtrip(samples::primitives());
}
TEST_CASE("bounded and unbounded strings and wstrings round-trip", "[roundtrip]") {
  check_roundtrip(samples::strings());
  check_roundtrip(Test::Strings());  // all empty
}
TEST_CASE("sequences, nested sequences and multi-dimensional arrays round-trip", "[roundtrip]") {
  check_roundtrip(samples::collections());
  check_roundtrip(Test::Collections());
}
TEST_CASE("inheritance, enums, bitmasks and every union kind round-trip", "[roundtrip]") {
  check_roundtrip(samples::derived());
  Test::Derived d = samples::derived();
  d.by_long().other(1e300, 99);  // the default case
  d.by_char()._default();        // no member selected
  d.by_bool().yes(5);
  d.by_enum()._default();
  d.by_other()._default();
  check_roundtrip(d);
}
TEST_CASE("optional members round-trip present and absent", "[roundtrip]") {
  check_roundtrip(samples::annotated(true));
  check_roundtrip(samples::annotated(false));
}
TEST_CASE("mutable types round-trip as parameter lists", "[roundtrip]") {
  check_roundtrip(samples::extensible(true));
  check_roundtrip(samples::extensible(false));
}
TEST_CASE("nested keys, keylists, recursion, keywords and reopened modules round-trip",
          "[roundtrip]") {
  check_roundtrip(samples::outer());
  check_roundtrip(samples::legacy());
  check_roundtrip(samples::tree());
  check_roundtrip(samples::keywords());
  check_roundtrip(samples::reopened());
}
TEST_CASE("the shipped avionics types round-trip", "[roundtrip]") {
  Avionics::FlightState fs;
  fs.aircraft_id(42);
  fs.callsign("SPN042");
  fs.timestamp_ns(123456789);
  fs.position(Avionics::Position(48.35, 11.78, 10668.0F));
  fs.heading_deg(271.5F);
  fs.phase(Avionics::FlightPhase::CRUISE);
  fs.status(Avionics::SystemStatus::AUTOPILOT_ENGAGED | Avionics::SystemStatus::GEAR_DOWN);
  check_roundtrip(fs);

  Avionics::Navigation nav;
  nav.aircraft_id(42);
  nav.source(Avionics::NavSource::VOR_DME);
  nav.fix().bearing_and_distance({{123.0, 45.5}}, Avionics::NavSource::VOR_DME);
  nav.route({Avionics::Waypoint("MUN", Avionics::Position(48.3, 11.7, 0)),
             Avionics::Waypoint("FRA", Avionics::Position(50.0, 8.5, 0))});
  check_roundtrip(nav);
  CHECK(Avionics::Navigation().active_leg() == 0);
}

TEST_CASE("constants are evaluated into typed C++ constants", "[constants]") {
  STATIC_REQUIRE(Test::BIG == 1048);
  STATIC_REQUIRE(Test::HUGE == 0xFFFFFFFFFFFFFFFFULL);
  STATIC_REQUIRE(Test::NEG == -1);
  STATIC_REQUIRE(Test::LETTER == 'Z');
  STATIC_REQUIRE(Test::WIDE_LETTER == L'W');
  STATIC_REQUIRE(Test::YES);
  STATIC_REQUIRE(Test::MASK == 0x0F);
  STATIC_REQUIRE(Test::I8 == -8);
  STATIC_REQUIRE(Test::U8 == 200);
  STATIC_REQUIRE(Test::FAVOURITE == Common::Color::GREEN);
  STATIC_REQUIRE(Test::BOUND == 5);
  STATIC_REQUIRE(std::is_same_v<decltype(Test::HALF), const float>);
  CHECK(Test::PI_ISH == Approx(22.0 / 7.0));
  CHECK(Test::GREETING == "hello");
  CHECK(Test::WGREETING == L"wide");
  CHECK(Test::LD == 1.25L);
  CHECK(Test::Annotated().answer() == 42);
}

TEST_CASE("union accessors enforce the selected member", "[union]") {
  Test::ByLong u;
  u.small(3, 1);
  CHECK(u._d() == 1);
  u._d(2);  // same member
  CHECK(u.small() == 3);
  CHECK_THROWS_AS(u._d(10), std::invalid_argument);
  CHECK_THROWS_AS(u.text(), std::logic_error);
  CHECK_THROWS_AS(u.text("x", 1), std::invalid_argument);
}

TEST_CASE("encoding rejects values outside bounds and ranges", "[bounds]") {
  std::vector<std::byte> bytes;
  Test::Strings s = samples::strings();
  s.bounded("nine char");
  CHECK(spindle::cdr::serialize(s, bytes).status == spindle::cdr::Status::BoundExceeded);
  Test::Collections c;
  c.few_longs({1, 2, 3, 4, 5, 6});
  CHECK(spindle::cdr::serialize(c, bytes).status == spindle::cdr::Status::BoundExceeded);
  Test::Annotated a = samples::annotated(false);
  a.bounded(11);
  CHECK(spindle::cdr::serialize(a, bytes).status == spindle::cdr::Status::OutOfRange);
  a.bounded(0);
  a.ratio(1.5);
  CHECK(spindle::cdr::serialize(a, bytes).status == spindle::cdr::Status::OutOfRange);
}

TEST_CASE("serialization into a too-small caller buffer fails cleanly", "[slot]") {
  const auto sample = samples::collections();
  std::vector<std::byte> slot(spindle::cdr::serialized_size(sample) - 1);
  CHECK(spindle::cdr::serialize(sample, std::span<std::byte>(slot)).status ==
        spindle::cdr::Status::BufferTooSmall);
  slot.resize(slot.size() + 1);
  CHECK(spindle::cdr::serialize(sample, std::span<std::byte>(slot)).ok());
}

TEST_CASE("generated types print readably", "[print]") {
  std::ostringstream os;
  os << samples::derived();
  CHECK(os.str().find("Test::Derived{id: 77, label: \"base label\", color: BLUE") == 0);
  CHECK(os.str().find("perms: {READ|ADMIN}") != std::string::npos);
}

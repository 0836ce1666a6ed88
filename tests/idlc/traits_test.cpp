// Topic traits and size bounds that DataWriter<T> relies on to use SMC slots.
#include <catch2/catch.hpp>

#include <spindle/topic_traits.hpp>

#include "Sequence.hpp"
#include "ShapeType.hpp"
#include "avionics.hpp"
#include "samples.hpp"

TEST_CASE("topic traits name the type by its scoped name and state its keys", "[traits]") {
  using FS = spindle::topic_traits<Avionics::FlightState>;
  STATIC_REQUIRE(FS::type_name == "Avionics::FlightState");
  STATIC_REQUIRE(FS::is_keyed);
  STATIC_REQUIRE(FS::key_count == 1);
  STATIC_REQUIRE(FS::is_bounded);
  STATIC_REQUIRE(spindle::topic_traits<ShapeType>::type_name == "ShapeType");
  STATIC_REQUIRE(spindle::topic_traits<Avionics::Navigation>::key_count == 2);
  STATIC_REQUIRE_FALSE(spindle::topic_traits<Bench::Sequence>::is_bounded);
  STATIC_REQUIRE(spindle::topic_traits<Test::Outer>::key_count == 3);
  STATIC_REQUIRE(spindle::topic_traits<Test::Legacy>::key_count == 2);
  STATIC_REQUIRE_FALSE(spindle::topic_traits<Test::TreeNode>::is_bounded);
  STATIC_REQUIRE(spindle::Topic<Avionics::AirData>);
  // A union is a keyless topic type unless @nested.
  STATIC_REQUIRE(spindle::topic_traits<Test::ByLong>::type_name == "Test::ByLong");
  STATIC_REQUIRE_FALSE(spindle::topic_traits<Test::ByLong>::is_keyed);
  STATIC_REQUIRE_FALSE(spindle::Topic<Test::NestedChoice>);
}

TEST_CASE("maximum serialized size is exact for fixed-size types", "[traits]") {
  // Primitives: every member at its natural alignment after the 4-byte header.
  Test::Primitives p;
  CHECK(spindle::cdr::serialized_size(p) == spindle::cdr::max_serialized_size<Test::Primitives>());
  // ShapeType: color string<128> + 3 longs.
  STATIC_REQUIRE(spindle::cdr::max_serialized_size<ShapeType>() == 4 + 4 + 129 + 3 + 12);
}

TEST_CASE("maximum serialized size bounds every bounded sample", "[traits]") {
  Avionics::Navigation nav;
  std::vector<Avionics::Waypoint> route(64, Avionics::Waypoint("ABCDEFGH", {}));
  nav.route(route);
  CHECK(spindle::cdr::serialized_size(nav) <=
        spindle::cdr::max_serialized_size<Avionics::Navigation>());
  Test::Annotated a = samples::annotated(true);
  a.key2(std::string(20, 'k'));
  CHECK(spindle::cdr::serialized_size(a) <= spindle::cdr::max_serialized_size<Test::Annotated>());
}

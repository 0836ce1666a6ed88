// `spindle typeof` against topics a compiled program publishes: the IDL it prints, learned from
// discovery alone, loads back (load_idl_text) into a type whose type information is byte for
// byte what idlc generated for the compiled type; a topic nobody announces ends the wait with
// exit status 3.
#include <catch2/catch.hpp>
#include <dds/dds.hpp>
#include <spindle/types/from_idl.hpp>
#include <spindle/types/type_object.hpp>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "ShapeType.hpp"
#include "avionics.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Printed {
  int status = -1;
  std::string first_line;
  std::string idl;  // the lines after the first
};

Printed run_typeof(const std::string& topic) {
  tst::Process cmd({SPINDLE_COMMAND, "typeof", topic, "--wait", "60", "--domain", "0"});
  Printed out;
  const auto deadline = Clock::now() + 90s;
  if (auto line = cmd.read_line(deadline)) out.first_line = *line;
  while (auto line = cmd.read_line(deadline))
    out.idl += *line + "\n";
  out.status = cmd.wait(Clock::now() + 30s);
  return out;
}

std::vector<std::byte> bytes(std::span<const std::uint8_t> b) {
  const auto s = std::as_bytes(b);
  return {s.begin(), s.end()};
}

// The type `idl` declares as `name`, loaded, has the type information idlc generated for T.
template <class T>
void check_same_type(const std::string& idl, const std::string& name) {
  INFO(idl);
  spindle::types::TypeLibrary printed;
  REQUIRE_NOTHROW(spindle::types::load_idl_text(printed, idl, "typeof.idl"));
  const auto* type = printed.find(name);
  REQUIRE(type != nullptr);
  const auto info = spindle::types::make_type_info(*type);
  CHECK(info.information == bytes(spindle::topic_traits<T>::type_information));
  CHECK(info.mapping == bytes(spindle::topic_traits<T>::type_mapping));
}

}  // namespace

TEST_CASE("spindle typeof prints a topic's type as IDL that loads back into it", "[typeof]") {
  dds::domain::DomainParticipant dp(0);
  dds::topic::Topic<ShapeType> square(dp, "Square");
  dds::pub::DataWriter<ShapeType> shapes(dds::pub::Publisher(dp), square);
  dds::topic::Topic<Avionics::Navigation> navigation(dp, "Navigation");
  dds::pub::DataWriter<Avionics::Navigation> fixes(dds::pub::Publisher(dp), navigation);

  const Printed shape = run_typeof("Square");
  CHECK(shape.status == 0);
  CHECK(shape.first_line == "// topic Square: type ShapeType");
  CHECK(shape.idl ==
        "@appendable\n"
        "struct ShapeType {\n"
        "  @key string<128> color;\n"
        "  long x;\n"
        "  long y;\n"
        "  long shapesize;\n"
        "};\n");
  check_same_type<ShapeType>(shape.idl, "ShapeType");

  // Nested structs, enums, a union with arrays, a bounded sequence, keys, @range and @optional.
  const Printed nav = run_typeof("Navigation");
  CHECK(nav.status == 0);
  CHECK(nav.first_line == "// topic Navigation: type Avionics::Navigation");
  CHECK(nav.idl.find("union NavFix switch (NavSource) {") != std::string::npos);
  CHECK(nav.idl.find("sequence<Waypoint, 64> route;") != std::string::npos);
  check_same_type<Avionics::Navigation>(nav.idl, "Avionics::Navigation");
}

TEST_CASE("spindle typeof says so when no member announces the topic", "[typeof]") {
  tst::Process cmd(
      {"/bin/sh", "-c",
       std::string("exec ") + SPINDLE_COMMAND + " typeof Nowhere --wait 1 --domain 0 2>&1"});
  std::string out;
  while (auto line = cmd.read_line(Clock::now() + 30s))
    out += *line + "\n";
  INFO(out);
  CHECK(cmd.wait(Clock::now() + 30s) == 3);
  CHECK(out.find("spindle typeof: no member of domain 0 announced topic 'Nowhere'") !=
        std::string::npos);
}

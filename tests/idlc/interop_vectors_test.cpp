// CDR vectors of interop/cdr: generated code writes exactly the bytes other DDS
// implementations put on the wire for the same samples, and reads them back.
#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "Sequence.hpp"
#include "ShapeType.hpp"

namespace {

std::vector<std::byte> load_hex(const std::string& name) {
  std::ifstream in(std::string(SPINDLE_INTEROP_DIR) + "/cdr/" + name);
  REQUIRE(in.good());
  std::vector<std::byte> bytes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string hex;
    while (words >> hex)
      bytes.push_back(static_cast<std::byte>(std::stoul(hex, nullptr, 16)));
  }
  return bytes;
}

template <class T>
void check_vector(const T& sample, const std::string& file, spindle::cdr::Endianness e) {
  const auto want = load_hex(file);
  std::vector<std::byte> got;
  REQUIRE(spindle::cdr::serialize(sample, got, e).ok());
  CHECK(got == want);
  T back;
  REQUIRE(spindle::cdr::deserialize(std::span<const std::byte>(want), back).ok());
  CHECK(back == sample);
}

}  // namespace

TEST_CASE("ShapeType matches the Shapes demo bytes in both byte orders", "[interop]") {
  const ShapeType blue("BLUE", 10, 20, 30);
  check_vector(blue, "ShapeType-BLUE-le.hex", spindle::cdr::Endianness::Little);
  check_vector(blue, "ShapeType-BLUE-be.hex", spindle::cdr::Endianness::Big);
}

TEST_CASE("the benchmark Sequence type matches its vector", "[interop]") {
  const Bench::Sequence s(7, 1, 2, {1, 2, 3});
  check_vector(s, "Sequence-small-le.hex", spindle::cdr::Endianness::Little);
}

// CDR vectors of interop/cdr: generated code writes exactly the bytes other DDS
// implementations put on the wire for the same samples, and reads them back.
#include <catch2/catch.hpp>

#include <spindle/cdr/serialize.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "Sequence.hpp"
#include "ShapeType.hpp"
#include "Vectors.hpp"

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

// interop/cdr/cyclone: what Cyclone DDS 0.10.2 writes (its own serializer, make.sh there). In
// XCDR1 a final struct of strings and 4-byte integers is byte for byte ours.
TEST_CASE("Cyclone DDS's XCDR1 bytes of a final struct are ours", "[interop][cyclone]") {
  Xv::FinalShape blue("BLUE", 10, 20, 30);
  check_vector(blue, "cyclone/FinalShape-xcdr1-le.hex", spindle::cdr::Endianness::Little);
  // The same bytes as the Shapes demo's ShapeType vector.
  CHECK(load_hex("cyclone/FinalShape-xcdr1-le.hex") == load_hex("ShapeType-BLUE-le.hex"));
}

// Cyclone pads a sample to a multiple of 4 and says how much in the options' low two bits
// (XTypes 1.3, 7.6.3.1.2); Spindle writes neither, and reads Cyclone's.
TEST_CASE("Cyclone DDS's XCDR1 padding count is read, and the values are ours",
          "[interop][cyclone]") {
  const auto theirs = load_hex("cyclone/Wide-xcdr1-le.hex");
  REQUIRE(theirs.size() == 32);
  CHECK(theirs[3] == std::byte{2});  // 26 bytes of payload, 2 of padding
  Xv::Wide w;
  REQUIRE(spindle::cdr::deserialize(std::span<const std::byte>(theirs), w).ok());
  CHECK(w == Xv::Wide(7, -2, 1.5, 3));
  std::vector<std::byte> ours;
  REQUIRE(spindle::cdr::serialize(w, ours, spindle::cdr::Endianness::Little).ok());
  std::vector<std::byte> unpadded(theirs.begin(), theirs.end() - 2);
  unpadded[3] = std::byte{0};
  CHECK(ours == unpadded);
}

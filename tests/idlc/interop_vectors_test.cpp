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

namespace {

// An XCDR2 vector of Cyclone DDS: written byte for byte (padding and options included) and
// read back.
template <class T>
void check_xcdr2(const T& sample, const std::string& name) {
  INFO(name);
  const auto want = load_hex("cyclone/" + name + "-xcdr2-le.hex");
  std::vector<std::byte> got;
  const auto w = spindle::cdr::serialize(sample, got, spindle::cdr::Endianness::Little,
                                         spindle::cdr::Encoding::Xcdr2);
  INFO(w.detail);
  REQUIRE(w.ok());
  CHECK(got == want);
  T back;
  const auto r = spindle::cdr::deserialize(std::span<const std::byte>(want), back);
  INFO(r.detail);
  REQUIRE(r.ok());
  CHECK(r.size == want.size());
  CHECK(back == sample);
  // Big-endian: no vector (Cyclone writes its host's order), a round trip.
  REQUIRE(spindle::cdr::serialize(sample, got, spindle::cdr::Endianness::Big,
                                  spindle::cdr::Encoding::Xcdr2)
              .ok());
  CHECK(got.size() == want.size());
  REQUIRE(spindle::cdr::deserialize(std::span<const std::byte>(got), back).ok());
  CHECK(back == sample);
}

}  // namespace

TEST_CASE("Cyclone DDS's XCDR2 bytes of final structs are ours", "[interop][cyclone][xcdr2]") {
  check_xcdr2(Xv::FinalShape("BLUE", 10, 20, 30), "FinalShape");
  check_xcdr2(Xv::Wide(7, -2, 1.5, 3), "Wide");  // 8-byte values aligned to 4
  // Final types without optional members are written in XCDR1 unless told otherwise.
  STATIC_REQUIRE(spindle::cdr::default_encoding<Xv::FinalShape>() == spindle::cdr::Encoding::Xcdr1);
}

TEST_CASE("Cyclone DDS's XCDR2 bytes of appendable and mutable structs are ours",
          "[interop][cyclone][xcdr2]") {
  check_xcdr2(Xv::AppShape("BLUE", 10, 20, 30), "AppShape");
  check_xcdr2(Xv::MutShape("BLUE", 10, 20, 30), "MutShape");  // the key's EMHEADER has M set
  check_xcdr2(Xv::Outer({Xv::Inner(1, "a"), Xv::Inner(2, "bc")}, Xv::Inner(3, "def")), "Outer");
  // What Cyclone writes in XCDR2 only, Spindle writes in XCDR2 by default.
  using spindle::cdr::default_encoding;
  using spindle::cdr::Encoding;
  STATIC_REQUIRE(default_encoding<Xv::AppShape>() == Encoding::Xcdr2);
  STATIC_REQUIRE(default_encoding<Xv::MutShape>() == Encoding::Xcdr2);
  STATIC_REQUIRE(default_encoding<Xv::Opt>() == Encoding::Xcdr2);
  STATIC_REQUIRE(default_encoding<Xv::FinalOpt>() == Encoding::Xcdr2);
  STATIC_REQUIRE(default_encoding<Xv::WithAU>() == Encoding::Xcdr2);  // final, holds an appendable
}

TEST_CASE("Cyclone DDS's bytes of keyed structs are ours", "[interop][cyclone][xcdr2]") {
  const Xv::KeyMix mix(1, -5, "n", "nm", 7, Xv::KeyIn(3, 4, "cc"));
  {
    // XCDR1: Cyclone pads the sample to 4 and counts the padding in the options, as XCDR2
    // does; generated code writes XCDR1 unpadded (docs/cdr.md). Both read either.
    auto want = load_hex("cyclone/KeyMix-xcdr1-le.hex");
    std::vector<std::byte> got;
    REQUIRE(spindle::cdr::serialize(mix, got, spindle::cdr::Endianness::Little).ok());
    const auto pad = static_cast<size_t>(want[3]) & 3U;
    CHECK(pad == (4 - got.size() % 4) % 4);
    want[3] = std::byte{0};
    want.resize(want.size() - pad);
    CHECK(got == want);
    Xv::KeyMix back;
    const auto padded = load_hex("cyclone/KeyMix-xcdr1-le.hex");
    REQUIRE(spindle::cdr::deserialize(std::span<const std::byte>(padded), back).ok());
    CHECK(back == mix);
  }
  check_xcdr2(mix, "KeyMix");
  check_xcdr2(Xv::AppKey(9, 1234567890123, "app"), "AppKey");
  check_xcdr2(Xv::MutKey(-2, "mut", 42), "MutKey");
}

TEST_CASE("Cyclone DDS's XCDR2 optional members are ours", "[interop][cyclone][xcdr2]") {
  check_xcdr2(Xv::Opt(1, 5, std::string("x")), "Opt-present");
  check_xcdr2(Xv::Opt(1, std::nullopt, std::nullopt), "Opt-absent");
  check_xcdr2(Xv::MutOpt(1, 5, std::string("x")), "MutOpt-present");
  check_xcdr2(Xv::MutOpt(1, std::nullopt, std::nullopt), "MutOpt-absent");
  check_xcdr2(Xv::FinalOpt(3, 0.25, Xv::Inner(6, "in")), "FinalOpt-present");
  check_xcdr2(Xv::FinalOpt(3, std::nullopt, std::nullopt), "FinalOpt-absent");
}

TEST_CASE("Cyclone DDS's XCDR2 unions are ours", "[interop][cyclone][xcdr2]") {
  Xv::WithUnion u1;
  u1.u().l(42);
  check_xcdr2(u1, "WithUnion-l");
  Xv::WithUnion u2;
  u2.u().s("hi");
  check_xcdr2(u2, "WithUnion-s");
  Xv::WithAU a1;
  a1.u().l(77);
  a1.tail(0xee);
  check_xcdr2(a1, "WithAU-l");  // an appendable union: a DHEADER, a 2-byte discriminator
  Xv::WithAU a2;
  a2.u().in(Xv::Inner(8, "ab"));
  a2.tail(0xee);
  check_xcdr2(a2, "WithAU-in");
}

// Every length code Cyclone chooses for a mutable member (1, 2, 4 and 8-byte values; strings;
// sequences of 1, 2, 4 and 8-byte elements, of strings and of enums; arrays; nested structs
// and unions: NEXTINT), and the DHEADERs of collections of non-primitive elements.
TEST_CASE("Cyclone DDS's XCDR2 length codes and collections are ours",
          "[interop][cyclone][xcdr2]") {
  Xv::U u;
  u.l(5);
  const Xv::MutMix m(11, 0xab, -3, 1234567890123LL, 2.5, true, Xv::Color::BLUE, "str", {1, 2, 3},
                     {-1, 2}, {7, 8}, {-9}, {"p", "qr"}, {Xv::Color::GREEN, Xv::Color::BLUE},
                     {1, 2, 3}, Xv::Inner(4, "n"), Xv::FinalShape("RED", 1, 2, 3), u);
  check_xcdr2(m, "MutMix");
  const Xv::Seqs q({Xv::Color::RED, Xv::Color::BLUE}, {Xv::Inner(1, "x"), Xv::Inner(2, "yz")},
                   {"s", "tu"}, {{1, 2}, {3}}, {9, 10}, {Xv::FinalShape("G", 4, 5, 6)});
  check_xcdr2(q, "Seqs");
}

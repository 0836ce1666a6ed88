// Dynamic encoding is generated code's encoding: for every shipped and test type, random
// samples encoded from JSON through the type loaded at run time are read by the generated
// codec, written back by it to the same bytes, in XCDR1 and XCDR2 and both byte orders, and
// decode to the JSON they came from; key hashes agree. Then JSON that does not fit a type,
// and bytes that do not, are refused with what and where.
#include <catch2/catch.hpp>
#include <spindle/cdr/serialize.hpp>
#include <spindle/types/dynamic_data.hpp>
#include <spindle/types/from_idl.hpp>

#include "Sequence.hpp"
#include "ShapeType.hpp"
#include "Vectors.hpp"
#include "all_constructs.hpp"
#include "avionics.hpp"
#include "chaos.hpp"
#include "consistency.hpp"
#include "demo_report.hpp"
#include "gaps.hpp"
#include "loan_types.hpp"
#include "perf.hpp"
#include "porting.hpp"
#include "random_sample.hpp"
#include "sensor.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>

using namespace spindle;
using namespace spindle::types;

namespace {

const std::string kRepoRoot = SPINDLE_SOURCE_DIR;

// One library per IDL file (two files may use one name for different types).
const TypeLibrary& library(const std::string& relative) {
  static std::map<std::string, std::unique_ptr<TypeLibrary>> cache;
  auto& lib = cache[relative];
  if (!lib) {
    lib = std::make_unique<TypeLibrary>();
    const std::string path = kRepoRoot + "/" + relative;
    load_idl_file(*lib, path, {{path.substr(0, path.rfind('/'))}, {}});
  }
  return *lib;
}

template <class T>
void check_type(const std::string& idl, const std::string& name, int samples = 8) {
  INFO(name);
  const Type* type = library(idl).find(name);
  REQUIRE(type != nullptr);
  std::mt19937_64 rng(std::hash<std::string>{}(name));
  for (int i = 0; i < samples; ++i) {
    const Json sample = test_types::random_sample(*type, rng);
    INFO(sample.dump());
    for (const auto e : {cdr::Encoding::Xcdr1, cdr::Encoding::Xcdr2}) {
      if ((cdr::representations<T>() & cdr::bit_of(e)) == 0) continue;
      for (const auto order : {cdr::Endianness::Little, cdr::Endianness::Big}) {
        INFO((e == cdr::Encoding::Xcdr1 ? "XCDR1" : "XCDR2")
             << (order == cdr::Endianness::Little ? " LE" : " BE"));
        const auto dynamic = encode(*type, sample, e, order);
        T value{};
        const auto read = cdr::deserialize(std::span<const std::byte>(dynamic), value);
        REQUIRE(read.detail == "");
        REQUIRE(read.size == dynamic.size());
        std::vector<std::byte> generated;
        REQUIRE(cdr::serialize(value, generated, order, e).ok());
        REQUIRE(generated == dynamic);
        const Json back = decode(*type, generated);
        CHECK(test_types::same_json(back, sample));
        // Read for its key alone: the same key, nothing else.
        const Json key = decode_key_of(*type, generated);
        if (resolve(*type).kind == TypeKind::Struct && !key_paths(resolve(*type)).empty()) {
          CHECK(key_hash(*type, key) == key_hash(*type, sample));
          CHECK(key.size() <= key_paths(resolve(*type)).size());
        } else {
          CHECK(key.is_null());
        }
      }
    }
    if constexpr (requires(const T& v) { cdr::key_hash(v); }) {
      if (resolve(*type).kind == TypeKind::Struct) {
        T value{};
        REQUIRE(cdr::deserialize(std::span<const std::byte>(encode(*type, sample)), value).ok());
        CHECK(key_hash(*type, sample) == cdr::key_hash(value));
      }
    }
  }
  // The default encoding is generated code's, and so is a default-constructed value.
  CHECK(default_encoding(*type) == cdr::default_encoding<T>());
  std::vector<std::byte> generated;
  REQUIRE(cdr::serialize(T{}, generated).ok());
  CHECK(encode(*type, default_value(*type)) == generated);
}

const std::string kAll = "tests/idlc/idl/all_constructs.idl";
const std::string kGaps = "tests/idlc/idl/gaps.idl";
const std::string kVectors = "interop/cdr/cyclone/Vectors.idl";

}  // namespace

TEST_CASE("Dynamic encoding is generated code's: all_constructs.idl", "[types][dynamic]") {
  check_type<Test::Primitives>(kAll, "Test::Primitives");
  check_type<Test::Strings>(kAll, "Test::Strings");
  check_type<Test::Collections>(kAll, "Test::Collections");
  check_type<Test::ByLong>(kAll, "Test::ByLong");
  check_type<Test::ByChar>(kAll, "Test::ByChar");
  check_type<Test::ByBool>(kAll, "Test::ByBool");
  check_type<Test::ByEnum>(kAll, "Test::ByEnum");
  check_type<Test::ByOctetLike>(kAll, "Test::ByOctetLike");
  check_type<Test::NestedChoice>(kAll, "Test::NestedChoice");
  check_type<Test::Base>(kAll, "Test::Base");
  check_type<Test::Derived>(kAll, "Test::Derived");
  check_type<Test::Annotated>(kAll, "Test::Annotated");
  check_type<Test::Extensible>(kAll, "Test::Extensible");
  check_type<Test::Inner>(kAll, "Test::Inner");
  check_type<Test::Outer>(kAll, "Test::Outer");
  check_type<Test::Legacy>(kAll, "Test::Legacy");
  check_type<Test::TreeNode>(kAll, "Test::TreeNode");
  check_type<Test::Keywords>(kAll, "Test::Keywords");
  check_type<Test::Reopened>(kAll, "Test::Reopened");
  check_type<Common::Point>(kAll, "Common::Point");
}

TEST_CASE("Dynamic encoding is generated code's: gaps.idl", "[types][dynamic]") {
  check_type<Gaps::Maps>(kGaps, "Gaps::Maps");
  check_type<Gaps::BoundedMap>(kGaps, "Gaps::BoundedMap");
  check_type<Gaps::Choice>(kGaps, "Gaps::Choice");
  check_type<Gaps::Bits>(kGaps, "Gaps::Bits");
  check_type<Gaps::SeqKey>(kGaps, "Gaps::SeqKey");
  check_type<Gaps::UnionKey>(kGaps, "Gaps::UnionKey");
  check_type<Gaps::Understood>(kGaps, "Gaps::Understood");
  check_type<Gaps::OptionalUnderstood>(kGaps, "Gaps::OptionalUnderstood");
  check_type<Gaps::Plain1>(kGaps, "Gaps::Plain1");
  check_type<Gaps::Inner>(kGaps, "Gaps::Inner");
  check_type<Gaps::Base>(kGaps, "Gaps::Base");
  check_type<Gaps::Reflected>(kGaps, "Gaps::Reflected");
}

TEST_CASE("Dynamic encoding is generated code's: Cyclone DDS vector types", "[types][dynamic]") {
  check_type<Xv::FinalShape>(kVectors, "Xv::FinalShape");
  check_type<Xv::AppShape>(kVectors, "Xv::AppShape");
  check_type<Xv::MutShape>(kVectors, "Xv::MutShape");
  check_type<Xv::Wide>(kVectors, "Xv::Wide");
  check_type<Xv::Inner>(kVectors, "Xv::Inner");
  check_type<Xv::Outer>(kVectors, "Xv::Outer");
  check_type<Xv::Opt>(kVectors, "Xv::Opt");
  check_type<Xv::MutOpt>(kVectors, "Xv::MutOpt");
  check_type<Xv::U>(kVectors, "Xv::U");
  check_type<Xv::WithUnion>(kVectors, "Xv::WithUnion");
  check_type<Xv::MutMix>(kVectors, "Xv::MutMix");
  check_type<Xv::Seqs>(kVectors, "Xv::Seqs");
  check_type<Xv::FinalOpt>(kVectors, "Xv::FinalOpt");
  check_type<Xv::AU>(kVectors, "Xv::AU");
  check_type<Xv::WithAU>(kVectors, "Xv::WithAU");
  check_type<Xv::KeyIn>(kVectors, "Xv::KeyIn");
  check_type<Xv::KeyMix>(kVectors, "Xv::KeyMix");
  check_type<Xv::AppKey>(kVectors, "Xv::AppKey");
  check_type<Xv::MutKey>(kVectors, "Xv::MutKey");
}

TEST_CASE("Serialized keys are Cyclone DDS's, byte for byte", "[types][dynamic][keys]") {
  // <name>-key-<encoding>-le.hex: what Cyclone DDS 0.10.2 puts in a dispose of the sample of
  // <name>-<encoding>-le.hex (interop/cdr/cyclone/gen.c). Several keys out of member order,
  // a nested key struct with keys of its own, 8-byte keys, strings; final, appendable, mutable.
  const std::string dir = kRepoRoot + "/interop/cdr/cyclone/";
  const std::pair<const char*, const char*> cases[] = {
      {"Xv::FinalShape", "FinalShape"}, {"Xv::AppShape", "AppShape"}, {"Xv::MutShape", "MutShape"},
      {"Xv::MutMix", "MutMix"},         {"Xv::KeyMix", "KeyMix"},     {"Xv::AppKey", "AppKey"},
      {"Xv::MutKey", "MutKey"}};
  int checked = 0;
  for (const auto& [type_name, file] : cases) {
    const Type* type = library(kVectors).find(type_name);
    REQUIRE(type != nullptr);
    for (const auto e : {cdr::Encoding::Xcdr1, cdr::Encoding::Xcdr2}) {
      const std::string rep = e == cdr::Encoding::Xcdr1 ? "xcdr1" : "xcdr2";
      const std::string base = dir + file;
      if (!std::filesystem::exists(base + "-key-" + rep + "-le.hex")) continue;
      INFO(file << " " << rep);
      const auto sample_bytes = test_types::load_hex_file(base + "-" + rep + "-le.hex");
      const auto key_bytes = test_types::load_hex_file(base + "-key-" + rep + "-le.hex");
      const Json sample = decode(*type, sample_bytes);
      // Written: the key of the decoded sample is Cyclone's key.
      CHECK(encode_key(*type, sample, e, cdr::Endianness::Little) == key_bytes);
      // Read: Cyclone's key names the sample's instance, every other member at its default.
      const Json key = decode_key(*type, key_bytes);
      CHECK(key_hash(*type, key) == key_hash(*type, sample));
      for (const auto& path : key_paths(resolve(*type))) {
        const Json* a = &key;
        const Json* b = &sample;
        for (const Member* m : path) {
          a = &(*a)[m->name];
          b = &(*b)[m->name];
        }
        CHECK(*a == *b);
      }
      // Big-endian: a round trip.
      const auto be = encode_key(*type, sample, e, cdr::Endianness::Big);
      CHECK(be.size() == key_bytes.size());
      CHECK(key_hash(*type, decode_key(*type, be)) == key_hash(*type, sample));
      ++checked;
    }
  }
  CHECK(checked == 9);
  // A key that is cut short, or of another representation, is refused.
  const Type* mix = library(kVectors).find("Xv::KeyMix");
  auto bytes = test_types::load_hex_file(dir + "KeyMix-key-xcdr1-le.hex");
  bytes.resize(bytes.size() - 8);
  CHECK_THROWS_AS(decode_key(*mix, bytes), DataError);
  bytes[1] = std::byte{0x03};  // PL_CDR_LE: not a final type's
  CHECK_THROWS_AS(decode_key(*mix, bytes), DataError);
  CHECK_THROWS_AS(decode_key(*library(kVectors).find("Xv::Wide"), bytes), DataError);  // no key
}

TEST_CASE("Dynamic encoding is generated code's: shipped, tool and test-program types",
          "[types][dynamic]") {
  check_type<ShapeType>("idl/ShapeType.idl", "ShapeType");
  check_type<Bench::Sequence>("idl/Sequence.idl", "Bench::Sequence");
  check_type<Avionics::Position>("idl/avionics.idl", "Avionics::Position");
  check_type<Avionics::FlightState>("idl/avionics.idl", "Avionics::FlightState");
  check_type<Avionics::AirData>("idl/avionics.idl", "Avionics::AirData");
  check_type<Avionics::Waypoint>("idl/avionics.idl", "Avionics::Waypoint");
  check_type<Avionics::NavFix>("idl/avionics.idl", "Avionics::NavFix");
  check_type<Avionics::Navigation>("idl/avionics.idl", "Avionics::Navigation");
  check_type<SpindlePerf::KeyedSeq>("tools/perf/perf.idl", "SpindlePerf::KeyedSeq");
  check_type<SpindleDemo::MemberReport>("tools/demo/demo_report.idl", "SpindleDemo::MemberReport");
  check_type<Chaos::Chunk>("tests/chaos/chaos.idl", "Chaos::Chunk");
  check_type<Consistency::Event>("tests/consistency/consistency.idl", "Consistency::Event");
  check_type<Consistency::Command>("tests/consistency/consistency.idl", "Consistency::Command");
  check_type<Sensors::Reading>("examples/sensor.idl", "Sensors::Reading");
  check_type<LoanTest::Telemetry>("tests/dcps_loan/loan_types.idl", "LoanTest::Telemetry");
  check_type<LoanTest::Frame>("tests/dcps_loan/loan_types.idl", "LoanTest::Frame", 1);
  check_type<LoanTest::Labelled>("tests/dcps_loan/loan_types.idl", "LoanTest::Labelled");
  check_type<Porting::Greeting>("tests/psm/programs/porting.idl", "Porting::Greeting");
  check_type<Porting::Ping>("tests/psm/programs/porting.idl", "Porting::Ping");
  check_type<Porting::Chunk>("tests/psm/programs/porting.idl", "Porting::Chunk");
}

namespace {

const Type& shape() {
  return *library("idl/ShapeType.idl").find("ShapeType");
}

template <class Fn>
void refused(Fn&& fn, cdr::Status status, const std::string& message) {
  try {
    fn();
    FAIL("accepted; expected: " << message);
  } catch (const DataError& e) {
    CHECK(e.status() == status);
    CHECK_THAT(e.what(), Catch::Matchers::Contains(message));
  }
}

}  // namespace

TEST_CASE("JSON that does not fit the type is refused with where and what",
          "[types][dynamic][errors]") {
  const Json ok = {{"color", "BLUE"}, {"x", 1}, {"y", 2}, {"shapesize", 3}};
  CHECK_NOTHROW(encode(shape(), ok));
  refused(
      [&] {
        (void)encode(shape(), Json{{"color", 5}});
      },
      cdr::Status::BadParameter, "ShapeType.color: expected a string, got 5");
  refused(
      [&] {
        (void)encode(shape(), Json{{"colour", "RED"}});
      },
      cdr::Status::BadParameter, "ShapeType: no member 'colour'");
  refused(
      [&] {
        (void)encode(shape(), Json{{"x", int64_t{1} << 40}});
      },
      cdr::Status::OutOfRange, "ShapeType.x: 1099511627776 does not fit");
  refused(
      [&] {
        (void)encode(shape(), Json{{"x", 1.5}});
      },
      cdr::Status::BadParameter, "ShapeType.x: expected an integer");
  refused([&] { (void)encode(shape(), Json::array()); }, cdr::Status::BadParameter,
          "ShapeType: expected an object");

  const TypeLibrary& all = library(kAll);
  refused(
      [&] {
        (void)encode(*all.find("Test::Strings"), Json{{"bounded", "123456789"}});
      },
      cdr::Status::BoundExceeded,
      "Test::Strings.bounded: string of 9 elements over its bound of 8");
  refused(
      [&] {
        (void)encode(*all.find("Test::Strings"), Json{{"unbounded", std::string("a\0b", 3)}});
      },
      cdr::Status::BadString, "Test::Strings.unbounded: a NUL character inside");
  refused(
      [&] {
        (void)encode(*all.find("Test::Annotated"), Json{{"bounded", 11}});
      },
      cdr::Status::OutOfRange, "Test::Annotated.bounded: value 11 out of range");
  refused(
      [&] {
        (void)encode(*all.find("Test::Derived"), Json{{"color", "PURPLE"}});
      },
      cdr::Status::BadEnumerator, "no enumerator \"PURPLE\" in enum Common::Color");
  refused(
      [&] {
        (void)encode(*all.find("Test::Derived"), Json{{"perms", {"EXECUTE"}}});
      },
      cdr::Status::BadBitmask, "no flag \"EXECUTE\" in bitmask Test::Permissions");
  refused(
      [&] {
        (void)encode(*all.find("Test::ByLong"), Json{{"discriminator", 10}, {"small", 1}});
      },
      cdr::Status::BadDiscriminator, "discriminator 10 does not select member 'small'");
  refused(
      [&] {
        (void)encode(*all.find("Test::Collections"), Json{{"matrix", {{1, 2, 3}}}});
      },
      cdr::Status::BadParameter, "Test::Collections.matrix: expected an array of 2 elements");
  refused(
      [&] {
        (void)encode(*all.find("Test::Collections"), Json{{"few_longs", {1, 2, 3, 4, 5, 6}}});
      },
      cdr::Status::BoundExceeded, "sequence of 6 elements over its bound of 5");
  const TypeLibrary& gaps = library(kGaps);
  refused(
      [&] {
        (void)encode(*gaps.find("Gaps::Maps"), Json{{"bounded", {{"x", "y"}}}});
      },
      cdr::Status::BadParameter, "map key 'x' is not an integer");
  refused(
      [&] {
        (void)encode(*gaps.find("Gaps::Maps"), Json{{"bounded", {{"1", "a"}, {"01", "b"}}}});
      },
      cdr::Status::DuplicateMapKey, "key '01' given twice");
  refused(
      [&] {
        (void)encode(*gaps.find("Gaps::Bits"), Json{{"small", {{"a", 8}}}});
      },
      cdr::Status::OutOfRange, "Gaps::Small.a: value out of range");

  // What the type does not allow at all: not a topic type, an encoding it does not take.
  CHECK_THROWS_AS(encode(*all.find("Test::Shape"), Json("CIRCLE")), std::invalid_argument);
  CHECK_THROWS_WITH(encode(*gaps.find("Gaps::Plain1"), Json::object(), cdr::Encoding::Xcdr2),
                    Catch::Matchers::Contains("XCDR2 is not among the data representations"));
}

TEST_CASE("Bytes that are no sample of the type are refused, never read past",
          "[types][dynamic][errors]") {
  const Type& mix = *library(kVectors).find("Xv::MutMix");
  std::mt19937_64 rng(7);
  const auto good = encode(mix, test_types::random_sample(mix, rng), cdr::Encoding::Xcdr2);
  // Every cut of a valid sample fails cleanly (but for the padding that ends it).
  const size_t padding = static_cast<size_t>(good[3]) & 3U;
  for (size_t n = 0; n < good.size() - padding; ++n) {
    INFO(n);
    CHECK_THROWS_AS(decode(mix, std::span<const std::byte>(good.data(), n)), DataError);
    // Read for its key alone, the cut sample is refused all the same: every member is read.
    CHECK_THROWS_AS(decode_key_of(mix, std::span<const std::byte>(good.data(), n)), DataError);
  }
  auto wrong_kind = good;
  wrong_kind[1] = std::byte{1};  // CDR_LE: not a mutable type's
  refused([&] { (void)decode(mix, wrong_kind); }, cdr::Status::BadEncapsulation,
          "representation 0/1 is not one of Xv::MutMix's");

  const Json ok = {{"color", "BLUE"}, {"x", 1}, {"y", 2}, {"shapesize", 3}};
  auto bytes = encode(shape(), ok, cdr::Encoding::Xcdr1, cdr::Endianness::Little);
  bytes[4] = std::byte{0xFF};  // the color's length
  refused([&] { (void)decode(shape(), bytes); }, cdr::Status::LengthTooLarge,
          "ShapeType.color: string length exceeds remaining bytes");
  bytes = encode(shape(), ok, cdr::Encoding::Xcdr1, cdr::Endianness::Little);
  bytes[12] = std::byte{'X'};  // the color's NUL
  refused([&] { (void)decode(shape(), bytes); }, cdr::Status::BadString,
          "ShapeType.color: string not NUL-terminated");

  const Type& derived = *library(kAll).find("Test::Derived");
  auto d = encode(derived, default_value(derived), cdr::Encoding::Xcdr1, cdr::Endianness::Little);
  // id (4), label (4 + 1, padded to 4), color: an enumerator that does not exist.
  d[4 + 4 + 8] = std::byte{9};
  refused([&] { (void)decode(derived, d); }, cdr::Status::BadEnumerator,
          "Test::Derived.color: bad enumerator 9 of Common::Color");
  // A member outside the key is checked as decode() checks it.
  refused([&] { (void)decode_key_of(derived, d); }, cdr::Status::BadEnumerator,
          "Test::Derived.color: bad enumerator 9 of Common::Color");
  bytes = encode(shape(), ok, cdr::Encoding::Xcdr1, cdr::Endianness::Little);
  bytes[4] = std::byte{0xFF};
  refused([&] { (void)decode_key_of(shape(), bytes); }, cdr::Status::LengthTooLarge,
          "ShapeType.color: string length exceeds remaining bytes");
}

TEST_CASE("Samples decode to JSON users can read", "[types][dynamic]") {
  const TypeLibrary& all = library(kAll);
  const Type& derived = *all.find("Test::Derived");
  Json in = default_value(derived);
  in["id"] = 7;
  in["label"] = "seven";
  in["perms"] = {"READ", "ADMIN"};
  in["by_long"] = {{"text", "ten"}};
  in["by_enum"] = {{"discriminator", "SQUARE"}, {"side", 2.5}};
  const Json out = decode(derived, encode(derived, in));
  CHECK(
      out.dump() ==
      R"({"id":7,"label":"seven","color":"RED","perms":["READ","ADMIN"],"wide":[],)"
      R"("by_long":{"discriminator":10,"text":"ten"},"by_char":{"discriminator":"a","a":0},)"
      R"("by_bool":{"discriminator":true,"yes":0},"by_enum":{"discriminator":"SQUARE","side":2.5},)"
      R"("by_other":{"discriminator":7,"where":{"x":0,"y":0}}})");
  const Type& annotated = *all.find("Test::Annotated");
  const Json a = decode(annotated, encode(annotated, Json::object()));
  CHECK(a["answer"] == 42);     // @default
  CHECK(a["maybe"].is_null());  // @optional, absent
}

// XTypes type information of dynamic types: byte for byte what Cyclone DDS's idlc generates
// for the same IDL, read back into an equal model, and bad bytes refused with a message that
// says what is wrong.
#include <spindle/types/from_idl.hpp>
#include <spindle/types/type_object.hpp>

#include "random_sample.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

using namespace spindle::types;
using Catch::Matchers::Contains;

namespace {

const std::string kSource = SPINDLE_SOURCE_DIR;
const std::string kIdlDir = kSource + "/tests/idlc/idl/";
const std::string kCyclone = kSource + "/interop/typeinfo/cyclone/";

using ByteVec = std::vector<std::byte>;

using test_types::load_hex_file;

std::string hex(const ByteVec& b) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < b.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b[i]));
    s += buf;
    s += (i % 16 == 15) ? '\n' : ' ';
  }
  return s;
}

// The model equality a round trip keeps: everything but extensibility_explicit,
// @data_representation and @default (which type information does not carry); bitsets are
// compared with their base's fields flattened in.
class Same {
 public:
  bool operator()(const Type* a, const Type* b) {
    if (a == nullptr || b == nullptr) return a == b;
    if (a->kind != b->kind || a->name != b->name) return why("kind or name", a);
    if (is_named(a->kind) && !seen_.insert(a->name).second) return true;
    if (a->bound != b->bound || a->dims != b->dims) return why("bound or dims", a);
    if (!(*this)(a->element, b->element) || !(*this)(a->key, b->key)) return why("element", a);
    switch (a->kind) {
      case TypeKind::Struct:
      case TypeKind::Union:
        if (a->extensibility != b->extensibility || a->nested != b->nested)
          return why("extensibility", a);
        if (!(*this)(a->base, b->base) || !(*this)(a->discriminator, b->discriminator))
          return why("base", a);
        if (a->members.size() != b->members.size() || a->cases.size() != b->cases.size())
          return why("member count", a);
        for (size_t i = 0; i < a->members.size(); ++i)
          if (!member(a->members[i], b->members[i])) return why(a->members[i].name, a);
        for (size_t i = 0; i < a->cases.size(); ++i) {
          if (a->cases[i].labels != b->cases[i].labels ||
              a->cases[i].is_default != b->cases[i].is_default ||
              !member(a->cases[i].member, b->cases[i].member))
            return why("case " + a->cases[i].member.name, a);
        }
        if (a->implicit_default != b->implicit_default) return why("implicit default", a);
        return true;
      case TypeKind::Enum:
        if (a->extensibility != b->extensibility) return why("extensibility", a);
        if (a->enumerators.size() != b->enumerators.size()) return why("enumerators", a);
        for (size_t i = 0; i < a->enumerators.size(); ++i)
          if (a->enumerators[i].name != b->enumerators[i].name ||
              a->enumerators[i].value != b->enumerators[i].value)
            return why("enumerator", a);
        return true;
      case TypeKind::Bitmask:
        if (a->flags.size() != b->flags.size()) return why("flags", a);
        for (size_t i = 0; i < a->flags.size(); ++i)
          if (a->flags[i].name != b->flags[i].name || a->flags[i].position != b->flags[i].position)
            return why("flag", a);
        return true;
      case TypeKind::Bitset: {
        const auto fa = all_bitfields(*a);
        const auto fb = all_bitfields(*b);
        if (a->total_bits != b->total_bits || fa.size() != fb.size()) return why("bits", a);
        for (size_t i = 0; i < fa.size(); ++i)
          if (fa[i]->name != fb[i]->name || fa[i]->width != fb[i]->width ||
              fa[i]->offset != fb[i]->offset || fa[i]->holder != fb[i]->holder)
            return why("bitfield", a);
        return true;
      }
      default:
        return true;
    }
  }
  std::string reason;

 private:
  static bool same_number(const std::optional<Literal>& a, const std::optional<Literal>& b) {
    if (a.has_value() != b.has_value()) return false;
    if (!a) return true;
    const auto num = [](const Literal& l) -> long double {
      if (const auto* i = std::get_if<int64_t>(&l)) return static_cast<long double>(*i);
      if (const auto* u = std::get_if<uint64_t>(&l)) return static_cast<long double>(*u);
      if (const auto* d = std::get_if<long double>(&l)) return *d;
      if (const auto* x = std::get_if<bool>(&l)) return *x ? 1 : 0;
      return 0;
    };
    if (std::holds_alternative<std::string>(*a) || std::holds_alternative<std::string>(*b))
      return *a == *b;
    return num(*a) == num(*b);
  }
  bool member(const Member& a, const Member& b) {
    return a.name == b.name && a.id == b.id && a.key == b.key && a.optional == b.optional &&
           a.must_understand == b.must_understand && a.external == b.external &&
           same_number(a.min, b.min) && same_number(a.max, b.max) && (*this)(a.type, b.type);
  }
  bool why(const std::string& what, const Type* t) {
    if (reason.empty()) reason = t->name + ": " + what;
    return false;
  }
  std::set<std::string> seen_;
};

void check_round_trip(const Type& t) {
  INFO("type " << t.name);
  const TypeInfo once = make_type_info(t);
  TypeLibrary fresh;
  const Type* back = load_type_info(fresh, once.information, once.mapping);
  REQUIRE(back != nullptr);
  Same same;
  CHECK(same(&t, back));
  CHECK(same.reason == "");
  const TypeInfo twice = make_type_info(*back);
  CHECK(hex(twice.information) == hex(once.information));
  CHECK(hex(twice.mapping) == hex(once.mapping));
  // Loading again into the same library reuses the equal types.
  CHECK(load_type_info(fresh, once.information, once.mapping) == back);
}

std::string file_name(const std::string& scoped) {
  // Built up rather than replaced in place: GCC 12 at -O3 warns (-Wrestrict) inside
  // std::string::replace.
  std::string s;
  for (size_t i = 0; i < scoped.size();) {
    if (scoped.compare(i, 2, "::") == 0) {
      s += '_';
      i += 2;
    } else {
      s += scoped[i++];
    }
  }
  return s;
}

}  // namespace

TEST_CASE("Type information is byte for byte what Cyclone DDS idlc generates",
          "[types][typeobject][interop]") {
  TypeLibrary lib;
  load_idl_file(lib, kCyclone + "TypeInfo.idl");
  int compared = 0;
  for (const Type* t : lib.named()) {
    const std::string base = kCyclone + file_name(t->name);
    if (!std::filesystem::exists(base + "-info.hex")) continue;
    INFO("type " << t->name);
    const TypeInfo got = make_type_info(*t);
    CHECK(hex(got.information) == hex(load_hex_file(base + "-info.hex")));
    CHECK(hex(got.mapping) == hex(load_hex_file(base + "-map.hex")));
    ++compared;
  }
  CHECK(compared == 20);
}

TEST_CASE("Cyclone DDS type information loads into the types idlc gives",
          "[types][typeobject][interop]") {
  TypeLibrary idl;
  load_idl_file(idl, kCyclone + "TypeInfo.idl");
  TypeLibrary lib;
  for (const auto& name : {"TI::MutMix", "TI::WithUnions", "TI::Typedefs", "TI::Derived"}) {
    const std::string base = kCyclone + file_name(name);
    const Type* t =
        load_type_info(lib, load_hex_file(base + "-info.hex"), load_hex_file(base + "-map.hex"));
    REQUIRE(t != nullptr);
    CHECK(t->name == name);
    Same same;
    CHECK(same(idl.find(name), t));
    CHECK(same.reason == "");
  }
  CHECK(lib.find("TI::Inner") != nullptr);  // a dependency, shared by several
}

TEST_CASE("Type information of every IDL construct reads back into an equal model",
          "[types][typeobject]") {
  for (const std::string& file :
       {kIdlDir + "all_constructs.idl", kIdlDir + "gaps.idl", kSource + "/idl/avionics.idl",
        kSource + "/idl/ShapeType.idl", kSource + "/idl/Sequence.idl", kCyclone + "TypeInfo.idl"}) {
    INFO("file " << file);
    TypeLibrary lib;
    load_idl_file(lib, file, {{kIdlDir}, {}});
    for (const Type* t : lib.named())
      check_round_trip(*t);
  }
}

TEST_CASE("Recursive types are named by their strongly connected component",
          "[types][typeobject]") {
  TypeLibrary lib;
  load_idl_text(lib,
                "module R { struct Node; typedef sequence<Node> Nodes;\n"
                "  @final struct Node { long v; Nodes kids; };\n"
                "  @final struct Holder { Node root; sequence<Holder> more; }; };\n",
                "r.idl");
  const TypeInfo info = make_type_info(*lib.find("R::Holder"));
  // The root's identifier in the complete half is a TI_STRONGLY_CONNECTED_COMPONENT (0xb0).
  CHECK(hex(info.information).find("b0") != std::string::npos);
  check_round_trip(*lib.find("R::Holder"));
  check_round_trip(*lib.find("R::Nodes"));
}

TEST_CASE("A type of a known name is reused when equal and refused when different",
          "[types][typeobject][errors]") {
  TypeLibrary a;
  load_idl_text(a, "@final struct P { long x; };\n@final struct Q { P p; };\n", "a.idl");
  const TypeInfo info = make_type_info(*a.find("Q"));
  TypeLibrary b;
  load_idl_text(b, "@final struct P { long x; };\n", "b.idl");
  const Type* q = load_type_info(b, info.information, info.mapping);
  CHECK(q->members[0].type == b.find("P"));

  TypeLibrary c;
  load_idl_text(c, "@final struct P { short x; };\n", "c.idl");
  CHECK_THROWS_WITH(load_type_info(c, info.information, info.mapping),
                    Contains("type 'P' differs from the type of that name already known"));
  CHECK(c.find("Q") == nullptr);  // nothing added
}

TEST_CASE("Malformed type information is refused with what is wrong",
          "[types][typeobject][errors]") {
  TypeLibrary idl;
  load_idl_file(idl, kCyclone + "TypeInfo.idl");
  const TypeInfo good = make_type_info(*idl.find("TI::Derived"));
  TypeLibrary lib;
  const auto load = [&](const ByteVec& info, const ByteVec& map) {
    return load_type_info(lib, info, map);
  };

  SECTION("truncated") {
    ByteVec info = good.information;
    info.resize(10);
    CHECK_THROWS_WITH(load(info, good.mapping),
                      Contains("TypeInformation at byte") && Contains("past the end"));
    ByteVec map = good.mapping;
    map.resize(map.size() / 2);
    CHECK_THROWS_AS(load(good.information, map), TypeObjectError);
    CHECK_THROWS_WITH(load(good.information, {}), Contains("TypeMapping at byte 0: truncated"));
  }
  SECTION("a length past the end") {
    ByteVec map = good.mapping;
    map[0] = std::byte{0xff};
    map[1] = std::byte{0xff};
    CHECK_THROWS_WITH(
        load(good.information, map),
        Contains("identifier_object_pair_minimal: length") && Contains("past the end"));
  }
  SECTION("a bad discriminator") {
    // The complete root identifier's discriminator in the TypeInformation.
    ByteVec info = good.information;
    const size_t at = hex(info).find("02 10 00 40") / 3 + 12 + 4;  // EMHEADER, NEXTINT, 2 DHEADERs
    REQUIRE(info[at] == std::byte{0xf2});
    info[at] = std::byte{0x5f};
    CHECK_THROWS_WITH(load(info, good.mapping),
                      Contains("TypeIdentifier discriminator 95 is unknown"));
    info[at] = std::byte{0xf1};
    CHECK_THROWS_WITH(load(info, good.mapping), Contains("no EK_COMPLETE hash"));
  }
  SECTION("an unknown identifier") {
    ByteVec info = good.information;
    const size_t at = hex(info).find("02 10 00 40") / 3 + 12 + 5;
    info[at] ^= std::byte{0xff};  // the first hash byte
    CHECK_THROWS_WITH(load(info, good.mapping),
                      Contains("unknown type identifier") && Contains("no complete TypeObject"));
  }
  SECTION("a hash that does not match its object") {
    ByteVec map = good.mapping;
    // The complete struct's name "TI::Derived" changed to "TI::Derivee".
    const std::string h = hex(map);
    const size_t at = h.find("44 65 72 69 76 65 64") / 3 + 6;
    map[at] = std::byte{'e'};
    CHECK_THROWS_WITH(load(good.information, map), Contains("is not the hash of its TypeObject"));
  }
  SECTION("a cycle without a definition") {
    TypeLibrary r;
    load_idl_text(r, "struct Node; @final struct Node { long v; sequence<Node> kids; };\n",
                  "n.idl");
    const TypeInfo rec = make_type_info(*r.find("Node"));
    ByteVec map = rec.mapping;
    REQUIRE(map.size() >= 4);
    // Keep the minimal half, empty the complete pairs and the complete-minimal pairs.
    const size_t min_len = static_cast<size_t>(map.at(0)) | static_cast<size_t>(map.at(1)) << 8;
    map.resize(4 + min_len);
    while (map.size() % 4 != 0)
      map.push_back(std::byte{0});
    for (int i = 0; i < 2; ++i)
      for (const int v : {4, 0, 0, 0, 0, 0, 0, 0})
        map.push_back(static_cast<std::byte>(v));
    CHECK_THROWS_WITH(load(rec.information, map),
                      Contains("unknown type identifier SCC") && Contains("[0/1]"));
  }
  CHECK(lib.named().empty());
}

// Types back to IDL text: every shipped and test type, printed and loaded again, is the type it
// was (the whole model, and its type information byte for byte); so is a type read from type
// information, as `spindle typeof` prints it. The text of a small keyed type is pinned, and
// names that are keywords or hidden by other declarations are written so that they load.
#include <spindle/types/from_idl.hpp>
#include <spindle/types/to_idl.hpp>
#include <spindle/types/type_object.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace spindle::types;

namespace {

const std::string kTreeRoot = SPINDLE_SOURCE_DIR;

// Every IDL file the dynamic-type tests load (dynamic_data_test.cpp, type_object_test.cpp).
const std::vector<std::string> kFiles = {"tests/idlc/idl/all_constructs.idl",
                                         "tests/idlc/idl/gaps.idl",
                                         "interop/cdr/cyclone/Vectors.idl",
                                         "interop/typeinfo/cyclone/TypeInfo.idl",
                                         "idl/ShapeType.idl",
                                         "idl/Sequence.idl",
                                         "idl/avionics.idl",
                                         "tools/perf/perf.idl",
                                         "tools/demo/demo_report.idl",
                                         "tests/chaos/chaos.idl",
                                         "tests/consistency/consistency.idl",
                                         "examples/sensor.idl",
                                         "tests/dcps_loan/loan_types.idl",
                                         "tests/psm/programs/porting.idl"};

void load(TypeLibrary& lib, const std::string& relative) {
  const std::string path = kTreeRoot + "/" + relative;
  load_idl_file(lib, path, {{path.substr(0, path.rfind('/'))}, {}});
}

// Everything the model holds is equal, named types compared where they are met (once per
// pair, so that recursive types end). `reason` names the first difference.
class Equal {
 public:
  bool operator()(const Type* a, const Type* b) {
    if (a == nullptr || b == nullptr) return a == b || why("one is null", a != nullptr ? a : b);
    if (a->kind != b->kind || a->name != b->name) return why("kind or name", a);
    if (is_named(a->kind) && !seen_.insert({a, b}).second) return true;
    if (a->bound != b->bound || a->dims != b->dims) return why("bound or dims", a);
    if (!(*this)(a->element, b->element) || !(*this)(a->key, b->key) ||
        !(*this)(a->base, b->base) || !(*this)(a->discriminator, b->discriminator))
      return why("element, key, base or discriminator", a);
    if (a->extensibility != b->extensibility ||
        a->extensibility_explicit != b->extensibility_explicit ||
        a->representations != b->representations || a->nested != b->nested)
      return why("extensibility, representation or @nested", a);
    if (a->members.size() != b->members.size() || a->cases.size() != b->cases.size())
      return why("member count", a);
    for (size_t i = 0; i < a->members.size(); ++i)
      if (!member(a->members[i], b->members[i])) return why("member " + a->members[i].name, a);
    for (size_t i = 0; i < a->cases.size(); ++i) {
      const auto& ca = a->cases[i];
      const auto& cb = b->cases[i];
      if (ca.labels != cb.labels || ca.is_default != cb.is_default || !member(ca.member, cb.member))
        return why("case " + ca.member.name, a);
    }
    if (a->implicit_default != b->implicit_default) return why("implicit default", a);
    if (a->enumerators.size() != b->enumerators.size()) return why("enumerators", a);
    for (size_t i = 0; i < a->enumerators.size(); ++i)
      if (a->enumerators[i].name != b->enumerators[i].name ||
          a->enumerators[i].value != b->enumerators[i].value)
        return why("enumerator " + a->enumerators[i].name, a);
    if (a->flags.size() != b->flags.size()) return why("flags", a);
    for (size_t i = 0; i < a->flags.size(); ++i)
      if (a->flags[i].name != b->flags[i].name || a->flags[i].position != b->flags[i].position)
        return why("flag " + a->flags[i].name, a);
    if (a->bitfields.size() != b->bitfields.size() || a->total_bits != b->total_bits)
      return why("bitfields", a);
    for (size_t i = 0; i < a->bitfields.size(); ++i) {
      const auto& fa = a->bitfields[i];
      const auto& fb = b->bitfields[i];
      if (fa.name != fb.name || fa.width != fb.width || fa.offset != fb.offset ||
          fa.holder != fb.holder)
        return why("bitfield " + fa.name, a);
    }
    return true;
  }
  std::string reason;

 private:
  bool member(const Member& a, const Member& b) {
    return a.name == b.name && a.id == b.id && a.key == b.key && a.optional == b.optional &&
           a.must_understand == b.must_understand && a.external == b.external &&
           same(a.default_value, b.default_value) && same(a.min, b.min) && same(a.max, b.max) &&
           (*this)(a.type, b.type);
  }
  // The same value: type information gives a bound of an unsigned member as a signed number
  // where IDL gives it as an unsigned one.
  static bool same(const std::optional<Literal>& a, const std::optional<Literal>& b) {
    if (!a || !b) return a.has_value() == b.has_value();
    const auto* ia = std::get_if<int64_t>(&*a);
    const auto* ub = std::get_if<uint64_t>(&*b);
    if (ia != nullptr && ub != nullptr) return *ia >= 0 && static_cast<uint64_t>(*ia) == *ub;
    const auto* ua = std::get_if<uint64_t>(&*a);
    const auto* ib = std::get_if<int64_t>(&*b);
    if (ua != nullptr && ib != nullptr) return *ib >= 0 && static_cast<uint64_t>(*ib) == *ua;
    return *a == *b;
  }
  bool why(const std::string& what, const Type* t) {
    if (reason.empty()) reason = (t->name.empty() ? to_string(t->kind) : t->name) + ": " + what;
    return false;
  }
  std::set<std::pair<const Type*, const Type*>> seen_;
};

// Prints `t`, loads the text into a new library and checks the type there is `t`; returns
// the text.
std::string round_trip(const Type& t) {
  const std::string text = to_idl(t);
  INFO("type " << t.name << ", printed:\n" << text);
  TypeLibrary back;
  REQUIRE_NOTHROW(load_idl_text(back, text, "printed.idl"));
  const Type* again = back.find(t.name);
  REQUIRE(again != nullptr);
  Equal equal;
  CHECK(equal(&t, again));
  CHECK(equal.reason == "");
  CHECK(make_type_info(*again).information == make_type_info(t).information);
  CHECK(make_type_info(*again).mapping == make_type_info(t).mapping);
  CHECK(to_idl(*again) == text);  // printing is a fixed point
  return text;
}

}  // namespace

TEST_CASE("Every shipped and test type printed as IDL loads back into the same type",
          "[types][to_idl]") {
  int types = 0;
  for (const auto& file : kFiles) {
    INFO("file " << file);
    TypeLibrary lib;
    load(lib, file);
    for (const Type* t : lib.named()) {
      round_trip(*t);
      ++types;
    }
    // All of a file's types in one text, each declared once.
    const std::string all = to_idl(lib.named());
    INFO(all);
    TypeLibrary back;
    REQUIRE_NOTHROW(load_idl_text(back, all, "all.idl"));
    CHECK(back.named().size() == lib.named().size());
    for (const Type* t : lib.named()) {
      Equal equal;
      CHECK(equal(t, back.find(t->name)));
      CHECK(equal.reason == "");
    }
  }
  CHECK(types >= 120);
}

TEST_CASE("A type read from type information prints as IDL with the same type information",
          "[types][to_idl][typeobject]") {
  for (const auto& file : kFiles) {
    INFO("file " << file);
    TypeLibrary lib;
    load(lib, file);
    for (const Type* t : lib.named()) {
      const TypeInfo info = make_type_info(*t);
      TypeLibrary discovered;
      const Type* d = load_type_info(discovered, info.information, info.mapping);
      REQUIRE(d != nullptr);
      round_trip(*d);
    }
  }
}

TEST_CASE("A keyed type prints as the IDL it was written in", "[types][to_idl]") {
  TypeLibrary lib;
  load(lib, "idl/ShapeType.idl");
  const Type& shape = *lib.find("ShapeType");
  CHECK(to_idl(shape) ==
        "struct ShapeType {\n"
        "  @key string<128> color;\n"
        "  long x;\n"
        "  long y;\n"
        "  long shapesize;\n"
        "};\n");
  // From discovery the extensibility counts as written (type information always says it).
  const TypeInfo info = make_type_info(shape);
  TypeLibrary discovered;
  CHECK(to_idl(*load_type_info(discovered, info.information, info.mapping)) ==
        "@appendable\n"
        "struct ShapeType {\n"
        "  @key string<128> color;\n"
        "  long x;\n"
        "  long y;\n"
        "  long shapesize;\n"
        "};\n");
}

TEST_CASE("Printed IDL puts types in modules, after what they need, with their annotations",
          "[types][to_idl]") {
  TypeLibrary lib;
  load_idl_text(lib,
                "module Geo { enum Unit { M, @value(5) KM }; struct Point { double x, y; }; };\n"
                "module Track {\n"
                "  struct Node;\n"
                "  typedef sequence<Node> Nodes;\n"
                "  @final struct Node { long v; Nodes kids; };\n"
                "  @mutable @nested struct Fix {\n"
                "    @key @id(3) long id; @optional Geo::Point at; @hashid long h;\n"
                "    @default(Geo::KM) Geo::Unit unit; @range(min = 0, max = 9) short q;\n"
                "    char c[2]; map<string<4>, sequence<Geo::Point, 3>> m;\n"
                "  };\n"
                "  union Pick switch (Geo::Unit) { case Geo::M: long m; default: Fix f; };\n"
                "  @bit_bound(8) bitmask Bits { A, @position(5) B };\n"
                "  bitset Small { bitfield<1, boolean> on; bitfield<3>; bitfield<4> n; };\n"
                "};\n",
                "t.idl");
  const std::string nodes = round_trip(*lib.find("Track::Nodes"));
  CHECK(nodes ==
        "module Track {\n"
        "  struct Node;\n"
        "\n"
        "  typedef sequence<Node> Nodes;\n"
        "\n"
        "  @final\n"
        "  struct Node {\n"
        "    long v;\n"
        "    Nodes kids;\n"
        "  };\n"
        "};\n");
  const std::string pick = round_trip(*lib.find("Track::Pick"));
  CHECK(pick ==
        "module Geo {\n"
        "  enum Unit {\n"
        "    M,\n"
        "    @value(5) KM\n"
        "  };\n"
        "\n"
        "  struct Point {\n"
        "    double x;\n"
        "    double y;\n"
        "  };\n"
        "};\n"
        "\n"
        "module Track {\n"
        "  @mutable @nested\n"
        "  struct Fix {\n"
        "    @key @id(3) long id;\n"
        "    @optional Geo::Point at;\n"
        "    @hashid long h;\n"
        "    @default(Geo::KM) Geo::Unit unit;\n"
        "    @min(0) @max(9) short q;\n"
        "    char c[2];\n"
        "    map<string<4>, sequence<Geo::Point, 3>> m;\n"
        "  };\n"
        "\n"
        "  union Pick switch (Geo::Unit) {\n"
        "    case Geo::M:\n"
        "      long m;\n"
        "    default:\n"
        "      Fix f;\n"
        "  };\n"
        "};\n");
  CHECK(round_trip(*lib.find("Track::Bits")) ==
        "module Track {\n"
        "  @bit_bound(8)\n"
        "  bitmask Bits {\n"
        "    A,\n"
        "    @position(5) B\n"
        "  };\n"
        "};\n");
  CHECK(round_trip(*lib.find("Track::Small")) ==
        "module Track {\n"
        "  bitset Small {\n"
        "    bitfield<1, boolean> on;\n"
        "    bitfield<3>;\n"
        "    bitfield<4> n;\n"
        "  };\n"
        "};\n");
}

TEST_CASE("Names that are keywords or hidden by other names are printed so that they load",
          "[types][to_idl]") {
  TypeLibrary lib;
  load_idl_text(lib,
                "module _module {\n"
                "  enum _switch { _case, _default, _TRUE };\n"
                "  struct T { long x; };\n"
                "  module B {\n"
                "    struct _module { long y; };\n"
                "    struct T { long z; };\n"
                "    @autoid(HASH) struct _struct {\n"
                "      @key long _long; string _string; _switch _enum; ::_module::T t; T bt;\n"
                "      _module m; long __under; sequence<_struct> more;\n"
                "    };\n"
                "    union U switch (_switch) { case _case: long a; case _TRUE: char c; };\n"
                "  };\n"
                "};\n",
                "k.idl");
  const std::string text = round_trip(*lib.find("module::B::struct"));
  CHECK(text.find("@autoid(HASH)\n    struct _struct {") != std::string::npos);
  CHECK(text.find("@key long _long;") != std::string::npos);
  // `T` and `_module` alone would find B's own structs.
  CHECK(text.find("::_module::T t;") != std::string::npos);
  CHECK(text.find("T bt;") != std::string::npos);
  CHECK(text.find("long __under;") != std::string::npos);
  CHECK(round_trip(*lib.find("module::B::U")).find("case _TRUE:") != std::string::npos);
}

TEST_CASE("What IDL cannot say is refused", "[types][to_idl][errors]") {
  TypeLibrary lib;
  Type* bad = lib.add_named(TypeKind::Struct, "Bad Name");
  CHECK_THROWS_AS(to_idl(*bad), std::invalid_argument);
  CHECK_THROWS_AS(to_idl(*lib.string(TypeKind::String8, 0)), std::invalid_argument);

  // A sequence of an anonymous array: IDL needs a typedef for the array.
  Type* s = lib.add_named(TypeKind::Struct, "S");
  Member a;
  a.name = "a";
  a.type = lib.sequence(lib.array(lib.primitive(TypeKind::Int32), {2}), 0);
  s->members.push_back(a);
  CHECK_THROWS_AS(to_idl(*s), std::invalid_argument);

  // Holding itself through an @optional member: discovery allows it, IDL does not.
  Type* self = lib.add_named(TypeKind::Struct, "Self");
  Member m;
  m.name = "next";
  m.type = self;
  m.optional = true;
  self->members.push_back(m);
  CHECK_THROWS_AS(to_idl(*self), std::invalid_argument);
}

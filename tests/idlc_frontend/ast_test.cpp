// The AST the front end builds for every IDL construct Spindle supports, after sema.
#include "test_support.hpp"

#include <fstream>
#include <sstream>

using namespace idlc_test;

namespace {

int64_t i64(const ConstValue& v) {
  return std::get<int64_t>(v);
}
uint64_t u64(const ConstValue& v) {
  return std::get<uint64_t>(v);
}

}  // namespace

TEST_CASE("every basic type maps to its primitive kind", "[ast]") {
  const auto p = parse(R"(
struct Basic {
  int8 a; uint8 b; int16 c; uint16 d; int32 e; uint32 f; int64 g; uint64 h;
  short i; long j; long long k; unsigned short l; unsigned long m; unsigned long long n;
  octet o; char q; wchar r; boolean s; float t; double u; long double v;
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& s = p.get<StructDecl>("Basic");
  const std::vector<PrimitiveKind> expected = {
      PrimitiveKind::Int8,      PrimitiveKind::UInt8,   PrimitiveKind::Int16, PrimitiveKind::UInt16,
      PrimitiveKind::Int32,     PrimitiveKind::UInt32,  PrimitiveKind::Int64, PrimitiveKind::UInt64,
      PrimitiveKind::Int16,     PrimitiveKind::Int32,   PrimitiveKind::Int64, PrimitiveKind::UInt16,
      PrimitiveKind::UInt32,    PrimitiveKind::UInt64,  PrimitiveKind::Octet, PrimitiveKind::Char,
      PrimitiveKind::WChar,     PrimitiveKind::Boolean, PrimitiveKind::Float, PrimitiveKind::Double,
      PrimitiveKind::LongDouble};
  REQUIRE(s.members.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("member " << s.members[i].name);
    CHECK(s.members[i].type->kind == Type::Kind::Primitive);
    CHECK(s.members[i].type->primitive == expected[i]);
    CHECK(s.members[i].id == i);
  }
}

TEST_CASE("strings, sequences and arrays keep bounds and dimensions", "[ast]") {
  const auto p = parse(R"(
const long N = 4;
struct Holder {
  string s; string<8> bs; wstring w; wstring<N> bw;
  sequence<long> q; sequence<long, 10> bq; sequence<sequence<string<3>, 2>> nested;
  long grid[2][3]; sequence<octet> blobs[N * 2];
};
typedef long Matrix[3][4], Row[4];
typedef sequence<Matrix, 5> Matrices;
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& h = p.get<StructDecl>("Holder");
  CHECK(member(h, "s").type->kind == Type::Kind::String);
  CHECK(member(h, "s").type->bound == 0);
  CHECK_FALSE(member(h, "s").type->wide);
  CHECK(member(h, "bs").type->bound == 8);
  CHECK(member(h, "w").type->wide);
  CHECK(member(h, "bw").type->bound == 4);
  CHECK(member(h, "q").type->kind == Type::Kind::Sequence);
  CHECK(member(h, "q").type->bound == 0);
  CHECK(member(h, "bq").type->bound == 10);
  const auto& nested = *member(h, "nested").type;
  CHECK(nested.bound == 0);
  REQUIRE(nested.element->kind == Type::Kind::Sequence);
  CHECK(nested.element->bound == 2);
  CHECK(nested.element->element->kind == Type::Kind::String);
  CHECK(nested.element->element->bound == 3);
  CHECK(member(h, "grid").array_dims == std::vector<uint64_t>{2, 3});
  CHECK(member(h, "blobs").array_dims == std::vector<uint64_t>{8});

  const auto& matrix = p.get<TypedefDecl>("Matrix");
  CHECK(matrix.array_dims == std::vector<uint64_t>{3, 4});
  CHECK(matrix.type->primitive == PrimitiveKind::Int32);
  CHECK(p.get<TypedefDecl>("Row").array_dims == std::vector<uint64_t>{4});
  const auto& ms = p.get<TypedefDecl>("Matrices");
  CHECK(ms.type->bound == 5);
  std::vector<uint64_t> dims;
  const Type& leaf = resolve_typedefs(*ms.type->element, &dims);
  CHECK(leaf.primitive == PrimitiveKind::Int32);
  CHECK(dims == std::vector<uint64_t>{3, 4});
}

TEST_CASE("constants are evaluated and converted to their declared type", "[ast][const]") {
  const auto p = parse(R"(
module C {
  const long A = (1 + 2) * 3 - 4 / 2 % 3;
  const long B = -A;
  const unsigned long MASK = ~0;
  const octet O = 0xFF;
  const short SH = 1 << 4 | 3 & 1 ^ 2;
  const long long RS = -64 >> 2;
  const unsigned long long BIGU = 18446744073709551615;
  const long long MINLL = -9223372036854775807 - 1;
  const long OCT = 010;
  const double D = 1.5e2 + A;
  const float F = .5;
  const long double LD = 2.0 / 4;
  const char CH = 'x';
  const char ESC = '\n';
  const wchar WC = L'\u00e9';
  const string S = "con" "cat";
  const string<5> BS = "abc";
  const string ESCAPED = "a\x41\101\u00e9\xff\t";
  const wstring WS = L"wide";
  const boolean T = TRUE;
  const boolean NF = FALSE;
  const int8 I8 = -128;
  const uint16 U16 = C::A + ::C::O;
  enum Color { RED, GREEN, BLUE };
  const Color FAV = GREEN;
  typedef long Counter;
  const Counter COUNT = 7;
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto v = [&](const char* n) -> const ConstValue& { return p.get<ConstDecl>(n).value; };
  CHECK(i64(v("C::A")) == 7);
  CHECK(i64(v("C::B")) == -7);
  CHECK(u64(v("C::MASK")) == 0xFFFFFFFFu);
  CHECK(u64(v("C::O")) == 255);
  CHECK(i64(v("C::SH")) == ((1 << 4) | ((3 & 1) ^ 2)));
  CHECK(i64(v("C::RS")) == -16);
  CHECK(u64(v("C::BIGU")) == UINT64_MAX);
  CHECK(i64(v("C::MINLL")) == INT64_MIN);
  CHECK(i64(v("C::OCT")) == 8);
  CHECK(std::get<long double>(v("C::D")) == 157.0L);
  CHECK(std::get<long double>(v("C::F")) == 0.5L);
  CHECK(std::get<long double>(v("C::LD")) == 0.5L);
  CHECK(std::get<CharValue>(v("C::CH")).value == U'x');
  CHECK(std::get<CharValue>(v("C::ESC")).value == U'\n');
  CHECK(std::get<CharValue>(v("C::WC")).value == 0xE9);
  CHECK(std::get<CharValue>(v("C::WC")).wide);
  CHECK(std::get<StringValue>(v("C::S")).utf8 == "concat");
  CHECK(std::get<StringValue>(v("C::BS")).utf8 == "abc");
  CHECK(std::get<StringValue>(v("C::ESCAPED")).utf8 == "aAA\xC3\xA9\xFF\t");
  CHECK(std::get<StringValue>(v("C::WS")).wide);
  CHECK(std::get<bool>(v("C::T")));
  CHECK_FALSE(std::get<bool>(v("C::NF")));
  CHECK(i64(v("C::I8")) == -128);
  CHECK(u64(v("C::U16")) == 262);
  CHECK(std::get<const EnumeratorDecl*>(v("C::FAV"))->name == "GREEN");
  CHECK(i64(v("C::COUNT")) == 7);
  CHECK(p.get<ConstDecl>("C::COUNT").type->decl->name == "Counter");
}

TEST_CASE("modules reopen and names resolve outward and absolutely", "[ast][scope]") {
  const auto p = parse(R"(
module A {
  struct Inner { long x; };
  module B { struct Deep { Inner i; }; };
};
module A {
  struct Again { Inner i; B::Deep d; ::A::B::Deep e; };
};
struct Top { A::Again a; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  REQUIRE(p.spec->definitions.size() == 3);
  CHECK(p.spec->definitions[0]->kind == DeclKind::Module);
  CHECK(p.spec->definitions[1]->kind == DeclKind::Module);
  CHECK(p.spec->definitions[1]->name == "A");
  const auto& again = p.get<StructDecl>("A::Again");
  CHECK(again.parent == p.spec->definitions[1]);
  CHECK(again.module_path() == std::vector<std::string>{"A"});
  CHECK(member(again, "i").type->decl == &p.get<StructDecl>("A::Inner"));
  CHECK(member(again, "d").type->decl == &p.get<StructDecl>("A::B::Deep"));
  CHECK(member(again, "e").type->decl == &p.get<StructDecl>("A::B::Deep"));
  CHECK(member(p.get<StructDecl>("A::B::Deep"), "i").type->decl->scoped_name() == "A::Inner");
}

TEST_CASE("struct inheritance links the base and continues member ids", "[ast][struct]") {
  const auto p = parse(R"(
struct Base { long a; long b; };
struct Derived : Base { long c; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& d = p.get<StructDecl>("Derived");
  CHECK(d.base == &p.get<StructDecl>("Base"));
  REQUIRE(d.members.size() == 1);
  CHECK(d.members[0].id == 2);
}

TEST_CASE("unions keep labels, defaults and the implicit default", "[ast][union]") {
  const auto p = parse(R"(
enum Kind { K_INT, K_TEXT, K_NONE };
union ByEnum switch (Kind) {
  case K_INT: long i;
  case K_TEXT: string t;
};
union ByLong switch (long) {
  case 1: case 2: long small;
  case -5: @id(9) double neg;
  default: octet other;
};
union ByChar switch (char) { case 'a': long a; case '\0': long z; };
union ByBool switch (boolean) { case TRUE: long yes; };
typedef short Disc;
union ByTypedef switch (Disc) { case 0: long zero; case 1: long one[2]; };
union ByOctet switch (octet) { case 255: long top; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& e = p.get<UnionDecl>("ByEnum");
  REQUIRE(e.cases.size() == 2);
  CHECK(std::get<const EnumeratorDecl*>(e.cases[0].labels[0])->name == "K_INT");
  REQUIRE(e.implicit_default.has_value());
  CHECK(std::get<const EnumeratorDecl*>(*e.implicit_default)->name == "K_NONE");
  CHECK(e.cases[0].member.id == 1);
  CHECK(e.cases[1].member.id == 2);

  const auto& l = p.get<UnionDecl>("ByLong");
  REQUIRE(l.cases.size() == 3);
  CHECK(l.cases[0].labels.size() == 2);
  CHECK(i64(l.cases[0].labels[1]) == 2);
  CHECK(i64(l.cases[1].labels[0]) == -5);
  CHECK(l.cases[1].member.id == 9);
  CHECK(l.cases[2].is_default);
  CHECK(l.cases[2].labels.empty());
  CHECK_FALSE(l.implicit_default.has_value());
  CHECK(l.discriminator->primitive == PrimitiveKind::Int32);

  const auto& c = p.get<UnionDecl>("ByChar");
  CHECK(std::get<CharValue>(c.cases[0].labels[0]).value == U'a');
  REQUIRE(c.implicit_default.has_value());
  CHECK(std::get<CharValue>(*c.implicit_default).value == 1);

  const auto& b = p.get<UnionDecl>("ByBool");
  REQUIRE(b.implicit_default.has_value());
  CHECK(std::get<bool>(*b.implicit_default) == false);

  const auto& t = p.get<UnionDecl>("ByTypedef");
  CHECK(i64(t.cases[1].labels[0]) == 1);
  CHECK(t.cases[1].member.array_dims == std::vector<uint64_t>{2});
  REQUIRE(t.implicit_default.has_value());
  CHECK(i64(*t.implicit_default) == 2);

  const auto& o = p.get<UnionDecl>("ByOctet");
  CHECK(u64(o.cases[0].labels[0]) == 255);
  CHECK(u64(*o.implicit_default) == 0);
}

TEST_CASE("enums number enumerators, honour @value and @bit_bound", "[ast][enum]") {
  const auto p = parse(R"(
module M {
  enum Plain { A, B, C };
  @bit_bound(8) enum Small { @value(3) X, Y, @value(1) Z };
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& plain = p.get<EnumDecl>("M::Plain");
  REQUIRE(plain.enumerators.size() == 3);
  CHECK(plain.enumerators[2]->value == 2);
  CHECK(plain.enumerators[2]->owner == &plain);
  CHECK(plain.bit_bound == 32);
  CHECK(p.find("M::B") == plain.enumerators[1]);  // enumerators live in the enclosing scope
  const auto& small = p.get<EnumDecl>("M::Small");
  CHECK(small.bit_bound == 8);
  CHECK(small.enumerators[0]->value == 3);
  CHECK(small.enumerators[1]->value == 4);
  CHECK(small.enumerators[2]->value == 1);
}

TEST_CASE("bitmasks take positions and bit bounds", "[ast][bitmask]") {
  const auto p = parse(R"(
bitmask Default { F0, F1 };
@bit_bound(16) bitmask Flags { LOW, @position(8) HIGH, NEXT };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& d = p.get<BitmaskDecl>("Default");
  CHECK(d.bit_bound == 32);
  CHECK(d.values[1].position == 1);
  const auto& f = p.get<BitmaskDecl>("Flags");
  CHECK(f.bit_bound == 16);
  REQUIRE(f.values.size() == 3);
  CHECK(f.values[0].position == 0);
  CHECK(f.values[1].position == 8);
  CHECK(f.values[2].position == 9);
  CHECK(f.values[2].name == "NEXT");
}

TEST_CASE("annotations are kept and applied to members and types", "[ast][annotations]") {
  const auto p = parse(R"(
enum Mode { OFF, ON };
@mutable @topic
struct Annotated {
  @key long id;
  @optional double maybe;
  @default(5) @range(min = 0, max = 10) short level;
  @min(-1.5) @max(1.5) float ratio;
  @default(ON) Mode mode;
  @id(100) long explicit_id;
  long after_explicit;
  @default("abc") string<8> name;
  @unit("m") double height;
};
@final @nested struct Part { long p; };
@appendable struct Plain { long x; };
@extensibility(MUTABLE) struct Ext { long x; };
@autoid(HASH) struct Hashed { long alpha; @hashid("other") long beta; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& a = p.get<StructDecl>("Annotated");
  CHECK(a.extensibility == Extensibility::Mutable);
  CHECK(a.is_topic);
  CHECK_FALSE(a.is_nested);
  REQUIRE(a.annotations.size() == 2);
  CHECK(a.annotations[0].name == "mutable");
  CHECK(a.annotations[1].name == "topic");
  CHECK(member(a, "id").is_key);
  CHECK(member(a, "maybe").is_optional);
  CHECK_FALSE(member(a, "id").is_optional);
  const auto& level = member(a, "level");
  CHECK(i64(*level.default_value) == 5);
  CHECK(i64(*level.min) == 0);
  CHECK(i64(*level.max) == 10);
  const auto& range = level.annotations[1];
  CHECK(range.name == "range");
  REQUIRE(range.params.size() == 2);
  CHECK(range.params[0].name == "min");
  CHECK(std::get<long double>(*member(a, "ratio").min) == -1.5L);
  CHECK(std::get<const EnumeratorDecl*>(*member(a, "mode").default_value)->name == "ON");
  CHECK(member(a, "explicit_id").id == 100);
  CHECK(member(a, "after_explicit").id == 101);
  CHECK(std::get<StringValue>(*member(a, "name").default_value).utf8 == "abc");
  REQUIRE(member(a, "height").annotations.size() == 1);
  CHECK(member(a, "height").annotations[0].name == "unit");

  const auto& part = p.get<StructDecl>("Part");
  CHECK(part.extensibility == Extensibility::Final);
  CHECK(part.is_nested);
  CHECK_FALSE(part.is_topic);
  CHECK(p.get<StructDecl>("Plain").extensibility == Extensibility::Appendable);
  CHECK(p.get<StructDecl>("Ext").extensibility == Extensibility::Mutable);

  // XTypes: the id is the first four bytes of MD5(name), little-endian, & 0x0FFFFFFF.
  const auto& h = p.get<StructDecl>("Hashed");
  CHECK(member(h, "alpha").id == 0x0343172Cu);  // MD5("alpha") = 2c 17 43 a3 ...
  CHECK(member(h, "beta").id == 0x02325F79u);   // @hashid("other"): MD5("other")
}

TEST_CASE("key paths flatten nested keys and keyless nested structs", "[ast][keys]") {
  const auto p = parse(R"(
struct Id { @key long site; @key long node; long extra; };
struct Pair { long a; string b; };
struct Keyed {
  @key Id id;
  @key Pair pair;
  @key octet tag[4];
  long payload;
};
struct Derived : Keyed { @key long more; };
struct Unkeyed { long x; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& k = p.get<StructDecl>("Keyed");
  CHECK(k.is_topic);
  REQUIRE(k.key_paths.size() == 5);
  const auto names = [](const std::vector<const MemberDecl*>& path) {
    std::string out;
    for (const auto* m : path) {
      out += (out.empty() ? "" : ".") + m->name;
    }
    return out;
  };
  CHECK(names(k.key_paths[0]) == "id.site");
  CHECK(names(k.key_paths[1]) == "id.node");
  CHECK(names(k.key_paths[2]) == "pair.a");
  CHECK(names(k.key_paths[3]) == "pair.b");
  CHECK(names(k.key_paths[4]) == "tag");
  const auto& d = p.get<StructDecl>("Derived");
  REQUIRE(d.key_paths.size() == 6);
  CHECK(names(d.key_paths[5]) == "more");
  CHECK(names(d.key_paths[0]) == "id.site");
  CHECK_FALSE(p.get<StructDecl>("Unkeyed").is_topic);
  CHECK(p.get<StructDecl>("Unkeyed").key_paths.empty());
}

TEST_CASE("#pragma keylist sets keys like @key", "[ast][keys]") {
  const auto p = parse(R"(
module K {
  struct Inner { long a; long b; };
  struct Sample { long id; Inner in; long data; };
#pragma keylist Sample id in.b
  struct Keyless { long x; };
#pragma keylist Keyless
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& s = p.get<StructDecl>("K::Sample");
  CHECK(member(s, "id").is_key);
  CHECK(member(s, "in").is_key);
  CHECK_FALSE(member(s, "data").is_key);
  REQUIRE(s.key_paths.size() == 2);
  CHECK(s.key_paths[1].size() == 2);
  CHECK(s.key_paths[1][1]->name == "b");
  CHECK(s.is_topic);
  CHECK(p.get<StructDecl>("K::Keyless").is_topic);
  CHECK(p.get<StructDecl>("K::Keyless").key_paths.empty());
}

TEST_CASE("forward declarations resolve to the definition, recursion via sequences",
          "[ast][forward]") {
  const auto p = parse(R"(
struct Node;
typedef sequence<Node> NodeSeq;
struct Node { long value; NodeSeq children; sequence<Node, 2> pair; };
union Tree;
struct Holder { sequence<Tree> trees; };
union Tree switch (long) { case 0: long leaf; case 1: sequence<Tree> sub; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& node = p.get<StructDecl>("Node");
  const auto& seq = p.get<TypedefDecl>("NodeSeq");
  CHECK(seq.type->element->decl == &node);
  CHECK(member(node, "pair").type->element->decl == &node);
  CHECK(member(p.get<StructDecl>("Holder"), "trees").type->element->decl ==
        &p.get<UnionDecl>("Tree"));
  CHECK(p.spec->definitions[0]->kind == DeclKind::ForwardStruct);
  CHECK(static_cast<const ForwardDecl*>(p.spec->definitions[0])->definition == &node);
}

TEST_CASE("anonymous sequence and string member types, several declarators", "[ast]") {
  const auto p = parse(R"(
struct Anon { sequence<string<4>, 3> names, more[2]; string<16> label; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& a = p.get<StructDecl>("Anon");
  REQUIRE(a.members.size() == 3);
  CHECK(a.members[0].type == a.members[1].type);
  CHECK(a.members[1].array_dims == std::vector<uint64_t>{2});
  CHECK(a.members[0].type->element->bound == 4);
  CHECK(a.members[2].type->bound == 16);
}

TEST_CASE("declarations carry positions and escaped identifiers", "[ast][positions]") {
  const auto p = parse("module M {\n  struct S {\n    long   _module;\n  };\n};\n");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& s = p.get<StructDecl>("M::S");
  CHECK(s.loc.line == 2);
  CHECK(s.loc.column == 10);
  CHECK(*s.loc.file == "test.idl");
  CHECK(s.members[0].name == "module");
  CHECK(s.members[0].loc.str() == "test.idl:3:12");
  CHECK(s.from_main_file);
}

TEST_CASE("the shipped IDL files parse and check cleanly", "[ast][shipped]") {
  for (const char* name : {"avionics.idl", "ShapeType.idl", "Sequence.idl"}) {
    Diagnostics diags;
    const auto spec = parse_file(std::string(IDLC_IDL_DIR) + "/" + name, {}, diags);
    std::ostringstream out;
    diags.print(out);
    INFO(name << ": " << out.str());
    CHECK(spec != nullptr);
    CHECK(diags.all().empty());
  }
  Diagnostics diags;
  const auto spec = parse_file(std::string(IDLC_IDL_DIR) + "/avionics.idl", {}, diags);
  REQUIRE(spec);
  const StructDecl* nav = nullptr;
  const UnionDecl* fix = nullptr;
  for (const auto& d : spec->storage) {
    if (d->scoped_name() == "Avionics::Navigation") {
      nav = static_cast<const StructDecl*>(d.get());
    }
    if (d->scoped_name() == "Avionics::NavFix") {
      fix = static_cast<const UnionDecl*>(d.get());
    }
  }
  REQUIRE(nav != nullptr);
  REQUIRE(fix != nullptr);
  CHECK(nav->key_paths.size() == 2);
  CHECK(nav->is_topic);
  CHECK(fix->cases[0].labels.size() == 2);
  CHECK_FALSE(fix->implicit_default.has_value());
}

TEST_CASE("every kind of declaration records where its name is", "[ast][positions]") {
  const auto p = parse(
      "module M {\n"
      "  enum E { A,\n"
      "           B };\n"
      "  typedef long T, U[2];\n"
      "  const long C = 1;\n"
      "  union V switch (E) {\n"
      "    case A: @id(3) long a;\n"
      "  };\n"
      "  @bit_bound(8) bitmask F { F0 };\n"
      "};\n");
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(p.spec->definitions[0]->loc.str() == "test.idl:1:8");
  CHECK(p.get<EnumDecl>("M::E").loc.str() == "test.idl:2:8");
  CHECK(p.get<EnumeratorDecl>("M::B").loc.str() == "test.idl:3:12");
  CHECK(p.get<TypedefDecl>("M::T").loc.str() == "test.idl:4:16");
  CHECK(p.get<TypedefDecl>("M::U").loc.str() == "test.idl:4:19");
  CHECK(p.get<ConstDecl>("M::C").loc.str() == "test.idl:5:14");
  const auto& v = p.get<UnionDecl>("M::V");
  CHECK(v.loc.str() == "test.idl:6:9");
  CHECK(v.cases[0].member.loc.str() == "test.idl:7:25");
  CHECK(v.cases[0].member.annotations[0].loc.str() == "test.idl:7:13");
  const auto& f = p.get<BitmaskDecl>("M::F");
  CHECK(f.loc.str() == "test.idl:9:25");
  CHECK(f.annotations[0].loc.str() == "test.idl:9:3");
  CHECK(f.values[0].loc.str() == "test.idl:9:29");
}

TEST_CASE("maps keep their key, value and bound", "[ast][map]") {
  const auto p = parse(R"(
enum Color { RED, GREEN };
typedef map<string, long> Dict;
struct Holder {
  map<long, string<8>> a;
  map<Color, sequence<double>, 5> b;
  Dict c;
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& s = p.get<StructDecl>("Holder");
  const Type& a = *member(s, "a").type;
  REQUIRE(a.kind == Type::Kind::Map);
  CHECK(a.bound == 0);
  CHECK(a.key->primitive == PrimitiveKind::Int32);
  CHECK(a.element->kind == Type::Kind::String);
  CHECK(a.element->bound == 8);
  const Type& b = *member(s, "b").type;
  REQUIRE(b.kind == Type::Kind::Map);
  CHECK(b.bound == 5);
  CHECK(b.key->decl == &p.get<EnumDecl>("Color"));
  CHECK(b.element->kind == Type::Kind::Sequence);
  CHECK(resolve_typedefs(*member(s, "c").type).kind == Type::Kind::Map);
}

TEST_CASE("bitsets pack their bitfields from bit 0, base bitfields first", "[ast][bitset]") {
  const auto p = parse(R"(
bitset Base { bitfield<3> a; bitfield<2>; bitfield<1, boolean> on; };
bitset Derived : Base { bitfield<10, short> s, t; bitfield<33> big; };
struct Holder { Derived d; };
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  const auto& base = p.get<BitsetDecl>("Base");
  REQUIRE(base.fields.size() == 3);
  CHECK(base.total_bits == 6);
  CHECK(base.fields[0].type == PrimitiveKind::UInt8);
  CHECK(base.fields[1].name.empty());  // padding
  CHECK(base.fields[1].offset == 3);
  CHECK(base.fields[2].offset == 5);
  CHECK(base.fields[2].type == PrimitiveKind::Boolean);
  const auto& d = p.get<BitsetDecl>("Derived");
  CHECK(d.base == &base);
  REQUIRE(d.fields.size() == 3);
  CHECK(d.fields[0].offset == 6);
  CHECK(d.fields[0].type == PrimitiveKind::Int16);
  CHECK(d.fields[1].offset == 16);
  CHECK(d.fields[2].offset == 26);
  CHECK(d.fields[2].type == PrimitiveKind::UInt64);
  CHECK(d.total_bits == 59);
}

TEST_CASE("annotation declarations are recorded and their applications checked",
          "[ast][annotations]") {
  const auto p = parse(R"(
@annotation Units { string name default "m"; long scale default 1; };
@annotation Marker { boolean value; };
@annotation key { boolean value default TRUE; };
struct S {
  @Units(name = "s") double t;
  @Marker(TRUE) @key long id;
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK_FALSE(p.diags.has_errors());
  CHECK(p.diags.all().empty());
  const auto& units = p.get<AnnotationDecl>("Units");
  REQUIRE(units.members.size() == 2);
  CHECK(units.members[1].name == "scale");
  CHECK(i64(*units.members[1].default_value) == 1);
  const auto& t = member(p.get<StructDecl>("S"), "t");
  REQUIRE(t.annotations.size() == 1);
  CHECK(t.annotations[0].name == "Units");
  REQUIRE(t.annotations[0].params.size() == 2);  // the default filled in
  CHECK(std::get<StringValue>(t.annotations[0].params[0].value).utf8 == "s");
  CHECK(i64(t.annotations[0].params[1].value) == 1);
  CHECK(member(p.get<StructDecl>("S"), "id").is_key);  // the built-in @key keeps its meaning
}

TEST_CASE("extensibility on enums and bitmasks, @external, @optional(FALSE), bitmask defaults",
          "[ast][annotations]") {
  const auto p = parse(R"(
@appendable enum A { X, Y };
@final enum F { Z };
@extensibility(APPENDABLE) bitmask B { P, Q, R };
struct U { long a; };
union C switch (short) { case 1: long n; case 2: string s; };
struct S {
  @external U e;
  @optional(TRUE) long o;
  @optional(FALSE) long n;
  @default(5) B bits;
  @key sequence<long> ids;
  @key C choice;
  @data_representation(XCDR1) long plain;
  @try_construct(DISCARD) long tried;
};
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(p.get<EnumDecl>("A").extensibility == Extensibility::Appendable);
  CHECK(p.get<EnumDecl>("F").extensibility == Extensibility::Final);
  const auto& s = p.get<StructDecl>("S");
  CHECK(member(s, "e").is_external);
  CHECK(member(s, "o").is_optional);
  CHECK_FALSE(member(s, "n").is_optional);
  CHECK(u64(*member(s, "bits").default_value) == 5);
  CHECK(s.key_paths.size() == 2);
  CHECK(s.is_topic);
}

// The member tables idlc generates for content filters (<spindle/reflect.hpp>): every
// member in declaration order, base members first, with the right kind and a getter that
// reads a filled sample; unset optionals read as absent.
#include <catch2/catch.hpp>

#include <spindle/reflect.hpp>

#include <string>
#include <vector>

#include "all_constructs.hpp"
#include "gaps.hpp"

using spindle::reflect::Kind;
using spindle::reflect::Reflect;

namespace {

Gaps::Reflected filled() {
  Gaps::Reflected r;
  r.id(-7);
  r.b(true);
  r.c('x');
  r.wc(L'W');
  r.o(200);
  r.s(-3);
  r.ull(1ULL << 40);
  r.f(1.5F);
  r.ld(2.25L);
  r.str("hello");
  r.bstr("abcd");
  r.ws(L"wide");
  r.level(Gaps::Level::HIGH);
  r.inner(Gaps::Inner(42, "in"));
  r.seq({1, 2});
  return r;
}

}  // namespace

TEST_CASE("every generated struct has a member table", "[reflect]") {
  STATIC_REQUIRE(spindle::reflect::Reflected<Gaps::Reflected>);
  STATIC_REQUIRE(spindle::reflect::Reflected<Common::Point>);  // from an included file
  STATIC_REQUIRE(spindle::reflect::Reflected<Test::Primitives>);
  STATIC_REQUIRE(spindle::reflect::Reflected<Test::TreeNode>);
  CHECK(Reflect<Test::Keywords>::info().members[0].name == "class");  // the IDL name, unescaped
}

TEST_CASE("a member table lists members in order with their kinds", "[reflect]") {
  const auto& info = Reflect<Gaps::Reflected>::info();
  CHECK(info.name == "Gaps::Reflected");
  const std::vector<std::pair<std::string, Kind>> expected = {
      {"id", Kind::signed_int},  // inherited from Gaps::Base, first
      {"b", Kind::boolean},          {"c", Kind::character},
      {"wc", Kind::character},       {"o", Kind::unsigned_int},
      {"s", Kind::signed_int},       {"ull", Kind::unsigned_int},
      {"f", Kind::floating},         {"ld", Kind::floating},
      {"str", Kind::string},         {"bstr", Kind::string},
      {"ws", Kind::other},           {"level", Kind::enumeration},
      {"inner", Kind::structure},    {"maybe", Kind::structure},
      {"maybe_n", Kind::signed_int}, {"maybe_level", Kind::enumeration},
      {"seq", Kind::other},          {"arr", Kind::other},
      {"dict", Kind::other},         {"ch", Kind::other},
      {"fl", Kind::other},           {"bits", Kind::other},
  };
  REQUIRE(info.members.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& m = info.members[i];
    CAPTURE(i, m.name);
    CHECK(m.name == expected[i].first);
    CHECK(m.kind == expected[i].second);
    const bool readable = m.kind != Kind::other && m.kind != Kind::structure;
    CHECK((m.get != nullptr) == readable);
    CHECK((m.nested != nullptr) == (m.kind == Kind::structure));
    CHECK((m.object != nullptr) == (m.kind == Kind::structure));
  }
  CHECK(info.find("level") == &info.members[12]);
  CHECK(info.find("nope") == nullptr);
}

TEST_CASE("getters read a filled sample", "[reflect]") {
  const Gaps::Reflected r = filled();
  const auto& info = Reflect<Gaps::Reflected>::info();
  const auto get = [&](const char* name) {
    const auto* m = info.find(name);
    REQUIRE(m != nullptr);
    REQUIRE(m->get != nullptr);
    return m->get(&r);
  };
  CHECK(get("id").i == -7);
  CHECK(get("b").i == 1);
  CHECK(get("c").u == 'x');
  CHECK(get("wc").u == L'W');
  CHECK(get("o").u == 200);
  CHECK(get("s").i == -3);
  CHECK(get("ull").u == (1ULL << 40));
  CHECK(get("f").f == 1.5);
  CHECK(get("ld").f == 2.25);
  const auto str = get("str");
  CHECK(str.kind == Kind::string);
  CHECK(str.s == "hello");
  CHECK(str.s.data() == r.str().data());  // a view into the sample, no copy
  CHECK(get("bstr").s == "abcd");
  const auto level = get("level");
  CHECK(level.kind == Kind::enumeration);
  CHECK(level.i == 2);
  const auto& enumerators = info.find("level")->enumerators;
  REQUIRE(enumerators.size() == 3);
  CHECK(enumerators[0].name == "LOW");
  CHECK(enumerators[2].name == "HIGH");
  CHECK(enumerators[2].value == 2);
}

TEST_CASE("unset optionals read as absent, set ones as their value", "[reflect]") {
  Gaps::Reflected r = filled();
  const auto& info = Reflect<Gaps::Reflected>::info();
  CHECK(info.find("maybe_n")->get(&r).kind == Kind::absent);
  CHECK(info.find("maybe_level")->get(&r).kind == Kind::absent);
  CHECK(info.find("maybe")->object(&r) == nullptr);
  r.maybe_n(5);
  r.maybe_level(Gaps::Level::MID);
  r.maybe(Gaps::Inner(1, "set"));
  const auto n = info.find("maybe_n")->get(&r);
  CHECK(n.kind == Kind::signed_int);
  CHECK(n.i == 5);
  CHECK(info.find("maybe_level")->get(&r).i == 1);
  CHECK(info.find("maybe")->object(&r) == &*r.maybe());
}

TEST_CASE("nested structs are reached through their own table", "[reflect]") {
  const Gaps::Reflected r = filled();
  const auto& m = *Reflect<Gaps::Reflected>::info().find("inner");
  const auto& nested = m.nested();
  CHECK(nested.name == "Gaps::Inner");
  CHECK(&nested == &Reflect<Gaps::Inner>::info());
  const void* inner = m.object(&r);
  CHECK(inner == &r.inner());
  CHECK(nested.find("v")->get(inner).i == 42);
  CHECK(nested.find("name")->get(inner).s == "in");
}

#include "samples.hpp"

namespace samples {

Test::Primitives primitives() {
  Test::Primitives p;
  p.b(true);
  p.c('q');
  p.wc(L'\u00e9');
  p.o(0xAB);
  p.i8(-100);
  p.u8(250);
  p.s(-12345);
  p.us(54321);
  p.l(-1234567890);
  p.ul(3234567890U);
  p.ll(-1234567890123456789LL);
  p.ull(12345678901234567890ULL);
  p.i16(-2);
  p.u16(65000);
  p.i32(-3);
  p.u32(4000000000U);
  p.i64(-4);
  p.u64(5);
  p.f(1.5F);
  p.d(-2.25);
  p.ld(3.125L);
  return p;
}

Test::Strings strings() {
  Test::Strings s;
  s.unbounded("an unbounded string, longer than the bounded one");
  s.bounded("eight ch");
  s.wunbounded(L"wide \u263a text");
  s.wbounded(L"four");
  s.name("sixteen-chars-ok");
  return s;
}

Test::Collections collections() {
  Test::Collections c;
  c.longs({1, -2, 3, -4, 5, 6, 7});
  c.few_longs({9, 8, 7, 6, 5});
  c.words({"alpha", "beta", ""});
  c.points({Common::Point(1, 2), Common::Point(-3, -4)});
  c.flags({true, false, true});
  c.nested({{1, 2, 3, 4}, {}, {-5}});
  c.matrix({{{1, 2, 3}, {4, 5, 6}}});
  c.grid({{{0.5, 1.5}, {2.5, 3.5}}});
  c.labels({"left", "right"});
  c.corners({Common::Point(0, 0), Common::Point(10, 20)});
  c.shapes({Test::Shape::TRIANGLE, Test::Shape::CIRCLE});
  return c;
}

Test::Derived derived() {
  Test::Derived d;
  d.id(77);
  d.label("base label");
  d.color(Common::Color::BLUE);
  d.perms(Test::Permissions::READ | Test::Permissions::ADMIN);
  d.wide(Test::Wide::HIGH);
  d.by_long().text("ten", 10);
  d.by_long(Test::ByLong());
  d.by_long().small(5, 2);
  d.by_char().b({1, 2}, 'b');
  d.by_bool().no("nope", false);
  d.by_enum().side(2.5);
  d.by_other().where(Common::Point(7, 8));
  return d;
}

Test::Annotated annotated(bool with_optionals) {
  Test::Annotated a;
  a.key1(0xDEADBEEF);
  a.key2("a key of 20 chars max");
  a.key2("key-two");
  if (with_optionals) {
    a.maybe(-17);
    a.maybe_text("present");
  }
  a.answer(43);
  a.bounded(-10);
  a.ratio(0.75);
  return a;
}

Test::Extensible extensible(bool with_optional) {
  Test::Extensible e;
  e.a(-99);
  e.b("mutable");
  if (with_optional) e.c(6.5);
  e.p(Common::Point(3, 4));
  return e;
}

Test::Outer outer() {
  Test::Outer o;
  o.inner(Test::Inner(-7, 1000));
  o.where(Common::Point(11, 12));
  o.payload(99);
  return o;
}

Test::Legacy legacy() {
  return Test::Legacy(1, 2, "three");
}

Test::TreeNode tree() {
  Test::TreeNode leaf1(2, {});
  Test::TreeNode leaf2(3, {});
  Test::TreeNode mid(4, {leaf1});
  return Test::TreeNode(1, {mid, leaf2});
}

Test::Keywords keywords() {
  Test::Keywords k;
  k._cxx_class(1);
  k._cxx_new(2);
  return k;
}

Test::Reopened reopened() {
  Test::Reopened r;
  r.shape(Test::Shape::SQUARE);
  r.p(primitives());
  return r;
}

}  // namespace samples

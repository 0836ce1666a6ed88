// spindle::filter::Expression: the annex B filter and query language over reflect tables
// (filter_types.hpp): every operator and type, BETWEEN, LIKE, precedence, parameters,
// numeric edge cases, absent optionals, ORDER BY, and each error with its column.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "filter/expression.hpp"
#include "filter_types.hpp"

using filter_test::Color;
using filter_test::Sample;
using filter_test::Shape;
using spindle::filter::Expression;
using spindle::filter::FilterError;
using spindle::filter::Grammar;

namespace {

using Params = std::vector<std::string>;

Expression compile(std::string_view text, const Params& params = {},
                   Grammar grammar = Grammar::filter) {
  return Expression::compile(text, filter_test::sample_info(), params, grammar);
}

bool match(std::string_view text, const Sample& s, const Params& params = {}) {
  return compile(text, params).matches(&s);
}

// The error compile() throws; fails the test when it throws nothing.
FilterError error_of(std::string_view text, const Params& params = {},
                     Grammar grammar = Grammar::filter) {
  try {
    (void)compile(text, params, grammar);
  } catch (const FilterError& e) {
    return e;
  }
  FAIL("compiled without error: " << text);
  throw std::logic_error("unreachable");
}

// Checks the column and that the reason contains `words`.
void check_error(std::string_view text, std::size_t column, std::string_view words,
                 const Params& params = {}, Grammar grammar = Grammar::filter) {
  const FilterError e = error_of(text, params, grammar);
  INFO(e.what());
  CHECK(e.column() == column);
  CHECK(e.reason().find(words) != std::string::npos);
}

Sample sample() {
  Sample s;
  s.flag = true;
  s.letter = 'q';
  s.i8 = -5;
  s.i16 = 300;
  s.i32 = 42;
  s.i64 = -7;
  s.u8 = 200;
  s.u16 = 65535;
  s.u32 = 4000000000U;
  s.u64 = 10;
  s.f32 = 0.25F;
  s.f64 = 2.5;
  s.name = "hello world, a string longer than the small-string buffer";
  s.color = Color::green;
  s.color2 = Color::blue;
  s.shape = Shape::square;
  s.inner.depth = 3;
  s.inner.label = "hello";
  s.inner.leaf.z = -1;
  return s;
}

}  // namespace

TEST_CASE("every relational operator on a signed member", "[filter]") {
  Sample s = sample();  // i32 = 42
  struct Row {
    const char* text;
    bool result;
  };
  for (const Row& r : {Row{"i32 = 42", true}, Row{"i32 = 41", false}, Row{"i32 <> 42", false},
                       Row{"i32 <> 41", true}, Row{"i32 != 41", true}, Row{"i32 != 42", false},
                       Row{"i32 < 43", true}, Row{"i32 < 42", false}, Row{"i32 <= 42", true},
                       Row{"i32 <= 41", false}, Row{"i32 > 41", true}, Row{"i32 > 42", false},
                       Row{"i32 >= 42", true}, Row{"i32 >= 43", false}, Row{"i32=42", true},
                       Row{"i32>=42", true}, Row{"i32<>42", false}}) {
    INFO(r.text);
    CHECK(match(r.text, s) == r.result);
  }
}

TEST_CASE("a literal or parameter on the left compares the same way", "[filter]") {
  Sample s = sample();
  CHECK(match("43 > i32", s));
  CHECK_FALSE(match("42 > i32", s));
  CHECK(match("42 >= i32", s));
  CHECK(match("-100 < i8", s));
  CHECK(match("%0 = name", s, {s.name}));
  CHECK(match("'hello' = inner.label", s));
  CHECK(match("green = color", s));
}

TEST_CASE("each integer kind, float and double", "[filter]") {
  Sample s = sample();
  CHECK(match("i8 = -5", s));
  CHECK(match("i16 = 300 AND i16 > 299", s));
  CHECK(match("i64 = -7 AND i64 < 0", s));
  CHECK(match("u8 = 200", s));
  CHECK(match("u16 = 65535 AND u16 = 0xFFFF AND u16 = 0xffff", s));
  CHECK(match("u32 = 4000000000", s));
  CHECK(match("u64 = 10 AND u64 = +10 AND u64 = 0xa", s));
  CHECK(match("f32 = 0.25 AND f32 = 25e-2 AND f32 = 2.5E-1", s));
  CHECK(match("f64 = 2.5 AND f64 > 2 AND f64 < 3 AND f64 >= 2.5", s));
  CHECK(match("f64 = 2.5e0 AND f64 <> 2.", s));
  CHECK(match("f64 > -1e300", s));
  CHECK(match("i32 < 42.5 AND i32 > 41.5 AND i32 = 42.0", s));
  CHECK_FALSE(match("i32 = 42.5", s));
}

TEST_CASE("numeric comparisons are exact across signed, unsigned and floating", "[filter]") {
  Sample s = sample();
  s.u64 = std::numeric_limits<std::uint64_t>::max();
  s.i64 = std::numeric_limits<std::int64_t>::min();
  CHECK(match("u64 = 18446744073709551615", s));
  CHECK(match("u64 = 0xFFFFFFFFFFFFFFFF", s));
  CHECK(match("u64 > -1", s));
  CHECK_FALSE(match("u64 = -1", s));
  CHECK_FALSE(match("u64 < -1", s));
  CHECK(match("i64 = -9223372036854775808", s));
  CHECK(match("i64 < 18446744073709551615", s));
  CHECK(match("i64 < u64", s));  // member with member: no wraparound
  CHECK(match("u64 > i64", s));
  // 2^64 and 2^63 as doubles: above every uint64 and int64.
  CHECK(match("u64 < 18446744073709551616.0", s));
  s.i64 = std::numeric_limits<std::int64_t>::max();
  CHECK(match("i64 < 9223372036854775808.0", s));
  CHECK_FALSE(match("i64 = 9223372036854775808.0", s));
  CHECK(match("i64 > 9223372036854774784.0", s));  // the double just below 2^63
  s.i64 = -1;
  s.u64 = 0;
  CHECK(match("i64 < u64 AND u64 > i64 AND i64 <> u64", s));
  s.u64 = 3;
  CHECK(match("u64 > 2.5 AND u64 < 3.5 AND u64 = 3.0 AND u64 > -0.5", s));
  CHECK(match("f64 < u64 AND u64 > f64", s));  // 2.5 < 3
  CHECK(match("i64 < f64 AND f64 > i64", s));
  CHECK(match("i32 > i8 AND u8 > i8 AND u16 > u8", s));
}

TEST_CASE("NaN is unordered: only <> holds", "[filter]") {
  Sample s = sample();
  s.f64 = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(match("f64 = 0", s));
  CHECK_FALSE(match("f64 < 0 OR f64 > 0 OR f64 <= 0 OR f64 >= 0", s));
  CHECK(match("f64 <> 0", s));
  CHECK(match("f64 <> f64", s));
  CHECK_FALSE(match("f64 BETWEEN 0 AND 1", s));
  CHECK(match("f64 NOT BETWEEN 0 AND 1", s));
  CHECK_FALSE(match("i32 < f64 OR u64 < f64", s));
}

TEST_CASE("strings, chars and booleans", "[filter]") {
  Sample s = sample();
  CHECK(match("inner.label = 'hello'", s));
  CHECK(match("inner.label < 'help' AND inner.label > 'hell'", s));
  CHECK(match("inner.label <> 'Hello'", s));
  CHECK(match("inner.label = `hello'", s));  // a STRING may open with a left quote
  CHECK(match("name = 'hello world, a string longer than the small-string buffer'", s));
  CHECK(match("name > inner.label", s));
  CHECK(match("letter = 'q' AND letter > 'a' AND letter <= 'q'", s));
  CHECK(match("flag = TRUE AND flag <> false AND flag = True", s));
  s.inner.label = "\xff";
  CHECK(match("inner.label > 'z'", s));  // bytes compare unsigned
  s.inner.label = "";
  CHECK(match("inner.label = ''", s));
}

TEST_CASE("enums compare with enumerators, by value", "[filter]") {
  Sample s = sample();  // color green (1), color2 blue (7)
  CHECK(match("color = green", s));
  CHECK(match("color = 'green'", s));
  CHECK(match("color <> red AND color > red AND color < blue", s));
  CHECK(match("color < color2", s));
  CHECK(match("color BETWEEN red AND blue", s));
  CHECK(match("color = %0", s, {"green"}));
  CHECK(match("color = %0", s, {"'green'"}));
  CHECK(match("shape = square", s));
  CHECK_FALSE(match("color = blue", s));
}

TEST_CASE("nested members through dotted paths", "[filter]") {
  Sample s = sample();
  CHECK(match("inner.depth = 3", s));
  CHECK(match("inner.leaf.z = -1", s));
  CHECK(match("inner.leaf.z < inner.depth", s));
}

TEST_CASE("an absent optional makes its predicate false", "[filter]") {
  Sample s = sample();
  CHECK_FALSE(match("maybe = 3", s));
  CHECK_FALSE(match("maybe <> 3", s));
  CHECK_FALSE(match("maybe BETWEEN 0 AND 10", s));
  CHECK_FALSE(match("maybe NOT BETWEEN 0 AND 10", s));
  CHECK(match("NOT maybe = 3", s));  // NOT of a false predicate
  CHECK(match("maybe = 3 OR i32 = 42", s));
  CHECK_FALSE(match("extra.depth = 0", s));  // absent struct on the path
  CHECK_FALSE(match("extra.leaf.z = 0", s));
  CHECK_FALSE(match("inner.weight >= 0", s));  // absent leaf in a present struct
  CHECK_FALSE(match("i32 = maybe", s));
  s.maybe = 3;
  s.extra.emplace();
  s.extra->depth = 9;
  s.inner.weight = 1.5;
  CHECK(match("maybe = 3", s));
  CHECK(match("maybe BETWEEN 0 AND 10", s));
  CHECK(match("extra.depth = 9 AND extra.leaf.z = 0", s));
  CHECK(match("inner.weight = 1.5", s));
}

TEST_CASE("BETWEEN and NOT BETWEEN include both bounds", "[filter]") {
  Sample s = sample();  // i32 = 42
  CHECK(match("i32 BETWEEN 42 AND 50", s));
  CHECK(match("i32 BETWEEN 0 AND 42", s));
  CHECK(match("i32 BETWEEN 42 AND 42", s));
  CHECK_FALSE(match("i32 BETWEEN 43 AND 50", s));
  CHECK_FALSE(match("i32 BETWEEN 50 AND 0", s));
  CHECK_FALSE(match("i32 NOT BETWEEN 42 AND 50", s));
  CHECK(match("i32 NOT BETWEEN 43 AND 50", s));
  CHECK(match("i32 not between 0 and 41", s));
  CHECK(match("i32 BETWEEN %0 AND %1", s, {"40", "45"}));
  CHECK(match("f64 BETWEEN 2.5 AND 2.5", s));
  CHECK(match("inner.label BETWEEN 'a' AND 'z'", s));
  // The AND inside BETWEEN binds to it; the next AND joins conditions.
  CHECK(match("i32 BETWEEN 0 AND 50 AND i8 = -5", s));
  CHECK_FALSE(match("i32 BETWEEN 0 AND 50 AND i8 = 5", s));
  CHECK(match("i32 BETWEEN i8 AND i16", s));
}

TEST_CASE("LIKE: % any run, _ one character", "[filter]") {
  Sample s = sample();
  auto like = [&](const std::string& value, const std::string& pattern) {
    s.inner.label = value;
    return match("inner.label LIKE '" + pattern + "'", s);
  };
  CHECK(like("", ""));
  CHECK_FALSE(like("a", ""));
  CHECK(like("", "%"));
  CHECK(like("anything", "%"));
  CHECK(like("", "%%"));
  CHECK_FALSE(like("", "_"));
  CHECK(like("x", "_"));
  CHECK_FALSE(like("xy", "_"));
  CHECK(like("abc", "abc"));
  CHECK_FALSE(like("abc", "ab"));
  CHECK_FALSE(like("abc", "ABC"));  // case-sensitive
  CHECK(like("abc", "ab%"));
  CHECK(like("ab", "ab%"));
  CHECK(like("abc", "%bc"));
  CHECK(like("abc", "%b%"));
  CHECK(like("abc", "a_c"));
  CHECK_FALSE(like("abbc", "a_c"));
  CHECK(like("abcde", "a%c%e"));
  CHECK(like("aaab", "%ab"));  // needs backtracking
  CHECK(like("mississippi", "m%iss%ppi"));
  CHECK_FALSE(like("mississippi", "m%iss%ppx"));
  CHECK(like("a%b", "a%b"));
  CHECK(like("a*?", "a*?"));  // * and ? are ordinary characters
  CHECK_FALSE(like("abc", "a*"));
  s.inner.label = "hello";
  CHECK(match("inner.label LIKE %0", s, {"he%"}));
  CHECK(match("inner.label LIKE %0", s, {"'h_llo'"}));
  CHECK(match("name LIKE inner.label", s) == false);
  s.name = "h%";
  CHECK(match("inner.label LIKE name", s));  // a member as the pattern
  CHECK(match("'hello' LIKE name", s));
}

TEST_CASE("precedence: NOT binds tighter than AND, AND than OR", "[filter]") {
  Sample s = sample();  // i32 = 42, i8 = -5, flag = true
  // OR of (i32 = 0) and (i8 = -5 AND flag = TRUE)
  CHECK(match("i32 = 0 OR i8 = -5 AND flag = TRUE", s));
  CHECK_FALSE(match("(i32 = 0 OR i8 = -5) AND flag = FALSE", s));
  CHECK(match("i32 = 0 OR i8 = -5 AND flag = TRUE", s));
  CHECK(match("i8 = -5 AND flag = FALSE OR i32 = 42", s));
  CHECK_FALSE(match("i8 = -5 AND (flag = FALSE OR i32 = 0)", s));
  // NOT applies to the first predicate only.
  CHECK(match("NOT i32 = 0 AND i8 = -5", s));
  CHECK_FALSE(match("NOT (i32 = 42 AND i8 = -5)", s));
  CHECK(match("NOT i32 = 42 OR i8 = -5", s));
  CHECK_FALSE(match("NOT (i32 = 42 OR i8 = 0)", s));
  CHECK(match("NOT NOT i32 = 42", s));
}

TEST_CASE("keywords are case-insensitive, member names are not", "[filter]") {
  Sample s = sample();
  CHECK(match("not i32 = 0 and i8 = -5 oR i32 = 0", s));
  CHECK(match("i32 BeTwEeN 0 aNd 50", s));
  CHECK(match("inner.label like 'h%'", s));
  CHECK(match("flag = true", s));
  check_error("I32 = 1", 1, "no member 'I32' in filter_test::Sample");
}

TEST_CASE("parameters are parsed as the member they meet", "[filter]") {
  Sample s = sample();
  CHECK(match("i32 = %0", s, {"42"}));
  CHECK(match("i32 = %0", s, {" 42 "}));
  CHECK(match("i32 = %0", s, {"0x2a"}));
  CHECK(match("i32 < %0", s, {"42.5"}));
  CHECK(match("u64 > %0", s, {"-1"}));
  CHECK(match("inner.label = %0", s, {"hello"}));
  CHECK(match("inner.label = %0", s, {"'hello'"}));
  CHECK(match("letter = %0", s, {"q"}));
  CHECK(match("letter = %0", s, {"'q'"}));
  CHECK(match("flag = %0", s, {"TRUE"}));
  CHECK(match("flag = %0", s, {"true"}));
  // One parameter, two uses of different types; parameters not used are fine.
  CHECK(match("i32 = %1 AND f64 < %1", s, {"unused", "42"}));
  CHECK(match("i8 = %10", s, {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-5"}));
}

TEST_CASE("set_parameters rebinds, and leaves the expression alone when one does not fit",
          "[filter]") {
  Sample s = sample();
  Expression e = compile("i32 BETWEEN %0 AND %1 AND inner.label LIKE %2", {"0", "50", "he%"});
  CHECK(e.matches(&s));
  CHECK(e.expression() == "i32 BETWEEN %0 AND %1 AND inner.label LIKE %2");
  REQUIRE(e.parameters().size() == 3);
  CHECK(e.parameters()[2] == "he%");

  const Expression before = e;  // copies are independent
  const Params narrow{"43", "50", "he%"};
  e.set_parameters(narrow);
  CHECK_FALSE(e.matches(&s));
  CHECK(before.matches(&s));
  CHECK(e.parameters()[0] == "43");

  const Params bad{"0", "x50", "he%"};
  try {
    e.set_parameters(bad);
    FAIL("set_parameters took a parameter that is not a number");
  } catch (const FilterError& err) {
    CHECK(err.column() == 20);
    CHECK(err.reason() ==
          "parameter %1 ('x50') is not a number, as member 'i32' "
          "(signed integer) needs");
  }
  CHECK(e.parameters()[0] == "43");  // unchanged
  CHECK_FALSE(e.matches(&s));

  const Params few{"0", "50"};
  CHECK_THROWS_AS(e.set_parameters(few), FilterError);
  CHECK(e.parameters().size() == 3);

  Expression moved = std::move(e);  // string constants survive a move
  moved.set_parameters(Params{"0", "50", "hello"});
  CHECK(moved.matches(&s));
}

TEST_CASE("the error names the column: the example of the brief", "[filter][error]") {
  const FilterError e = error_of("x >> 3");
  CHECK(std::string(e.what()) ==
        "filter \"x >> 3\", column 4: unexpected '>', expected a member, a literal or a "
        "parameter");
  CHECK(e.column() == 4);
}

TEST_CASE("errors: syntax", "[filter][error]") {
  check_error("", 1, "empty expression");
  check_error("   ", 1, "empty expression");
  check_error("name = 'abc", 8, "unterminated string");
  check_error("name = 'ab\nc'", 8, "unterminated string");
  check_error("name = \"abc\"", 8, "strings take single quotes");
  check_error("i32 = 1 AND", 12, "unexpected end of expression");
  check_error("i32 = 1 OR OR i32 = 2", 12, "unexpected 'OR', expected a condition");
  check_error("(i32 = 1", 9, "expected ')' to close the '(' at column 1");
  check_error("i32 = 1)", 8, "unexpected ')', no '(' to close");
  check_error("i32 = 1 i32 = 2", 9, "unexpected 'i32', expected AND, OR or the end");
  check_error("i32", 4, "unexpected end of expression, expected a comparison operator");
  check_error("i32 NOT 3", 9, "expected BETWEEN after NOT");
  check_error("i32 BETWEEN 1 OR 2", 15, "expected AND between the BETWEEN bounds");
  check_error("i32 ! 3", 5, "unexpected '!'");
  check_error("i32 = #", 7, "unexpected '#'");
  check_error("i32 = %", 7, "'%' must be followed by a parameter number");
  check_error("i32 = %100", 7, "parameters go from %0 to %99");
  check_error("i32 = 0x", 7, "malformed number '0x'");
  check_error("i32 = 12ab", 7, "malformed number '12ab'");
  check_error("i32 = 1.2.3", 7, "malformed number '1.2.3'");
  check_error("i32 = 1e", 7, "malformed number '1e'");
  check_error("i32 = 99999999999999999999", 7, "out of range");
  check_error("i32 = -9223372036854775809", 7, "out of range");
  check_error("f64 = 1e999", 7, "out of range");
  check_error("inner. = 3", 7, "expected a member name after '.'");
  check_error("1 = 2", 1, "compares no member");
  check_error("%0 = %1", 1, "compares no member", {"1", "2"});
  check_error("i32 = 1 ORDER BY i32", 9, "ORDER BY belongs to a query");
  check_error(std::string(101, '(') + "i32 = 1" + std::string(101, ')'), 101, "nested too deeply");
  std::string nots;
  for (int i = 0; i < 101; ++i)
    nots += "NOT ";
  check_error(nots + "i32 = 1", 401, "nested too deeply");
}

TEST_CASE("errors: members and types", "[filter][error]") {
  check_error("nosuch = 1", 1, "no member 'nosuch' in filter_test::Sample");
  check_error("i32 = 1 AND inner.nosuch = 1", 19,
              "no member 'nosuch' in filter_test::Inner (in 'inner.nosuch')");
  check_error("seq = 1", 1,
              "member 'seq' is a sequence, array, map or union, which a filter "
              "cannot read");
  check_error("inner = 1", 1, "member 'inner' is a struct: compare one of its members");
  check_error("i32.x = 1", 1, "member 'i32' is a signed integer, not a struct");
  check_error("name = 3", 8,
              "type mismatch: member 'name' (string) cannot be compared with "
              "the integer 3");
  check_error("i32 = 'abc'", 7,
              "type mismatch: member 'i32' (signed integer) cannot be "
              "compared with the string 'abc'");
  check_error("flag = 1", 8, "member 'flag' (boolean) cannot be compared with the integer 1");
  check_error("i32 = TRUE", 7, "cannot be compared with the boolean TRUE");
  check_error("f64 = 'x'", 7, "type mismatch");
  check_error("name = i32", 8,
              "type mismatch: member 'name' (string) cannot be compared with "
              "member 'i32' (signed integer)");
  check_error("color = shape", 9, "type mismatch");
  check_error("color = 1", 9, "type mismatch");
  check_error("letter = 'ab'", 10, "is a char: compare it with one character in quotes");
  check_error("letter = name", 10, "type mismatch");
  check_error("i32 LIKE '1%'", 1, "LIKE needs strings, and member 'i32' is a signed integer");
  check_error("name LIKE i32", 11, "LIKE needs strings, and member 'i32' is a signed integer");
  check_error("color LIKE 'g%'", 1, "LIKE needs strings");
  check_error("color = purple", 9,
              "'purple' is not an enumerator of member 'color' (red, green, blue)");
  check_error("color = 'purple'", 9, "'purple' is not an enumerator of member 'color'");
  check_error("purple = color", 1, "'purple' is not an enumerator of member 'color'");
  check_error("color = Green", 9, "not an enumerator");  // enumerators are case-sensitive
  check_error("i32 = green", 7, "no member 'green'");
  check_error("3 BETWEEN 1 AND 5", 1, "BETWEEN needs a member on its left");
  check_error("i32 BETWEEN 1 AND 'x'", 19, "type mismatch");
}

TEST_CASE("errors: parameters", "[filter][error]") {
  check_error("i32 = %5", 7, "parameter %5 is not given (2 parameters)", {"1", "2"});
  check_error("i32 = %0", 7, "parameter %0 is not given (0 parameters)");
  check_error("i32 = %0", 7,
              "parameter %0 ('abc') is not a number, as member 'i32' (signed "
              "integer) needs",
              {"abc"});
  check_error("i32 = %0", 7, "is not a number", {""});
  check_error("i32 = %0", 7, "is not a number", {"4 2"});
  check_error("i32 = %0", 7, "out of range", {"99999999999999999999"});
  check_error("flag = %0", 8, "is not TRUE or FALSE", {"1"});
  check_error("letter = %0", 10, "is not one character", {"ab"});
  check_error("color = %0", 9, "parameter %0 ('purple') is not an enumerator of member 'color'",
              {"purple"});
  check_error("i32 = 1 OR i8 = %1", 17, "parameter %1 is not given (1 parameter)", {"1"});
}

TEST_CASE("ORDER BY in a query: the keys, and how samples sort", "[filter][query]") {
  Sample a = sample();
  Sample b = sample();
  const Expression only = compile("ORDER BY i32, inner.label", {}, Grammar::query);
  CHECK(only.matches(&a));  // no condition: everything passes
  REQUIRE(only.order_by().size() == 2);
  CHECK(only.order_by()[0] == "i32");
  CHECK(only.order_by()[1] == "inner.label");
  CHECK(only.order(&a, &b) == std::weak_ordering::equivalent);
  b.inner.label = "world";
  CHECK(only.order(&a, &b) == std::weak_ordering::less);
  b.i32 = 1;
  CHECK(only.order(&a, &b) == std::weak_ordering::greater);

  const Expression q = compile("i32 > %0 order by maybe,f64", {"0"}, Grammar::query);
  CHECK(q.matches(&a));
  b.i32 = 0;
  CHECK_FALSE(q.matches(&b));
  a.maybe = 1;  // absent sorts first
  CHECK(q.order(&a, &b) == std::weak_ordering::greater);
  b.maybe = 1;
  b.f64 = std::nan("");  // NaN sorts last
  CHECK(q.order(&a, &b) == std::weak_ordering::less);

  const Expression plain = compile("i32 > 0", {}, Grammar::query);
  CHECK(plain.order_by().empty());
  CHECK(plain.order(&a, &b) == std::weak_ordering::equivalent);

  check_error("ORDER BY inner", 10, "is a struct", {}, Grammar::query);
  check_error("ORDER BY nosuch", 10, "no member 'nosuch'", {}, Grammar::query);
  check_error("ORDER i32", 7, "expected BY after ORDER", {}, Grammar::query);
  check_error("ORDER BY i32,", 14, "expected a member to order by", {}, Grammar::query);
  check_error("ORDER BY", 9, "expected a member to order by", {}, Grammar::query);
  check_error("ORDER BY i32 AND i32 = 1", 14, "expected ',' or the end after ORDER BY", {},
              Grammar::query);
  check_error("ORDER BY i32", 1, "ORDER BY belongs to a query");
}

// Diagnostics formatting, warnings that do not fail a compilation, and error suppression.
#include "test_support.hpp"

using namespace idlc_test;

TEST_CASE("a diagnostic prints as file:line:col: severity: message", "[diag]") {
  Diagnostic d;
  d.loc = SourceLocation{std::make_shared<const std::string>("a.idl"), 3, 14};
  d.message = "boom";
  CHECK(d.str() == "a.idl:3:14: error: boom");
  d.severity = Diagnostic::Severity::Warning;
  CHECK(d.str() == "a.idl:3:14: warning: boom");
}

TEST_CASE("an unknown annotation warns and is ignored", "[diag][annotations]") {
  const auto p = parse("struct S {\n  @shiny long a;\n};\n");
  REQUIRE(p.spec);
  REQUIRE(p.diags.all().size() == 1);
  CHECK(p.diags.all()[0].str() == "test.idl:2:3: warning: unknown annotation '@shiny' ignored");
  CHECK_FALSE(p.diags.has_errors());
  CHECK(p.get<StructDecl>("S").members[0].annotations.empty());
}

TEST_CASE("an undeclared type is reported once and its uses stay quiet", "[diag]") {
  const auto p = parse(
      "struct S {\n  Missing a;\n  Missing b;\n  sequence<Missing> c;\n};\n"
      "struct T { S s; Missing d; };\n");
  CHECK_FALSE(p.spec);
  CHECK(p.diags.error_count() == 1);
  CHECK(p.first_error() == "test.idl:2:3: error: undeclared name 'Missing'");
}

TEST_CASE("a bad constant is reported once, not again where it is used", "[diag]") {
  const auto p = parse("const octet O = 256;\nstruct S { string<O> s; long a[O]; };\n");
  CHECK(p.diags.error_count() == 1);
  CHECK(p.first_error() == "test.idl:1:17: error: value 256 is out of range for 'octet'");
}

TEST_CASE("independent errors are all reported", "[diag]") {
  const auto p = parse(
      "struct A { long x; long x; };\nconst long L = \"s\";\nunion U switch (long) { "
      "case 1: long a; case 1: long b; };\n");
  CHECK(p.diags.error_count() == 3);
}

TEST_CASE("syntax errors stop at the first one with a readable message", "[diag][syntax]") {
  CHECK(parse("struct S { long a }; struct T { long }").first_error() ==
        "test.idl:1:18: error: expected ';' after member declaration");
  CHECK(parse("struct S { long a; }").first_error() ==
        "test.idl:1:21: error: expected ';' after struct definition");
  CHECK(parse("module M { struct S { long a; }; ").first_error() ==
        "test.idl:1:34: error: unexpected end of file, expected '}'");
  CHECK(parse("struct 1S { long a; };").first_error().rfind("test.idl:1:8: error: ", 0) == 0);
}

TEST_CASE("pathological input is rejected, not crashed on", "[diag][robustness]") {
  CHECK(parse(std::string(5000, '(')).first_error().find("nesting too deep") != std::string::npos);
  CHECK(parse("const long X = " + std::string(3000, '-') + "1;")
            .first_error()
            .find("unary operators") != std::string::npos);
  CHECK(parse(std::string("struct S { long a; };\n\xff\n")).first_error() ==
        "test.idl:2:1: error: invalid UTF-8 in source file");
  CHECK_FALSE(parse("#define A B\n#define B A\nconst long X = A;").spec);
  std::string bomb = "#define M0 x x x x x x x x x x\n";
  for (int i = 1; i < 8; ++i) {
    bomb += "#define M" + std::to_string(i) + std::string(10, ' ');
    for (int k = 0; k < 10; ++k) {
      bomb += " M" + std::to_string(i - 1);
    }
    bomb += "\n";
  }
  bomb += "M7\nM7\n";
  const auto b = parse(bomb);
  CHECK(b.diags.error_count() == 1);
  CHECK(b.first_error() == "test.idl:9:1: error: macro expansion too large (more than 4 MiB)");
  CHECK_FALSE(parse(std::string("struct S {\0 long a; };", 22)).spec);
}

TEST_CASE("nesting just inside the limits is accepted", "[diag][robustness]") {
  std::string text = "const long X = " + std::string(99, '(') + "1" + std::string(99, ')') + ";\n";
  text += "const long Y = ";
  for (int i = 0; i < 99; ++i) {
    text += "(1 + ";
  }
  text += "1" + std::string(99, ')') + ";\n";
  text += "typedef ";
  for (int i = 0; i < 99; ++i) {
    text += "sequence<";
  }
  text += "long" + std::string(99, '>') + " Deep;\n";
  for (int i = 0; i < 98; ++i) {
    text += "module m" + std::to_string(i) + " { ";
  }
  text += "struct S { long a; };";
  for (int i = 0; i < 98; ++i) {
    text += " };";
  }
  const auto p = parse(text);
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(std::get<int64_t>(p.get<ConstDecl>("Y").value) == 100);
}

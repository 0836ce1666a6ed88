// The preprocessor: include search, guards, #pragma once, defines, conditionals, and
// positions that point into the original files.
#include "test_support.hpp"

#include <filesystem>

using namespace idlc_test;

namespace {

const std::string kDir = std::string(IDLC_TEST_DIR) + "/pp";

FrontendOptions pp_options(bool with_extra) {
  FrontendOptions o;
  o.include_dirs.push_back(kDir + "/inc");
  if (with_extra) {
    o.defines.emplace_back("WITH_EXTRA", "");
  }
  return o;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TEST_CASE("includes are searched next to the includer, then in -I directories", "[pp]") {
  Parsed p;
  p.spec = parse_file(kDir + "/main.idl", pp_options(true), p.diags);
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(p.diags.all().empty());
  std::vector<std::string> names;
  for (const auto* d : p.spec->definitions) {
    names.push_back(d->name);
  }
  // guarded.idl and once.idl are included twice but contribute once.
  CHECK(names == std::vector<std::string>{"Local", "Guarded", "Once", "Extra", "BIG", "Main"});
  CHECK(p.spec->direct_includes == std::vector<std::string>{"sub/local.idl", "guarded.idl",
                                                            "guarded.idl", "once.idl", "once.idl"});
  REQUIRE(p.spec->source_files.size() == 4);
  CHECK(p.spec->source_files[0] == kDir + "/main.idl");
  CHECK(ends_with(p.spec->source_files[1], "pp/sub/local.idl"));
  CHECK(ends_with(p.spec->source_files[2], "pp/inc/guarded.idl"));
  CHECK(ends_with(p.spec->source_files[3], "pp/inc/once.idl"));

  const auto& local = p.get<StructDecl>("Local");
  CHECK_FALSE(local.from_main_file);
  CHECK(ends_with(*local.loc.file, "sub/local.idl"));
  CHECK(local.loc.line == 2);
  CHECK(local.loc.column == 8);
  const auto& main = p.get<StructDecl>("Main");
  CHECK(main.from_main_file);
  CHECK(main.loc.line == 27);
  CHECK(member(main, "s").type->bound == 16);  // BIG = ALIAS_SIZE -> SIZE -> 16
  CHECK(member(main, "l").type->decl == &local);
}

TEST_CASE("a -D define selects #ifdef branches", "[pp]") {
  Parsed p;
  p.spec = parse_file(kDir + "/main.idl", pp_options(false), p.diags);
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(p.find("NoExtra") != nullptr);
  CHECK(p.find("Extra") == nullptr);
}

TEST_CASE("the includer's directory wins over -I directories", "[pp]") {
  Parsed p;
  p.spec = parse_file(kDir + "/shadow_main.idl", pp_options(false), p.diags);
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(p.find("FromIncluderDir") != nullptr);
  CHECK(p.find("FromIncludePath") == nullptr);
}

TEST_CASE("errors inside an included file point into that file", "[pp][positions]") {
  Parsed p;
  p.spec = parse_file(kDir + "/include_error.idl", {}, p.diags);
  CHECK_FALSE(p.spec);
  CHECK(p.first_error() == kDir + "/sub/broken.idl:4:7: error: undeclared name 'Missing'");
}

TEST_CASE("macro substitution keeps original columns", "[pp][positions]") {
  const auto p =
      parse("#define LONGER_NAME long\n#define T LONGER_NAME\nstruct S { T a; Oops b; };\n");
  CHECK(p.first_error() == "test.idl:3:17: error: undeclared name 'Oops'");
  const auto q = parse("#define T long\nstruct S { T a; T b; };\n");
  REQUIRE(q.spec);
  CHECK(q.get<StructDecl>("S").members[1].type->primitive == PrimitiveKind::Int32);
  CHECK(q.get<StructDecl>("S").members[1].loc.column == 19);
}

TEST_CASE("macros are not substituted inside strings or comments", "[pp]") {
  const auto p = parse(
      "#define X 42\nconst string S = \"X\"; // X\n/* X */ const long L = X;\n"
      "const char C = 'X';\n");
  INFO(p.messages());
  REQUIRE(p.spec);
  CHECK(std::get<StringValue>(p.get<ConstDecl>("S").value).utf8 == "X");
  CHECK(std::get<int64_t>(p.get<ConstDecl>("L").value) == 42);
  CHECK(std::get<CharValue>(p.get<ConstDecl>("C").value).value == U'X');
}

TEST_CASE("#if expressions, #elif chains and #undef", "[pp]") {
  const auto p = parse(R"(#define A 3
#if A * 2 == 6 && !defined B
const long ONE = 1;
#elif 1
const long NO1 = 1;
#else
const long NO2 = 1;
#endif
#if defined(B) || A < 2
const long NO3 = 1;
#elif (A << 1) > 5
const long TWO = 2;
#endif
#undef A
#ifdef A
const long NO4 = 1;
#endif
#if 0
#if 1
const long NO5 = 1;
#endif
#else
const long THREE = 3;
#endif
)");
  INFO(p.messages());
  REQUIRE(p.spec);
  std::vector<std::string> names;
  for (const auto* d : p.spec->definitions) {
    names.push_back(d->name);
  }
  CHECK(names == std::vector<std::string>{"ONE", "TWO", "THREE"});
}

TEST_CASE("multi-line comments and CRLF line ends keep line numbers", "[pp][positions]") {
  const auto p = parse("/* one\r\n two\r\n*/ struct\r\nS { long a; Bad b; };\r\n");
  CHECK(p.first_error() == "test.idl:4:13: error: undeclared name 'Bad'");
}

TEST_CASE("include recursion is cut at 64 levels", "[pp]") {
  Parsed p;
  const std::string self = std::string(IDLC_TEST_DIR) + "/bad/include_self.idl";
  p.spec = parse_file(self, {}, p.diags);
  CHECK_FALSE(p.spec);
  CHECK(p.first_error() == self + ":2:10: error: #include nested more than 64 levels deep");
}

TEST_CASE("a UTF-8 byte order mark is accepted and columns still count bytes", "[pp]") {
  const auto p = parse("\xEF\xBB\xBFstruct S { Nope n; };\n");
  CHECK(p.first_error() == "test.idl:1:15: error: undeclared name 'Nope'");
}

TEST_CASE("directives continue over backslash-newline; line numbers stay right", "[pp]") {
  const auto p =
      parse("#define WIDE \\\n  long \\\n  long\nstruct S { WIDE a; };\nstruct T { Bad b; };\n");
  INFO(p.messages());
  CHECK(p.first_error() == "test.idl:5:12: error: undeclared name 'Bad'");
  const auto q = parse("#define WIDE \\\n  long \\\n  long\nstruct S { WIDE a; };\n");
  REQUIRE(q.spec);
  CHECK(q.get<StructDecl>("S").members[0].type->primitive == PrimitiveKind::Int64);
  CHECK(q.get<StructDecl>("S").members[0].loc.line == 4);
}

// Types from IDL text at run time: what the idlc front end checks, mapped onto the dynamic
// model (names, bases, ids, keys, unions, bit types), and IDL it cannot use refused with
// its position.
#include <spindle/types/from_idl.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace spindle::types;
using Catch::Matchers::Contains;

namespace {

const std::string kTestIdl = std::string(SPINDLE_SOURCE_DIR) + "/tests/idlc/idl/";

TypeLibrary all_constructs() {
  TypeLibrary lib;
  load_idl_file(lib, kTestIdl + "all_constructs.idl", {{kTestIdl}, {}});
  return lib;
}

std::vector<std::string> path_names(const std::vector<std::vector<const Member*>>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::string s;
    for (const Member* m : p)
      s += (s.empty() ? "" : ".") + m->name;
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("IDL loaded at run time gives its types, bases and members", "[types][idl]") {
  const TypeLibrary lib = all_constructs();
  const Type* derived = lib.find("Test::Derived");
  REQUIRE(derived != nullptr);
  CHECK(lib.find("::Test::Derived") == derived);
  CHECK(derived->kind == TypeKind::Struct);
  REQUIRE(derived->base == lib.find("Test::Base"));
  const auto members = all_members(*derived);
  REQUIRE(members.size() == 10);
  CHECK(members[0]->name == "id");
  CHECK(members[0]->key);
  CHECK(resolve(*members[2]->type).kind == TypeKind::Enum);
  CHECK(members[2]->type == lib.find("Common::Color"));

  const Type* collections = lib.find("Test::Collections");
  REQUIRE(collections != nullptr);
  const Type* matrix = collections->members[6].type;  // Matrix matrix: an alias of long[2][3]
  CHECK(matrix->kind == TypeKind::Alias);
  CHECK(resolve(*matrix).kind == TypeKind::Array);
  CHECK(resolve(*matrix).dims == std::vector<uint32_t>{2, 3});
  const Type* grid = collections->members[7].type;  // double grid[2][2]
  CHECK(grid->kind == TypeKind::Array);
  CHECK(grid->element->kind == TypeKind::Float64);
  const Type* words = collections->members[2].type;  // sequence<string<5>, 3>
  CHECK(words->kind == TypeKind::Sequence);
  CHECK(words->bound == 3);
  CHECK(words->element->kind == TypeKind::String8);
  CHECK(words->element->bound == 5);

  const Type* annotated = lib.find("Test::Annotated");
  REQUIRE(annotated != nullptr);
  CHECK(annotated->extensibility == Extensibility::Final);
  CHECK(annotated->extensibility_explicit);
  CHECK(annotated->members[0].id == 5);
  CHECK(annotated->members[1].id == 6);
  CHECK(annotated->members[2].optional);
  CHECK(std::get<int64_t>(*annotated->members[4].default_value) == 42);
  CHECK(std::get<int64_t>(*annotated->members[5].min) == -10);

  const Type* extensible = lib.find("Test::Extensible");
  REQUIRE(extensible != nullptr);
  CHECK(extensible->extensibility == Extensibility::Mutable);
  CHECK(extensible->members[1].id == 7);
  CHECK(default_encoding(*extensible) == spindle::cdr::Encoding::Xcdr2);
  CHECK(default_encoding(*lib.find("Test::Legacy")) == spindle::cdr::Encoding::Xcdr1);
}

TEST_CASE("Key paths of IDL loaded at run time are those idlc computes", "[types][idl]") {
  const TypeLibrary lib = all_constructs();
  CHECK(path_names(key_paths(*lib.find("Test::Outer"))) ==
        std::vector<std::string>{"inner.k", "where.x", "where.y"});
  CHECK(path_names(key_paths(*lib.find("Test::Legacy"))) == std::vector<std::string>{"a", "b"});
  CHECK(path_names(key_paths(*lib.find("Test::Derived"))) == std::vector<std::string>{"id"});
  CHECK(key_paths(*lib.find("Test::Primitives")).empty());
}

TEST_CASE("Unions, enums and bit types loaded at run time", "[types][idl]") {
  const TypeLibrary lib = all_constructs();
  const Type* by_long = lib.find("Test::ByLong");
  REQUIRE(by_long != nullptr);
  CHECK(by_long->discriminator->kind == TypeKind::Int32);
  REQUIRE(by_long->cases.size() == 3);
  CHECK(by_long->cases[0].labels == std::vector<int64_t>{1, 2});
  CHECK(by_long->cases[2].is_default);
  const Type* by_char = lib.find("Test::ByChar");
  CHECK(by_char->cases[1].labels == std::vector<int64_t>{'b'});
  CHECK(by_char->implicit_default.has_value());
  const Type* by_enum = lib.find("Test::ByEnum");
  CHECK(by_enum->cases[1].labels == std::vector<int64_t>{1});

  const Type* perms = lib.find("Test::Permissions");
  REQUIRE(perms != nullptr);
  CHECK(perms->bound == 12);
  CHECK(perms->flags[2].name == "ADMIN");
  CHECK(perms->flags[2].position == 10);

  TypeLibrary gaps;
  load_idl_file(gaps, kTestIdl + "gaps.idl", {{kTestIdl}, {}});
  const Type* wider = gaps.find("Gaps::Wider");
  REQUIRE(wider != nullptr);
  CHECK(wider->base == gaps.find("Gaps::Padded"));
  CHECK(wider->total_bits == 41);
  const auto fields = all_bitfields(*wider);
  REQUIRE(fields.size() == 6);
  CHECK(fields[1]->name.empty());  // padding
  CHECK(fields[3]->name == "more");
  CHECK(fields[3]->offset == 17);
  const Type* maps = gaps.find("Gaps::Maps");
  CHECK(maps->members[0].type->kind == TypeKind::Map);
  CHECK(maps->members[0].type->key->kind == TypeKind::String8);
}

TEST_CASE("Recursive types loaded at run time refer to themselves", "[types][idl]") {
  const TypeLibrary lib = all_constructs();
  const Type* tree = lib.find("Test::TreeNode");
  REQUIRE(tree != nullptr);
  CHECK(tree->members[1].type->kind == TypeKind::Sequence);
  CHECK(tree->members[1].type->element == tree);
}

TEST_CASE("Two IDL files that include one common file load into one library", "[types][idl]") {
  TypeLibrary lib;
  load_idl_file(lib, kTestIdl + "all_constructs.idl", {{kTestIdl}, {}});
  load_idl_file(lib, kTestIdl + "gaps.idl", {{kTestIdl}, {}});
  CHECK(lib.find("Common::Point") != nullptr);
  CHECK(lib.find("Gaps::Maps")->members[3].type->element == lib.find("Common::Point"));
}

TEST_CASE("IDL that cannot be used is refused with its position", "[types][idl][errors]") {
  TypeLibrary lib;
  CHECK_THROWS_WITH(load_idl_text(lib, "struct A {\n  long x\n};\n", "bad.idl"),
                    Contains("bad.idl:2:9: error: expected ';'"));
  CHECK_THROWS_WITH(load_idl_text(lib, "struct A { Missing m; };\n", "unknown.idl"),
                    Contains("unknown.idl:1:") && Contains("Missing"));
  CHECK_THROWS_WITH(load_idl_file(lib, "/nonexistent/x.idl"), Contains("/nonexistent/x.idl"));
  CHECK(lib.named().empty());

  load_idl_text(lib, "struct A { long x; };\n", "first.idl");
  CHECK_THROWS_WITH(
      load_idl_text(lib, "struct B { long y; };\nstruct A { long x; };\n", "again.idl"),
      Contains("again.idl:2:") && Contains("'A' is already defined"));
  CHECK(lib.find("B") == nullptr);  // nothing of a refused file stays
  CHECK(lib.named().size() == 1);
}

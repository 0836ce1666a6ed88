// The schema documents are generated from the schema tables (STYLE 10): this fails when a
// checked-in document differs from what the code says. Regenerate with
//   build/<preset>/tests/qos/qos_schema_doc qos    > qos-profiles/schema.md
//   build/<preset>/tests/qos/qos_schema_doc domain > docs/domain-schema.md
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "config/domain_config.hpp"
#include "qos/schema.hpp"

namespace {

std::string read(const char* relative) {
  std::ifstream in(std::string(SPINDLE_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("schema docs: qos-profiles/schema.md is generated from the code", "[schema_doc]") {
  const auto generated = spindle::qos::schema_markdown();
  CHECK(generated.find("| `history.depth` | integer >= 1 | `1` |") != std::string::npos);
  CHECK(read("qos-profiles/schema.md") == generated);
}

TEST_CASE("schema docs: docs/domain-schema.md is generated from the code", "[schema_doc]") {
  const auto generated = spindle::config::schema_markdown();
  CHECK(generated.find("| `engine.window_size` | integer 1..65536 | `100` |") != std::string::npos);
  CHECK(read("docs/domain-schema.md") == generated);
}

// Every file in bad/ is malformed IDL whose first line says which error must come first:
//   // expect: LINE:COL: error: MESSAGE
// The front end must reject the file and its first error must be exactly that, positioned
// in the file itself.
#include "test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace idlc_test;

TEST_CASE("each malformed IDL file reports its expected first error", "[bad]") {
  const std::filesystem::path dir = std::filesystem::path(IDLC_TEST_DIR) / "bad";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".idl") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 35);
  for (const auto& file : files) {
    DYNAMIC_SECTION(file.filename().string()) {
      std::ifstream in(file);
      std::string first_line;
      std::getline(in, first_line);
      const std::string marker = "// expect: ";
      REQUIRE(first_line.rfind(marker, 0) == 0);
      const std::string expected = file.string() + ":" + first_line.substr(marker.size());

      Diagnostics diags;
      const auto spec = parse_file(file.string(), {}, diags);
      CHECK(spec == nullptr);
      CHECK(diags.has_errors());
      std::string first;
      for (const auto& d : diags.all()) {
        if (d.severity == Diagnostic::Severity::Error) {
          first = d.str();
          break;
        }
      }
      CHECK(first == expected);
    }
  }
}

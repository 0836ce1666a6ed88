// The harness itself (docs/dev/building.md, "What the test run isolates"): a test that CTest's
// timeout kills leaves no child running. A small CTest project of one test that starts a
// member and then hangs runs under a 2 s timeout; once CTest has killed it, the member it
// started must be gone too. Before, a test killed so orphaned its members, which kept running
// with their shared memory.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "temp_dir.hpp"

namespace {

// Whether process `pid` still runs (a zombie has ended: it waits only to be reaped).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("harness: a test killed by its CTest timeout leaves no child running", "[harness]") {
  const spindle::testing::TempDir dir("spindle-harness");
  const auto pid_file = (dir.path() / "sleeper.pid").string();
  {
    std::ofstream tests(dir.path() / "CTestTestfile.cmake");
    tests << "add_test(hangs \"" << SPINDLE_HARNESS_NODE << "\" spawner \"" << pid_file << "\")\n"
          << "set_tests_properties(hangs PROPERTIES TIMEOUT 2)\n";
  }
  const std::string ctest = std::string(SPINDLE_CTEST) + " --test-dir \"" + dir.path().string() +
                            "\" > \"" + (dir.path() / "ctest.out").string() + "\" 2>&1";
  const int rc = std::system(ctest.c_str());
  std::ifstream out(dir.path() / "ctest.out");
  // Read through rdbuf(): GCC 12 at -O3 warns (-Wnull-dereference) inside the libstdc++
  // string constructor from istreambuf_iterators.
  std::ostringstream text;
  text << out.rdbuf();
  const std::string said = text.str();
  INFO("ctest said:\n" << said);
  CHECK(rc != 0);
  REQUIRE(said.find("Timeout") != std::string::npos);  // CTest killed it, as it would a test
  std::ifstream in(pid_file);
  pid_t sleeper = 0;
  REQUIRE(in >> sleeper);
  REQUIRE(sleeper > 0);
  // It dies with the test's process (at once; a second is plenty).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (running(sleeper) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool alive = running(sleeper);
  if (alive) ::kill(sleeper, SIGKILL);  // not left behind by this test either
  CHECK_FALSE(alive);
}

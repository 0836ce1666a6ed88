// harness_node: the processes of the harness test (harness_test.cpp).
//
//   harness_node spawner FILE   starts `harness_node sleeper` through the tests' Process class
//                               (tests/smc/process.hpp), writes the sleeper's pid to FILE,
//                               then waits to be killed (a test that hangs)
//   harness_node sleeper        sleeps for a minute (a member the test started)
//
// Every wait is bounded.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "process.hpp"

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role == "sleeper") {
    std::this_thread::sleep_for(std::chrono::minutes(1));
    return 0;
  }
  if (role == "spawner" && argc == 3) {
    spindle::testing::Process sleeper({argv[0], "sleeper"});
    {
      std::ofstream out(std::string(argv[2]) + ".part");
      out << sleeper.pid() << '\n';
    }
    std::rename((std::string(argv[2]) + ".part").c_str(), argv[2]);
    std::this_thread::sleep_for(std::chrono::minutes(1));
    return 0;
  }
  std::fprintf(stderr, "usage: harness_node spawner FILE | harness_node sleeper\n");
  return 2;
}

// Retained history across processes (docs/storage.md), over tcp and shm: a writer process
// writes TRANSIENT_LOCAL samples (KEEP_LAST 2 of 3 instances) while another process of the
// domain has no reader; then a process that joins later and that other member both create
// a reader and must receive exactly the last 2 samples of each instance — the joiner
// through the state transfer, the member from its own retained history. dcps_durable_node
// plays the processes; every wait is bounded.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "process.hpp"
#include "scoped_config.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kExpected = "got 1:14 1:15 2:24 2:25 3:34 3:35";

void run(const std::string& transport) {
  const tst::ScopedDomainConfig config("transport: " + transport + ", shm: {namespace: durable-" +
                                       std::to_string(::getpid()) + "-" + transport + "}");
  const auto node = tst::self_dir() + "/dcps_durable_node";
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::vector<std::unique_ptr<tst::Process>> procs;
  auto start = [&](const std::string& role) -> tst::Process& {
    procs.push_back(std::make_unique<tst::Process>(std::vector<std::string>{node, role}));
    auto& p = *procs.back();
    REQUIRE(p.read_line(deadline) == std::optional<std::string>("ready"));
    return p;
  };
  auto& writer = start("writer");
  auto& member = start("member");
  writer.send("go");
  REQUIRE(writer.read_line(deadline) == std::optional<std::string>("written"));
  auto& late = start("late");
  CHECK(late.read_line(deadline) == std::optional<std::string>(kExpected));
  member.send("read");
  CHECK(member.read_line(deadline) == std::optional<std::string>(kExpected));
  for (auto& p : procs)
    p->send("exit");
  CHECK(tst::wait_all(procs, deadline).empty());
}

}  // namespace

TEST_CASE("late readers in other processes get the retained history", "[durable]") {
  SECTION("tcp") {
    run("tcp");
  }
  SECTION("shm") {
    run("shm");
  }
}

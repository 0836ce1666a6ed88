// The transport conformance suite: the same multi-process scenarios for every transport.
// The transport under test comes from SPINDLE_TRANSPORT (tcp, shm, rdma; CTest runs the
// binary once per transport). Each test spawns 2-4 transport_node processes on loopback,
// hands them the member list, and bounds every wait; exit code 77 (CTest: skipped) when
// the transport cannot run on this machine, printing why.
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "scenarios.hpp"
#include "support.hpp"

namespace test = spindle::transport::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::string g_kind = "tcp";

struct Cluster {
  std::vector<std::unique_ptr<test::Child>> nodes;
  std::string shm_namespace;

  ~Cluster() {
    nodes.clear();                         // kills and reaps whoever is left
    test::cleanup(g_kind, shm_namespace);  // a SIGKILLed shm node leaves its segments
  }

  Cluster(std::size_t n, const std::string& scenario, const std::vector<std::string>& extra = {}) {
    // A private shm namespace per test run, so parallel runs never meet.
    static int serial = 0;
    const std::string ns =
        "spindle-t" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
    ::setenv("SPINDLE_SHM_NAMESPACE", ns.c_str(), 1);
    shm_namespace = ns;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::string> argv{TRANSPORT_NODE_PATH, g_kind, scenario, std::to_string(i)};
      argv.insert(argv.end(), extra.begin(), extra.end());
      nodes.push_back(std::make_unique<test::Child>(argv));
    }
    std::ostringstream members;
    members << "MEMBERS " << n;
    const auto deadline = Clock::now() + 20s;
    for (auto& c : nodes) {
      auto ready = c->expect("READY", deadline);
      REQUIRE(ready);
      std::istringstream in(*ready);
      std::string word, id, host, port;
      in >> word >> id >> host >> port;
      members << " " << id << " " << host << " " << port;
    }
    for (auto& c : nodes)
      c->send(members.str());
  }

  // Waits for node i's OK line; fails the test with the node's output otherwise.
  std::string ok(std::size_t i, std::chrono::seconds limit = 60s) {
    auto line = nodes[i]->expect("OK", Clock::now() + limit);
    std::string log;
    if (!line) {
      // Collect what every node said, to see who failed first.
      for (std::size_t j = 0; j < nodes.size(); ++j) {
        while (nodes[j]->read_line(Clock::now() + 500ms)) {
        }
        log += "node " + std::to_string(j) + " said:\n";
        for (auto& l : nodes[j]->log())
          log += "  " + l + "\n";
      }
    }
    INFO(log);
    REQUIRE(line);
    CHECK(nodes[i]->wait(Clock::now() + 10s) == 0);
    return *line;
  }
};

double field(const std::string& line, const std::string& key) {
  return test::fact(line, key);
}

// What every member of an order run must report: at least `min_sent` updates posted, and
// every observed guard not lapped by its writer checked over all 32 words of its data.
void check_order(const std::string& line, double min_sent) {
  INFO(line);
  CHECK(field(line, "sent") >= min_sent);
  CHECK(field(line, "words_checked") == (field(line, "observed") - field(line, "lapped")) * 32);
  CHECK(field(line, "words_checked") > 0);
}

}  // namespace

TEST_CASE(
    "writes to one peer are seen in order: data before guard, 3 processes, concurrent "
    "writers to different peers, millions of updates",
    "[conformance][order]") {
  // Each member streams at least a million updates (data + guard) to its two peers.
  constexpr std::int64_t kUpdates = 1'000'000;
  Cluster c(
      3, "order",
      {"duration_us=1500000", "min_updates=" + std::to_string(kUpdates), "suspicion_ms=2000"});
  double sent = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    auto line = c.ok(i);
    check_order(line, static_cast<double>(kUpdates));
    INFO(line);
    CHECK(field(line, "observed") > 20);
    CHECK(field(line, "teardown_ms") < 1000);
    sent += field(line, "sent");
  }
  std::cout << "order: " << sent << " updates streamed by 3 members" << std::endl;
}

TEST_CASE("4 processes: every member streams to three peers in order, data before guard",
          "[conformance][order]") {
  Cluster c(4, "order", {"duration_us=1000000", "min_updates=200000", "suspicion_ms=3000"});
  for (std::size_t i = 0; i < 4; ++i)
    check_order(c.ok(i), 200000);
}

TEST_CASE("3 processes: data and guard posted as one write_batch are seen in order",
          "[conformance][order][batch]") {
  Cluster c(3, "order",
            {"duration_us=800000", "min_updates=200000", "suspicion_ms=3000", "batch=1"});
  for (std::size_t i = 0; i < 3; ++i)
    check_order(c.ok(i), 200000);
}

TEST_CASE("writes of 1 byte to 8 MB land whole, at both region edges", "[conformance][sizes]") {
  Cluster c(2, "sizes");
  c.ok(0);
  c.ok(1);
}

TEST_CASE("blocks arrive in order with their immediates under back-pressure",
          "[conformance][blocks]") {
  Cluster c(2, "blocks", {"count=300"});
  c.ok(1);
  auto line = c.ok(0);
  INFO(line);
  CHECK(field(line, "blocks") == 300);
}

TEST_CASE("a peer SIGKILLed mid-stream is suspected in time and the survivors keep working",
          "[conformance][kill]") {
  // The survivors must not suspect each other: under a loaded two-core machine a process
  // can be starved for a few hundred ms, so the timeout has headroom. Detecting the victim
  // does not wait for it (tcp: the stream resets; shm: its pid is gone).
  constexpr int kSuspicionMs = 1000;
  Cluster c(3, "order",
            {"duration_us=300000", "victim=2", "suspicion_ms=" + std::to_string(kSuspicionMs)});
  REQUIRE(c.nodes[2]->expect("STREAMING", Clock::now() + 20s));
  std::this_thread::sleep_for(300ms);
  const auto killed_at = Clock::now();
  c.nodes[2]->kill9();
  CHECK(c.nodes[2]->wait(Clock::now() + 5s) == 128 + SIGKILL);
  for (std::size_t i = 0; i < 2; ++i) {
    auto line = c.nodes[i]->expect("SUSPECT 2", Clock::now() + 10s);
    REQUIRE(line);
    std::istringstream in(*line);
    std::string word, peer, reason;
    long long ns = 0;
    in >> word >> peer >> reason >> ns;
    const auto delay = Clock::time_point(Clock::duration(ns)) - killed_at;
    INFO(*line);
    CHECK(delay < std::chrono::milliseconds(kSuspicionMs) + 700ms);
  }
  c.ok(0);
  c.ok(1);
}

TEST_CASE("teardown and reconnect for a new view never hang", "[conformance][reconnect]") {
  // Members tear down at about the same time, as in a view change: a GOODBYE that can no
  // longer go (the peer's GOODBYE closed the stream first) must not hold disconnect() up
  // (tcp lingered its full 200 ms for it in about one run in three).
  Cluster c(3, "reconnect");
  for (std::size_t i = 0; i < 3; ++i) {
    auto line = c.ok(i);
    INFO(line);
    CHECK(field(line, "disconnect_ms") >= 0);
    CHECK(field(line, "disconnect_ms") < 150);
    CHECK(field(line, "teardown_ms") < 1000);
  }
}

TEST_CASE("an idle connected node uses about 0% CPU", "[conformance][idle]") {
  Cluster c(2, "idle", {"duration_us=1000000"});
  for (std::size_t i = 0; i < 2; ++i) {
    auto line = c.ok(i);
    INFO(line);
    CHECK(field(line, "cpu_pct") >= 0);
    CHECK(field(line, "cpu_pct") < 3.0);
  }
}

int main(int argc, char** argv) {
  if (const char* k = std::getenv("SPINDLE_TRANSPORT")) g_kind = k;
  std::string why;
  if (!test::transport_available(g_kind, why)) {
    std::cout << "SKIP: transport '" << g_kind << "' cannot run here: " << why << std::endl;
    return 77;
  }
  return Catch::Session().run(argc, argv);
}

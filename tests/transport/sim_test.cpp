// The in-memory deterministic transport's own fault model: crash and cut become suspicions
// within the timeout, and the status codes a crashed, cut or misused node gets. The contract
// properties over many seeds are the conformance suite (conformance_sim_test.cpp).
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include "transport/sim.hpp"

namespace st = spindle::transport;
namespace sim = spindle::transport::sim;
using namespace std::chrono_literals;

TEST_CASE("sim: crash and cut become suspicions within the timeout", "[sim][faults]") {
  sim::Config cfg;
  cfg.seed = 7;
  cfg.suspicion_timeout = 2ms;
  sim::Network net(cfg);
  for (st::NodeId i = 0; i < 4; ++i)
    (void)net.add_node(i).create_region(1, 64);
  for (st::NodeId i = 0; i < 4; ++i) {
    REQUIRE(net.node(i).connect(net.addresses(), 1, 10ms) == st::Status::ok);
  }
  net.crash(3);
  net.cut(0, 1);
  const auto start = net.now();
  std::vector<std::vector<st::Suspicion>> seen(4);
  auto collect = [&] {
    for (st::NodeId i = 0; i < 3; ++i) {
      std::vector<st::Event> ev;
      net.node(i).poll(ev);
      for (auto& e : ev)
        seen[i].push_back(std::get<st::Suspicion>(e));
    }
    return seen[0].size() == 2 && seen[1].size() == 2 && seen[2].size() == 1;
  };
  REQUIRE(net.run_until(collect, 1s));
  CHECK(net.now() - start <= 2ms);
  CHECK(seen[2][0].peer == 3);
  CHECK(seen[2][0].reason == st::SuspicionReason::crashed);
  CHECK(net.node(3).write(0, 1, 0, 1, 0, 8) == st::Status::closed);
  CHECK(net.node(0).write(1, 1, 0, 1, 0, 8) == st::Status::peer_suspected);
  CHECK(net.node(0).write(2, 1, 0, 1, 0, 8) == st::Status::ok);
  CHECK(net.node(0).write(2, 1, 60, 1, 0, 8) == st::Status::invalid);
  CHECK(net.node(0).write(2, 1, 0, 1, 57, 8) == st::Status::invalid);
  CHECK(net.node(0).write(2, 1, 0, 9, 0, 8) == st::Status::invalid);
}

namespace {

// Sets (or, with nullptr, unsets) the SPINDLE_SIM_* variables for one test, and restores
// them after.
class SimEnv {
 public:
  SimEnv(const char* seed, const char* seeds, const char* min_seeds, const char* budget) {
    set("SPINDLE_SIM_SEED", seed);
    set("SPINDLE_SIM_SEEDS", seeds);
    set("SPINDLE_SIM_MIN_SEEDS", min_seeds);
    set("SPINDLE_SIM_BUDGET", budget);
  }
  ~SimEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }
  SimEnv(const SimEnv&) = delete;
  SimEnv& operator=(const SimEnv&) = delete;

 private:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::vector<std::uint64_t> explore(sim::Seeds& seeds) {
  std::vector<std::uint64_t> out;
  for (const std::uint64_t seed : seeds)
    out.push_back(seed);
  return out;
}

}  // namespace

TEST_CASE("seeds: the floor runs whatever the time, the budget stops what is past it",
          "[sim][seeds]") {
  {
    // No budget: every seed of the count, in order.
    const SimEnv env(nullptr, nullptr, nullptr, nullptr);
    auto seeds = sim::Seeds::from_env(40, 5);
    const auto ran = explore(seeds);
    REQUIRE(ran.size() == 40);
    CHECK(ran.front() == 1);
    CHECK(ran.back() == 40);
    CHECK(seeds.explored() == 40);
    CHECK(seeds.summary().rfind("explored 40 of 40 seeds (first 1, floor 5, budget none)", 0) == 0);
  }
  {
    // A budget already spent: the floor and not one seed more.
    // (A positive budget under a millisecond is a millisecond, never "none".)
    const SimEnv env(nullptr, nullptr, nullptr, "0.000001");
    auto seeds = sim::Seeds::from_env(1'000'000, 7, std::chrono::seconds(60));
    std::uint64_t n = 0;
    for (const std::uint64_t seed : seeds) {
      CHECK(seed == ++n);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(seeds.explored() == 7);
  }
  {
    // The floor never exceeds the count; a replay is that one seed.
    const SimEnv env(nullptr, "3", "10", nullptr);
    auto seeds = sim::Seeds::from_env(100);
    CHECK(explore(seeds) == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(seeds.floor == 3);
  }
  {
    const SimEnv env("42", nullptr, nullptr, nullptr);
    auto seeds = sim::Seeds::from_env(100, 10, std::chrono::seconds(5));
    CHECK(explore(seeds) == std::vector<std::uint64_t>{42});
  }
}

TEST_CASE("seeds: a variable that is not a non-negative number is named", "[sim][seeds]") {
  {
    const SimEnv env(nullptr, nullptr, nullptr, "abc");
    CHECK_THROWS_WITH(sim::Seeds::from_env(10),
                      "SPINDLE_SIM_BUDGET='abc' is not a non-negative number");
  }
  {
    const SimEnv env(nullptr, "-3", nullptr, nullptr);
    CHECK_THROWS_WITH(sim::Seeds::from_env(10),
                      "SPINDLE_SIM_SEEDS='-3' is not a non-negative number");
  }
  {
    const SimEnv env("7x", nullptr, nullptr, nullptr);
    CHECK_THROWS_WITH(sim::Seeds::from_env(10),
                      "SPINDLE_SIM_SEED='7x' is not a non-negative number");
  }
}

// The transport conformance suite on the deterministic in-memory transport: the same
// scenarios as the multi-process suite (scenarios.hpp), every member an actor of one
// sim::Network, explored over many seeds with random latencies, spikes, slow members and
// crashes. A failing seed prints the command that replays it.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include "transport/sim.hpp"

#include "scenarios.hpp"

namespace st = spindle::transport;
namespace sim = spindle::transport::sim;
namespace test = spindle::transport::test;
using namespace std::chrono_literals;

namespace {

struct SimRun {
  std::string scenario;
  std::uint32_t members = 2;
  std::map<std::string, std::string> args;
  sim::Config config;
  std::size_t big_bytes = std::size_t{1} << 20;
  std::int64_t victim = -1;  // crashed at a random time in crash_window
  std::pair<sim::Duration, sim::Duration> crash_window{50us, 400us};
  std::function<void(sim::Network&)> faults;  // more faults before the run (slow, ...)

  // Outcome.
  std::vector<std::string> results;  // per member: facts, or "FAIL why"
  std::vector<std::vector<std::string>> said;
  std::string failure;
  std::uint64_t trace = 0;
  sim::Duration crashed_at{-1};

  void run() {
    sim::Network net(config);
    std::vector<test::Member> m(members);
    std::vector<std::unique_ptr<test::Scenario>> sc(members);
    said.assign(members, {});
    for (st::NodeId i = 0; i < members; ++i)
      test::create_regions(net.add_node(i), big_bytes);
    const auto view = net.addresses();
    for (st::NodeId i = 0; i < members; ++i) {
      REQUIRE(net.node(i).connect(view, 1, 10ms) == st::Status::ok);
      m[i].t = &net.node(i);
      m[i].id = i;
      m[i].view = view;
      m[i].args = args;
      m[i].now = [&net] { return net.now(); };
      m[i].say = [this, i](const std::string& line) { said[i].push_back(line); };
      m[i].pause = [](std::chrono::nanoseconds) { FAIL("the simulator slows members instead"); };
      m[i].virtual_time = true;
    }
    for (st::NodeId i = 0; i < members; ++i) {
      sc[i] = test::make_scenario(scenario, m[i]);
      net.set_actor(i, [&s = *sc[i]] {
        bool worked = false;
        for (std::size_t p = 0; p < s.parts() && !s.done(); ++p)
          worked = s.step(p) || worked;
        return worked;
      });
    }
    if (faults) faults(net);
    auto survivors_done = [&] {
      for (st::NodeId i = 0; i < members; ++i) {
        if (static_cast<std::int64_t>(i) != victim && !sc[i]->done()) return false;
      }
      return true;
    };
    if (victim >= 0) {
      const auto at = sim::Duration(static_cast<std::int64_t>(
          net.rng().uniform(static_cast<std::uint64_t>(crash_window.first.count()),
                            static_cast<std::uint64_t>(crash_window.second.count()))));
      (void)net.run_until([&] { return net.now() >= at || survivors_done(); }, 10s);
      crashed_at = net.now();
      net.crash(static_cast<st::NodeId>(victim));
    }
    if (!net.run_until(survivors_done, 10s)) {
      failure = "did not finish:";
      for (st::NodeId i = 0; i < members; ++i) {
        failure += " [member " + std::to_string(i) + (sc[i]->done() ? " done" : " running");
        for (const auto& l : said[i])
          failure += "; " + l;
        failure += "]";
      }
    }
    results.clear();
    for (st::NodeId i = 0; i < members; ++i) {
      if (static_cast<std::int64_t>(i) == victim) {
        results.emplace_back("crashed");
        continue;
      }
      if (!sc[i]->failure().empty()) {
        failure = "member " + std::to_string(i) + ": " + sc[i]->failure();
        results.push_back("FAIL " + sc[i]->failure());
      } else {
        results.push_back(sc[i]->result());
        net.node(i).disconnect();
      }
    }
    trace = net.trace_hash();
  }
};

// Runs `make(seed)` for every seed of the test (SPINDLE_SIM_SEEDS / SPINDLE_SIM_SEED);
// `check` asserts on each finished run.
template <class Make, class Check>
void explore(std::uint64_t default_seeds, Make make, Check check) {
  auto seeds = sim::Seeds::from_env(default_seeds, std::max<std::uint64_t>(default_seeds / 5, 1),
                                    std::chrono::seconds(15));
  for (const std::uint64_t seed : seeds) {
    SimRun r = make(seed);
    r.config.seed = seed;
    r.run();
    INFO("replay: " << sim::replay_command(seed, Catch::getResultCapture().getCurrentTestName()));
    INFO(r.failure);
    REQUIRE(r.failure.empty());
    check(r);
  }
}

// With batch, each data write and its guard are posted as one write_batch.
SimRun order_run(std::uint32_t members, bool batch = false) {
  SimRun r;
  r.scenario = "order";
  r.members = members;
  r.args = {{"duration_us", "1000"},
            {"settle_us", "200"},
            {"min_updates", "20"},
            {"batch", batch ? "1" : "0"}};
  return r;
}

}  // namespace

TEST_CASE(
    "sim conformance: writes to one peer are seen in order, data before guard, 2-4 members, single "
    "and batched",
    "[sim][conformance][order]") {
  std::uint64_t updates = 0, runs = 0, words = 0;
  explore(
      600,
      [](std::uint64_t seed) {
        // Seeds alternate in groups of three between single writes and batches.
        return order_run(2 + static_cast<std::uint32_t>(seed % 3), (seed / 3) % 2 == 1);
      },
      [&](const SimRun& r) {
        for (const auto& facts : r.results) {
          INFO(facts);
          CHECK(test::fact(facts, "sent") >= 20);
          CHECK(test::fact(facts, "observed") > 0);
          CHECK(test::fact(facts, "words_checked") ==
                (test::fact(facts, "observed") - test::fact(facts, "lapped")) * 32);
          words += static_cast<std::uint64_t>(test::fact(facts, "words_checked"));
          updates += static_cast<std::uint64_t>(test::fact(facts, "sent"));
        }
        ++runs;
      });
  // Across the seeds, the checker sees millions of data-then-guard updates.
  std::cout << "sim order: " << updates << " updates over " << runs << " seeds" << std::endl;
  CHECK(updates >= (runs >= 600 ? 1'000'000u : 1u));
  CHECK(words > 0);
}

TEST_CASE("sim conformance: a crashed member is suspected in time and the survivors go on",
          "[sim][conformance][kill]") {
  explore(
      300,
      [](std::uint64_t seed) {
        SimRun r = order_run(3 + static_cast<std::uint32_t>(seed % 2));
        r.victim = r.members - 1;
        r.args["victim"] = std::to_string(r.victim);
        return r;
      },
      [](const SimRun& r) {
        for (std::size_t i = 0; i + 1 < r.members; ++i) {
          INFO("member " << i << ": " << r.results[i]);
          const std::string prefix = "SUSPECT " + std::to_string(r.victim) + " crashed ";
          const std::string* line = nullptr;
          for (const auto& l : r.said[i]) {
            if (l.rfind(prefix, 0) == 0) line = &l;
          }
          REQUIRE(line != nullptr);
          const auto at = sim::Duration(std::stoll(line->substr(prefix.size())));
          CHECK(at - r.crashed_at <= r.config.suspicion_timeout + r.config.spike_latency +
                                         r.config.max_latency + r.config.max_step);
        }
      });
}

TEST_CASE("sim conformance: writes of 1 byte to the whole region land whole at both edges",
          "[sim][conformance][sizes]") {
  explore(
      8,
      [](std::uint64_t seed) {
        SimRun r;
        r.scenario = "sizes";
        r.big_bytes = std::size_t{4} << 20;
        r.config.channel_bytes = 8u << 20;
        r.faults = [seed](sim::Network& net) {
          net.slow(seed % 2, std::chrono::microseconds(net.rng().uniform(0, 200)));
        };
        return r;
      },
      // 1, 7, 64 B, 4 KiB, 64 KiB, 1 MiB, 4 MiB (the whole region), each at both edges.
      [](const SimRun& r) { CHECK(test::fact(r.results[0], "steps") == 14); });
}

TEST_CASE("sim conformance: blocks arrive in order with their immediates under back-pressure",
          "[sim][conformance][blocks]") {
  std::uint64_t retries = 0;
  explore(
      200,
      [](std::uint64_t) {
        SimRun r;
        r.scenario = "blocks";
        r.args = {{"count", "100"}, {"max_block", "1500"}, {"pause_ms", "0"}};
        r.config.channel_bytes = 4096;                            // small: the sender meets retry
        r.faults = [](sim::Network& net) { net.slow(1, 20us); };  // the slow consumer
        return r;
      },
      [&](const SimRun& r) {
        CHECK(test::fact(r.results[0], "blocks") == 100);
        CHECK(test::fact(r.results[1], "blocks") == 100);
        retries += static_cast<std::uint64_t>(test::fact(r.results[0], "retries"));
      });
  CHECK(retries > 0);
}

TEST_CASE("sim conformance: teardown and reconnect for a new view",
          "[sim][conformance][reconnect]") {
  explore(
      200,
      [](std::uint64_t) {
        SimRun r;
        r.scenario = "reconnect";
        r.members = 3;
        r.args = {{"resend_us", "100"}};
        return r;
      },
      [](const SimRun& r) {
        for (const auto& facts : r.results)
          CHECK(test::fact(facts, "disconnect_ms") == 0);
      });
}

TEST_CASE("sim conformance: a seed replays bit for bit", "[sim][conformance][determinism]") {
  auto run = [](std::uint64_t seed) {
    SimRun r = order_run(3);
    r.victim = 2;
    r.args["victim"] = std::to_string(r.victim);
    r.config.seed = seed;
    r.run();
    return r;
  };
  const auto a = run(42), b = run(42), c = run(43);
  REQUIRE(a.failure.empty());
  CHECK(a.trace == b.trace);
  CHECK(a.results == b.results);
  CHECK(a.said == b.said);
  CHECK(a.trace != c.trace);
}

// The in-memory deterministic transport's own fault model: crash and cut become suspicions
// within the timeout, and the status codes a crashed, cut or misused node gets. The contract
// properties over many seeds are the conformance suite (conformance_sim_test.cpp).
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/sim.hpp>

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

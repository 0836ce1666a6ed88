// One member of a multi-process SMC run. Protocol with the parent (one line each):
//   child -> "ready <port>"            after building its transport (tcp: port bound)
//   parent -> "go <group.yaml>"        once every child is ready and the file is written
//   child -> "done <delivered> <nulls> <sent>"  after everything was delivered everywhere
// Options: --transport K --id N --log FILE --ns NAME --timeout-ms T
//          --plan SG:COUNT:SPACING_US (repeatable)  --expect SG:TOTAL (repeatable)
// Exit 0 when every expected message was delivered before the timeout.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "group/view.hpp"
#include "test_node.hpp"
#include "transports.hpp"

namespace sg = spindle::group;
namespace tst = spindle::testing;
using namespace std::chrono_literals;

namespace {
std::pair<std::uint32_t, std::uint64_t> pair_of(const std::string& s, std::uint64_t* third) {
  const auto a = s.find(':');
  const auto b = s.find(':', a + 1);
  const auto sgi = static_cast<std::uint32_t>(std::stoul(s.substr(0, a)));
  const auto v = std::stoull(s.substr(a + 1, b == std::string::npos ? b : b - a - 1));
  if (third != nullptr) *third = b == std::string::npos ? 0 : std::stoull(s.substr(b + 1));
  return {sgi, v};
}
}  // namespace

int main(int argc, char** argv) {
  std::string kind = "tcp", log_file, ns = "smc";
  spindle::transport::NodeId id = 0;
  auto timeout = 60'000ms;
  std::vector<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>> plans;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> expect;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--transport")
      kind = v;
    else if (k == "--id")
      id = static_cast<spindle::transport::NodeId>(std::stoul(v));
    else if (k == "--log")
      log_file = v;
    else if (k == "--ns")
      ns = v;
    else if (k == "--timeout-ms")
      timeout = std::chrono::milliseconds(std::stoll(v));
    else if (k == "--plan") {
      std::uint64_t spacing = 0;
      auto [s, c] = pair_of(v, &spacing);
      plans.emplace_back(s, c, spacing);
    } else if (k == "--expect") {
      expect.push_back(pair_of(v, nullptr));
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  try {
    auto made = tst::make_transport(kind, id, ns);
    std::cout << "ready " << made.port << std::endl;
    std::string word, path;
    if (!(std::cin >> word >> path) || word != "go") return 3;
    const auto g = sg::load_group(path);
    tst::TestNode node(*made.transport, g, spindle::sst::steady_clock(), 1);
    for (auto [s, c, sp] : plans)
      node.plan(s, tst::SendPlan{c, std::chrono::microseconds(sp), 0});
    if (node.sst().connect(20'000ms) != spindle::transport::Status::ok) {
      std::cerr << "node " << id << ": connect failed\n";
      return 4;
    }
    node.loop().start();
    auto delivered_all = [&] {
      for (auto [s, total] : expect)
        if (node.delivered(s) < total) return false;
      return true;
    };
    while (std::chrono::steady_clock::now() < deadline) {
      const bool sent = node.send_some();
      if (node.sending_done() && delivered_all()) break;
      if (!sent) std::this_thread::yield();
    }
    bool ok = delivered_all();
    // Stay until everyone delivered everything (our counters may still be needed), then a
    // second phase so nobody leaves while a peer still waits for the first.
    node.request_barrier(1);
    while (ok && !node.barrier_reached(1) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    node.request_barrier(2);
    const auto grace = std::chrono::steady_clock::now() + 2s;
    while (ok && !node.barrier_reached(2) && std::chrono::steady_clock::now() < grace)
      std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);
    node.loop().stop();
    std::uint64_t delivered = 0, nulls = 0, sent = 0;
    for (std::uint32_t s = 0; s < g.subgroups.size(); ++s) {
      if (!node.smc().is_member(s)) continue;
      delivered += node.smc().stats(s).delivered;
      nulls += node.smc().stats(s).nulls;
      sent += node.smc().stats(s).sent;
    }
    if (!log_file.empty()) tst::write_log(log_file, node.log);
    std::cout << "done " << delivered << ' ' << nulls << ' ' << sent << std::endl;
    made.transport->disconnect();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "node " << id << ": " << e.what() << '\n';
    return 2;
  }
}

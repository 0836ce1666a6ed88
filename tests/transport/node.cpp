// transport_node: one member of a multi-process conformance test, the process driver of
// the scenarios in scenarios.hpp. The test process spawns 2-4 of these (support.hpp Child)
// and talks to each over stdin/stdout:
//
//   node   -> test   READY <id> <host> <port>
//   test   -> node   MEMBERS <n> (<id> <host> <port>)...
//   node   -> test   STREAMING | SUSPECT <peer> <reason> <steady_ns> <detail>
//                    | OK <facts> teardown_ms=<ms> | FAIL <why>
//
// usage: transport_node <tcp|shm|auto|rdma> <scenario> <id> [key=value...]
// Each part of the scenario runs on its own thread (part 0 on the main one), spinning
// briefly and then sleeping on the transport's wake-up source. Every wait is bounded; a
// node that cannot finish prints FAIL and exits 1.
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spindle/transport/idle_waiter.hpp>
#if SPINDLE_HAVE_SHM
#include <spindle/transport/auto.hpp>
#endif

#include "scenarios.hpp"
#include "support.hpp"

namespace st = spindle::transport;
namespace test = spindle::transport::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::mutex g_out;

void say(const std::string& line) {
  std::lock_guard lock(g_out);
  std::cout << line << std::endl;
}

[[noreturn]] void fail(const std::string& why) {
  say("FAIL " + why);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: transport_node <tcp|shm|auto|rdma> <scenario> <id> [key=value...]\n";
    return 2;
  }
  const std::string kind = argv[1];
  const std::string scenario_name = argv[2];
  test::Member m;
  m.id = static_cast<st::NodeId>(std::strtoul(argv[3], nullptr, 10));
  for (int i = 4; i < argc; ++i) {
    const std::string kv = argv[i];
    if (auto eq = kv.find('='); eq != std::string::npos)
      m.args[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  test::NodeOptions opts;
  opts.suspicion_timeout = std::chrono::milliseconds(m.arg("suspicion_ms", 500));
  if (const char* ns = std::getenv("SPINDLE_SHM_NAMESPACE")) opts.shm_namespace = ns;
  // auto: odd ids give another loopback address (another host, as far as auto can tell),
  // so the cluster mixes pairs over shared memory (even with even, odd with odd) and pairs
  // over tcp (even with odd).
  if (kind == "auto" && m.id % 2 == 1) opts.host = test::kAutoFarHost;

  std::unique_ptr<st::Transport> transport;
  st::NodeAddress self;
  try {
    auto made = test::make_transport(kind, m.id, opts);
    transport = std::move(made.transport);
    self = made.address;
    test::create_regions(*transport, std::size_t{8} << 20);
  } catch (const std::exception& e) {
    fail(std::string("setup: ") + e.what());
  }
  say("READY " + std::to_string(m.id) + " " + (self.host.empty() ? "-" : self.host) + " " +
      std::to_string(self.port));

  std::string line;
  if (!std::getline(std::cin, line)) fail("no MEMBERS line");
  std::istringstream in(line);
  std::string word;
  std::size_t count = 0;
  in >> word >> count;
  for (std::size_t i = 0; i < count; ++i) {
    st::NodeAddress a;
    in >> a.id >> a.host >> a.port;
    if (a.host == "-") a.host.clear();
    m.view.push_back(a);
  }
  if (const auto s = transport->connect(m.view, 1, 10s); s != st::Status::ok) {
    fail("connect: " + std::string(st::to_string(s)));
  }
#if SPINDLE_HAVE_SHM
  // auto: the mix this cluster was built for, or the run proves nothing about it.
  if (const auto* a = dynamic_cast<const st::AutoTransport*>(transport.get())) {
    for (const auto& peer : m.view) {
      const bool near = peer.id % 2 == m.id % 2;
      if (peer.id != m.id && a->over_shm(peer.id) != near)
        fail("auto: node " + std::to_string(peer.id) + " reached over " + (near ? "tcp" : "shm") +
             ", expected " + (near ? "shm" : "tcp"));
    }
  }
#endif

  m.t = transport.get();
  m.now = [] { return Clock::now().time_since_epoch(); };
  m.say = say;
  m.pause = [](std::chrono::nanoseconds d) { std::this_thread::sleep_for(d); };
  std::unique_ptr<test::Scenario> scenario;
  try {
    scenario = test::make_scenario(scenario_name, m);
  } catch (const std::exception& e) {
    fail(e.what());
  }

  auto run_part = [&](std::size_t part) {
    st::IdleWaiter waiter(*transport, st::IdlePolicy{50us, 5ms});
    while (!scenario->done())
      waiter.step([&] { return scenario->step(part); });
  };
  std::vector<std::jthread> writers;
  for (std::size_t p = 1; p < scenario->parts(); ++p)
    writers.emplace_back(run_part, p);
  run_part(0);
  writers.clear();  // joins
  if (!scenario->failure().empty()) fail(scenario->failure());

  const auto start = Clock::now();
  transport->disconnect();
  transport.reset();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  say("OK " + scenario->result() + " teardown_ms=" + std::to_string(ms.count()));
  return 0;
}

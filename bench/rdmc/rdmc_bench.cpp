// RDMC throughput (issue 21's benchmark, first form): one sender multicasts messages of a
// given size back to back to 1 … R receivers over tcp or shm, every node a thread of this
// process, and the per-receiver throughput is reported beside one unicast of the same size
// (the same transfer code with one receiver) measured in the same run — the RDMC paper's
// claim is replicas for nearly the price of one. Lines in the peers' format
// (../shared/peers): "peer=spindle transport=… size=… subs=… metric=… value=…". A cell
// where the nodes outnumber the cores says so (over_cores=1): judge ratios only where
// they do not.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "rdmc/rdmc.hpp"
#include "transports.hpp"

namespace rdmc = spindle::rdmc;
namespace tst = spindle::testing;
using Clock = std::chrono::steady_clock;
using spindle::transport::NodeId;

namespace {

std::vector<std::uint64_t> parse_list(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    out.push_back(std::stoull(item));
  return out;
}

// Bytes per second each receiver took (the slowest), or 0 on failure.
double run(const std::string& kind, std::size_t size, std::uint32_t receivers,
           const rdmc::Settings& settings, std::chrono::milliseconds duration) {
  const std::string ns = "rdmcb" + std::to_string(::getpid()) + kind;
  std::vector<tst::Made> made;
  std::vector<spindle::transport::NodeAddress> members;
  std::vector<NodeId> group;
  for (NodeId id = 1; id <= receivers + 1; ++id) {
    made.push_back(tst::make_transport(kind, id, ns));
    members.push_back({id, "127.0.0.1", made.back().port});
    group.push_back(id);
  }
  const std::size_t n = made.size();
  std::vector<std::unique_ptr<rdmc::Rdmc>> nodes;
  std::vector<std::atomic<std::uint64_t>> taken(n);
  std::atomic<bool> failed{false};
  for (std::size_t i = 0; i < n; ++i) {
    rdmc::Callbacks cb;
    cb.delivered = [&, i](rdmc::GroupId g, std::uint64_t seq, std::span<const std::byte> b) {
      if (i != 0) taken[i] += b.size();
      nodes[i]->release(g, seq);
    };
    cb.failed = [&](NodeId, const std::string& why) {
      std::cerr << "rdmc_bench: " << why << '\n';
      failed = true;
    };
    nodes.push_back(std::make_unique<rdmc::Rdmc>(
        *made[i].transport, 1, std::vector<std::vector<NodeId>>{group}, settings, cb));
  }
  {
    std::vector<std::thread> connecting;
    for (auto& m : made)
      connecting.emplace_back(
          [&, t = m.transport.get()] { (void)t->connect(members, 1, std::chrono::seconds(10)); });
    for (auto& th : connecting)
      th.join();
  }
  const std::vector<std::byte> message(size, std::byte{0x5a});
  std::atomic<bool> stop{false};
  std::atomic<bool> sending{true};
  std::vector<std::thread> loops;
  for (std::size_t i = 0; i < n; ++i) {
    loops.emplace_back([&, i] {
      auto& r = *nodes[i];
      auto& t = *made[i].transport;
      r.start();
      std::vector<spindle::transport::Event> events;
      while (!stop) {
        events.clear();
        t.poll(events);
        for (const auto& e : events)
          r.on_event(e);
        bool did = !events.empty();
        if (i == 0 && sending && r.send(0, message)) did = true;
        did = r.poll() || did;
        if (!did) std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    });
  }
  // Warm-up: the first message everywhere; then measure over `duration`.
  auto slowest = [&] {
    std::uint64_t m = UINT64_MAX;
    for (std::size_t i = 1; i < n; ++i)
      m = std::min(m, taken[i].load());
    return m;
  };
  const auto give_up = Clock::now() + std::chrono::seconds(60);
  while (slowest() < size && Clock::now() < give_up && !failed)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = Clock::now();
  const auto base = slowest();
  std::this_thread::sleep_for(duration);
  const auto bytes = slowest() - base;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  sending = false;
  stop = true;
  for (auto& th : loops)
    th.join();
  for (auto& m : made)
    m.transport->disconnect();
  return failed ? 0.0 : static_cast<double>(bytes) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"RDMC per-receiver throughput against one unicast of the same size"};
  std::string transports = "tcp,shm";
  std::string sizes = "1048576,16777216";
  std::string receivers = "1,2,3";
  std::string algorithm = "binomial_pipeline";
  std::uint32_t block = 1u << 20;
  std::uint32_t duration_ms = 2000;
  app.add_option("--transport", transports, "comma-separated: tcp, shm");
  app.add_option("--sizes", sizes, "message sizes in bytes, comma-separated");
  app.add_option("--receivers", receivers, "receiver counts, comma-separated (1 is the reference)");
  app.add_option("--algorithm", algorithm, "sequential, chain, binomial_tree, binomial_pipeline");
  app.add_option("--block-size", block, "bytes per block (a multiple of 64)");
  app.add_option("--duration-ms", duration_ms, "measured time per cell");
  CLI11_PARSE(app, argc, argv);
  const auto a = rdmc::parse_algorithm(algorithm);
  if (!a) {
    std::cerr << "rdmc_bench: --algorithm " << algorithm << ": not an algorithm\n";
    return 2;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::stringstream kinds(transports);
  std::string kind;
  while (std::getline(kinds, kind, ',')) {
    for (auto size : parse_list(sizes)) {
      rdmc::Settings s;
      s.algorithm = *a;
      s.block_size = block;
      s.group_bytes = std::max<std::size_t>(s.group_bytes, 4 * size);
      double unicast = 0;
      for (auto r : parse_list(receivers)) {
        const double bps = run(kind, size, static_cast<std::uint32_t>(r), s,
                               std::chrono::milliseconds(duration_ms));
        if (r == 1) unicast = bps;
        const std::string head = "peer=spindle transport=" + kind +
                                 " size=" + std::to_string(size) + " subs=" + std::to_string(r);
        const std::string tail = " algorithm=" + algorithm + " block=" + std::to_string(block) +
                                 " over_cores=" + (r + 1 > cores ? "1" : "0");
        std::cout << head << " metric=rdmc_throughput_MBps value=" << bps / 1e6 << tail << '\n';
        if (unicast > 0)
          std::cout << head << " metric=rdmc_ratio_to_unicast value=" << bps / unicast << tail
                    << '\n';
      }
    }
  }
  return 0;
}

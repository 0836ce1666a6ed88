// SMC across 2-4 real processes on loopback, once per built transport (tcp, shm): every
// process logs what it sent and delivered; the delivery-log checker then proves identical
// order, per-sender FIFO, no gap, no duplicate, no null delivered. Every wait is bounded.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "delivery_log.hpp"
#include "group/view.hpp"
#include "process.hpp"
#include "test_node.hpp"
#include "transports.hpp"

namespace sg = spindle::group;
namespace tst = spindle::testing;
using namespace std::chrono_literals;

namespace {

struct Config {
  std::string name;
  std::uint32_t processes = 2;
  std::vector<sg::Subgroup> subgroups;                 // members/senders as ranks 0..n-1
  std::vector<std::vector<std::uint64_t>> counts;      // [subgroup][sender k]
  std::vector<std::vector<std::uint64_t>> spacing_us;  // optional, same shape
};

std::vector<std::string> run(const Config& c, const std::string& kind) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("spindle-smc-" + std::to_string(::getpid()) + "-" + kind + "-" + c.name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  sg::View g;
  g.knobs.heartbeat_interval = 200ms;
  g.knobs.suspicion_timeout = 10'000ms;
  for (std::uint32_t i = 0; i < c.processes; ++i)
    g.members.push_back(sg::Member{100 + i, "127.0.0.1", 0});
  g.subgroups = c.subgroups;
  for (auto& s : g.subgroups) {
    for (auto& m : s.members)
      m += 100;
    for (auto& m : s.senders)
      m += 100;
  }
  std::vector<std::unique_ptr<tst::Process>> procs;
  const std::string exe = tst::self_dir() + "/smc_node";
  for (std::uint32_t i = 0; i < c.processes; ++i) {
    std::vector<std::string> argv{exe,
                                  "--transport",
                                  kind,
                                  "--id",
                                  std::to_string(100 + i),
                                  "--log",
                                  tst::log_path(dir, i).string(),
                                  "--ns",
                                  "smc" + std::to_string(::getpid()) + c.name,
                                  "--timeout-ms",
                                  "60000"};
    for (std::uint32_t s = 0; s < g.subgroups.size(); ++s) {
      const auto& sub = g.subgroups[s];
      std::uint64_t total = 0;
      for (auto n : c.counts[s])
        total += n;
      for (std::size_t k = 0; k < sub.senders.size(); ++k) {
        if (sub.senders[k] != 100 + i) continue;
        const auto sp = c.spacing_us.empty() ? 0 : c.spacing_us[s][k];
        argv.push_back("--plan");
        argv.push_back(std::to_string(s) + ":" + std::to_string(c.counts[s][k]) + ":" +
                       std::to_string(sp));
      }
      if (std::find(sub.members.begin(), sub.members.end(), 100 + i) != sub.members.end()) {
        argv.push_back("--expect");
        argv.push_back(std::to_string(s) + ":" + std::to_string(total));
      }
    }
    procs.push_back(std::make_unique<tst::Process>(argv));
  }
  std::vector<std::string> errors;
  for (std::uint32_t i = 0; i < c.processes; ++i) {
    auto line = procs[i]->read_line(deadline);
    if (!line || line->rfind("ready ", 0) != 0) return {"node " + std::to_string(i) + " not ready"};
    g.members[i].port = static_cast<std::uint16_t>(std::stoul(line->substr(6)));
  }
  const auto file = dir / "group.yaml";
  std::ofstream(file) << sg::to_yaml(g);
  for (auto& p : procs)
    p->send("go " + file.string());
  errors = tst::wait_all(procs, deadline);
  if (!errors.empty()) return errors;
  const auto logs = tst::read_logs(dir, c.processes);
  errors = tst::check(tst::specs_of(g), logs, true);
  std::size_t delivered = 0;
  for (const auto& l : logs)
    delivered += l.delivered.size();
  if (delivered == 0) errors.push_back("nothing was delivered");
  UNSCOPED_INFO(kind << " " << c.name << ": " << delivered << " deliveries checked");
  // The same verdict from the command-line checker.
  std::vector<std::string> check_argv{tst::self_dir() + "/smc_delivery_check", file.string()};
  for (std::uint32_t i = 0; i < c.processes; ++i)
    check_argv.push_back(tst::log_path(dir, i).string());
  tst::Process checker(check_argv);
  const int check_rc = checker.wait(deadline);
  if (errors.empty() && check_rc != 0)
    errors.push_back("smc_delivery_check exited with " + std::to_string(check_rc));
  if (errors.empty()) std::filesystem::remove_all(dir);
  return errors;
}

sg::Subgroup sub(std::vector<std::uint32_t> members, std::vector<std::uint32_t> senders,
                 std::uint32_t w, std::uint32_t payload, sg::Ordering o = sg::Ordering::atomic) {
  return sg::Subgroup{"s", std::move(members), std::move(senders), w, payload, o};
}

void check_all_transports(const Config& c) {
  const auto kinds = tst::available_transports();
  if (kinds.empty()) WARN("no multi-process transport built yet");
  for (const auto& kind : kinds) {
    INFO("transport " << kind << ", config " << c.name);
    const auto errors = run(c, kind);
    for (const auto& e : errors)
      INFO(e);
    CHECK(errors.empty());
  }
}

}  // namespace

TEST_CASE("smc processes: 2 processes, all senders, window 1, payloads up to 8 B",
          "[smc][multiproc]") {
  check_all_transports(Config{"w1", 2, {sub({0, 1}, {0, 1}, 1, 8)}, {{300, 300}}, {}});
}

TEST_CASE("smc processes: 3 processes, 2 overlapping subgroups, half senders, window 7",
          "[smc][multiproc]") {
  check_all_transports(Config{"overlap",
                              3,
                              {sub({0, 1, 2}, {1}, 7, 1000), sub({0, 2}, {0, 2}, 13, 64)},
                              {{1000}, {800, 800}},
                              {}});
}

TEST_CASE("smc processes: 4 processes, 3 subgroups, one sender, window 1000, 10 KB slots",
          "[smc][multiproc]") {
  check_all_transports(Config{"big",
                              4,
                              {sub({0, 1, 2, 3}, {3}, 1000, 10240), sub({0, 1}, {0, 1}, 5, 128),
                               sub({1, 2, 3}, {1, 2, 3}, 50, 1)},
                              {{2500}, {500, 500}, {400, 400, 400}},
                              {}});
}

TEST_CASE("smc processes: unordered mode and a 100 us-slowed sender", "[smc][multiproc]") {
  check_all_transports(Config{"slow",
                              3,
                              {sub({0, 1, 2}, {0, 1, 2}, 20, 512),
                               sub({0, 1, 2}, {0, 2}, 30, 256, sg::Ordering::unordered)},
                              {{600, 600, 30}, {500, 500}},
                              {{0, 0, 100}, {0, 0}}});
}

TEST_CASE("smc processes: 4 processes, all senders, 10 KB slots, window 100", "[smc][multiproc]") {
  check_all_transports(
      Config{"all4", 4, {sub({0, 1, 2, 3}, {0, 1, 2, 3}, 100, 10240)}, {{400, 400, 400, 400}}, {}});
}

TEST_CASE("smc processes: 2 processes, a silent sender and one sending 3000 messages",
          "[smc][multiproc]") {
  check_all_transports(Config{"silent", 2, {sub({0, 1}, {0, 1}, 3, 300)}, {{0, 3000}}, {}});
}

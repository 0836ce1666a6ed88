// bench_membership: what a view change costs, measured with real member processes on
// loopback (tests/group/group_member), per transport and group size:
//   failover_ms   from the SIGKILL of one member (the leader in half of the runs) to the
//                 new view installed at every survivor (each reports its writer's matched
//                 count dropping, on the steady clock this process reads too)
//   join_ms       from a participant's construction to its endpoints matched, for each
//                 member that joins the running domain (no member list: the join port)
//   idle_cpu_pct  CPU of the whole idle domain (every member, no writes) over --idle-ms,
//                 in percent of one core
// Lines in the peers' format (../shared/peers), p50 and p99 over --runs runs:
//   peer=spindle transport=<t> size=0 subs=<members> metric=<name> value=<x>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "process.hpp"
#include "transports.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// CPU seconds (user + system) a process has used so far.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all;
  std::getline(in, all);
  const auto close = all.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream f(all.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && f >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

struct Cell {
  std::vector<double> failover_ms, join_ms, idle_pct;
  std::string error;
};

// One run: `members` participants join one by one, then stream; one is SIGKILLed.
void run_once(const std::string& kind, std::uint32_t members, bool kill_leader, int run,
              std::chrono::milliseconds idle, Cell& cell) {
  const std::string name =
      "spindle-bm-" + std::to_string(::getpid()) + "-" + kind + "-" + std::to_string(run);
  const auto dir = fs::temp_directory_path() / name;
  fs::create_directories(dir);
  const auto file = dir / "domain.yaml";
  {
    std::ofstream out(file);
    out << "version: 1\ndomain_id: 11\ntransport: " << kind
        << "\njoin_port: " << tst::free_loopback_port() << "\nshm: {namespace: " << name << "}\n";
  }
  const auto deadline = Clock::now() + 60s;
  std::vector<std::unique_ptr<tst::Process>> procs;
  auto next_line = [&](tst::Process& p, const std::string& word) -> std::string {
    while (auto line = p.read_line(deadline)) {
      if (line->rfind(word, 0) == 0) return *line;
      if (line->rfind("FAIL", 0) == 0 || line->rfind("halted", 0) == 0) return *line;
    }
    return "";
  };
  // Members join one at a time (each matches everyone before the next starts).
  for (std::uint32_t i = 1; i <= members; ++i) {
    procs.push_back(std::make_unique<tst::Process>(std::vector<std::string>{
        SPINDLE_GROUP_MEMBER, "--config", file.string(), "--node", std::to_string(i), "--log",
        (dir / ("log" + std::to_string(i))).string(), "--writer", "--samples", "1000000",
        "--members", std::to_string(i), "--writers", std::to_string(i), "--interval-us", "2000",
        "--timeout-ms", "60000"}));
    const auto ready = next_line(*procs.back(), "ready");
    if (ready.rfind("ready ", 0) != 0) {
      cell.error = kind + ": member " + std::to_string(i) + " did not get ready: '" + ready +
                   "', exit status " + std::to_string(procs.back()->wait(Clock::now() + 1s));
      return;
    }
    if (i > 1) cell.join_ms.push_back(std::stod(ready.substr(6)));
  }
  // Idle: nobody writes yet.
  std::vector<double> before;
  for (auto& p : procs)
    before.push_back(cpu_seconds(p->pid()));
  std::this_thread::sleep_for(idle);
  double used = 0;
  for (std::size_t k = 0; k < procs.size(); ++k)
    used += cpu_seconds(procs[k]->pid()) - before[k];
  cell.idle_pct.push_back(100.0 * used / (static_cast<double>(idle.count()) / 1000.0));
  for (auto& p : procs)
    p->send("go");
  std::this_thread::sleep_for(200ms);
  const std::size_t victim = kill_leader ? 0 : procs.size() - 1;
  const std::int64_t t0 = steady_ns();
  ::kill(procs[victim]->pid(), SIGKILL);
  (void)procs[victim]->wait(deadline);
  std::int64_t last = 0;
  for (std::size_t k = 0; k < procs.size(); ++k) {
    if (k == victim) continue;
    // Members report their matched count once they stream, then each change: the one
    // that counts is the drop to members - 1.
    const std::string drop = "view " + std::to_string(members - 1) + " ";
    std::string view;
    do {
      view = next_line(*procs[k], "view");
    } while (!view.empty() && view.rfind("view ", 0) == 0 && view.rfind(drop, 0) != 0);
    std::istringstream f(view);
    std::string word;
    int count = 0;
    std::int64_t at = 0;
    if (!(f >> word >> count >> at) || word != "view") {
      cell.error = kind + ": survivor " + std::to_string(k + 1) + " reported no view: " + view;
      break;
    }
    last = std::max(last, at);
  }
  if (cell.error.empty()) cell.failover_ms.push_back(static_cast<double>(last - t0) / 1e6);
  for (std::size_t k = 0; k < procs.size(); ++k)
    if (k != victim) procs[k]->send("exit");
  for (std::size_t k = 0; k < procs.size(); ++k)
    if (k != victim) (void)procs[k]->wait(deadline);
  fs::remove_all(dir);
}

void print(const std::string& kind, std::uint32_t members, const std::string& metric,
           double value) {
  std::printf("peer=spindle transport=%s size=0 subs=%u metric=%s value=%.3f\n", kind.c_str(),
              members, metric.c_str(), value);
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"view-change costs: failover, join, idle CPU"};
  int runs = 50;
  std::vector<std::uint32_t> sizes{3, 5};
  std::vector<std::string> kinds = tst::available_transports();
  int idle_ms = 2000;
  app.add_option("--runs", runs, "runs per cell")->check(CLI::Range(1, 10000));
  app.add_option("--members", sizes, "group sizes")->check(CLI::Range(2, 16))->delimiter(',');
  app.add_option("--transports", kinds, "transports")->delimiter(',');
  app.add_option("--idle-ms", idle_ms, "idle CPU window")->check(CLI::Range(100, 60000));
  CLI11_PARSE(app, argc, argv);
  int status = 0;
  for (const auto& kind : kinds) {
    for (auto n : sizes) {
      Cell cell;
      for (int r = 0; r < runs && cell.error.empty(); ++r)
        run_once(kind, n, r % 2 == 1, r, std::chrono::milliseconds(idle_ms), cell);
      if (!cell.error.empty()) {
        std::cerr << "bench_membership: " << cell.error << '\n';
        status = 1;
        continue;
      }
      print(kind, n, "failover_ms_p50", percentile(cell.failover_ms, 0.5));
      print(kind, n, "failover_ms_p99", percentile(cell.failover_ms, 0.99));
      print(kind, n, "join_ms_p50", percentile(cell.join_ms, 0.5));
      print(kind, n, "join_ms_p99", percentile(cell.join_ms, 0.99));
      print(kind, n, "idle_cpu_pct_p50", percentile(cell.idle_pct, 0.5));
    }
  }
  return status;
}

// gateway_bench: what spindle-gateway costs, as a ratio to Cyclone DDS alone, measured in
// one run (docs/dev/interop-bench.md; STYLE 15).
//
//   cyclone  gw_ping ─RTPS domain 1─► gw_pong                      (the reference)
//   spindle  gw_ping_spindle ─Spindle domain 1─► gw_pong_spindle   (the Spindle leg alone)
//   gateway  gw_ping ─RTPS domain 0─► spindle-gateway ─Spindle domain 0─► gw_pong_spindle
//
// gw_ping and gw_pong are plain Cyclone DDS C programs, gw_ping_spindle and gw_pong_spindle
// Spindle applications through the standard API; all use GatewayBench.idl (each DDS's own
// idlc), and the gateway loads the same file at run time. A round trip on the gateway path
// crosses the gateway twice (ping in, echo out), and is a Cyclone leg plus a Spindle leg
// plus the gateway's own work; the spindle path measures the Spindle leg alone, so
// gateway - cyclone - spindle is what the gateway itself adds. Latency: back-to-back round
// trips, each timed by the ping (median, p99). Throughput: the ping writes for --seconds as
// fast as reliable KEEP_ALL lets it with at most a window of samples unacknowledged
// (--window-bytes; the pong acknowledges every quarter window), samples/s and MB/s from the
// first write to the last acknowledgement. Each repetition measures every size on all paths
// back to back; the ratios are of the medians over repetitions.
//
// Everything runs in network (and user, mount) namespaces of the process's own, with
// multicast on loopback for Cyclone's discovery; every wait is bounded. Lines:
//
//   bench=gateway path=<cyclone|spindle|gateway> size=<payload octets> rep=<r> metric=<m> value=<x>
//   bench=gateway size=<s> metric=<m> value=<x>       (medians, ratios, the target)
//
// Usage: gateway_bench [--sizes 64,10240] [--round-trips 2000] [--seconds 3] [--reps 3]
//                      [--window-bytes 1048576] [--smoke]
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "namespaces.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::vector<uint32_t> sizes{64, 10240};
  uint32_t round_trips = 2000;
  double seconds = 3;
  uint32_t reps = 3;
  uint32_t window_bytes = 1 << 20;
  bool smoke = false;
};

[[noreturn]] void die(const std::string& why) {
  std::cout << "bench=gateway metric=failed why=\"" << why << "\"" << std::endl;
  std::exit(1);
}

// "key=value key=value ..." after the first word.
std::map<std::string, double> fields(const std::string& line) {
  std::map<std::string, double> out;
  std::istringstream is(line);
  std::string word;
  is >> word;
  while (is >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    out[word.substr(0, eq)] = std::strtod(word.c_str() + eq + 1, nullptr);
  }
  return out;
}

// Waits for `want` at the start of a line; the lines before it are returned in `seen`.
std::string expect(tst::Process& p, const std::string& who, const std::string& want,
                   std::chrono::seconds limit) {
  std::string seen;
  for (auto deadline = Clock::now() + limit; Clock::now() < deadline;) {
    const auto line = p.read_line(deadline);
    if (!line) break;
    if (line->find(want) != std::string::npos) return *line;
    if (line->rfind("FAIL", 0) == 0) die(who + ": " + *line);
    seen += *line + " | ";
  }
  die(who + ": no '" + want + "' within " + std::to_string(limit.count()) + " s; " + seen);
}

// CPU seconds a process used so far (utime + stime of /proc/PID/stat).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream is(stat.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && is >> f; ++i) {
    if (i == 14) utime = std::strtod(f.c_str(), nullptr);
    if (i == 15) stime = std::strtod(f.c_str(), nullptr);
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Results by path, size and metric, one value per repetition.
using Results =
    std::map<std::string, std::map<uint32_t, std::map<std::string, std::vector<double>>>>;

void record(Results& res, const std::string& path, uint32_t size, uint32_t rep,
            const std::string& metric, double value) {
  res[path][size][metric].push_back(value);
  std::cout << "bench=gateway path=" << path << " size=" << size << " rep=" << rep
            << " metric=" << metric << " value=" << value << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "gateway_bench: spindle-gateway's round trip and throughput as a ratio to "
      "Cyclone DDS to Cyclone DDS, measured in the same run (docs/dev/interop-bench.md)"};
  app.add_option("--sizes", o.sizes, "payload octets")
      ->delimiter(',')
      ->check(CLI::Range(0u, 1u << 20));
  app.add_option("--round-trips", o.round_trips, "round trips per latency run")
      ->check(CLI::Range(10u, 10000000u));
  app.add_option("--seconds", o.seconds, "seconds per throughput run")
      ->check(CLI::Range(0.1, 600.0));
  app.add_option("--reps", o.reps, "repetitions")->check(CLI::Range(1u, 100u));
  app.add_option("--window-bytes", o.window_bytes,
                 "throughput: payload octets written and not yet acknowledged, at most")
      ->check(CLI::Range(1u << 10, 1u << 30));
  app.add_flag("--smoke", o.smoke, "64 B, 300 round trips, 0.5 s, one repetition");
  CLI11_PARSE(app, argc, argv);
  if (o.smoke) {
    o.sizes = {64};
    o.round_trips = 300;
    o.seconds = 0.5;
    o.reps = 1;
  }

  if (const auto why = tst::enter_namespaces(); !why.empty()) {
    std::fprintf(stderr, "gateway_bench: skipped: %s\n", why.c_str());
    return 77;
  }
  // Cyclone DDS finds its peers by multicast: loopback must carry it.
  if (!tst::run_quietly(tst::ip_tool() + " link set lo multicast on")) {
    std::fprintf(stderr, "gateway_bench: skipped: cannot turn on multicast on loopback\n");
    return 77;
  }
  ::unsetenv("SPINDLE_CONFIG");
  ::unsetenv("CYCLONEDDS_URI");
  std::string pattern = std::string(std::getenv("SPINDLE_TEST_SCRATCH") != nullptr
                                        ? std::getenv("SPINDLE_TEST_SCRATCH")
                                        : "/tmp") +
                        "/gateway_bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) die("mkdtemp " + pattern);
  const std::string dir = pattern;
  ::setenv("XDG_STATE_HOME", dir.c_str(), 1);
  const std::string config = dir + "/gateway.yaml";
  {
    std::ofstream y(config);
    const char* qos = "qos: {reliability: reliable, history: all}";
    y << "spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [" << GW_BENCH_IDL << "]\ntopics:\n"
      << "  - {name: GatewayBenchPing, type: GatewayBench::Sample, direction: to_spindle, " << qos
      << "}\n"
      << "  - {name: GatewayBenchPong, type: GatewayBench::Sample, direction: to_rtps, " << qos
      << "}\n";
  }

  std::cout << "# gateway_bench: " << std::thread::hardware_concurrency() << " CPUs, load "
            << loadavg() << "; round trips " << o.round_trips << ", throughput " << o.seconds
            << " s, window " << o.window_bytes << " B, reps " << o.reps << std::endl;
  auto ref_pong = std::make_unique<tst::Process>(std::vector<std::string>{GW_PONG, "1"});
  auto sp_pong = std::make_unique<tst::Process>(std::vector<std::string>{GW_PONG_SPINDLE, "0"});
  auto sp_ref_pong = std::make_unique<tst::Process>(std::vector<std::string>{GW_PONG_SPINDLE, "1"});
  expect(*ref_pong, "gw_pong", "ready", 30s);
  expect(*sp_pong, "gw_pong_spindle", "ready", 60s);
  expect(*sp_ref_pong, "gw_pong_spindle (domain 1)", "ready", 60s);
  auto gateway = std::make_unique<tst::Process>(std::vector<std::string>{
      "/bin/sh", "-c", "exec " SPINDLE_GATEWAY " --config " + config + " 2>&1"});
  expect(*gateway, "spindle-gateway", ": ready (", 60s);
  tst::Process ref_ping({GW_PING, "1"});
  tst::Process gw_ping({GW_PING, "0"});
  tst::Process sp_ping({GW_PING_SPINDLE, "1"});
  expect(ref_ping, "gw_ping (reference)", "ready", 70s);
  expect(gw_ping, "gw_ping (gateway)", "ready", 70s);
  expect(sp_ping, "gw_ping_spindle", "ready", 70s);
  const std::vector<std::pair<std::string, tst::Process*>> paths{
      {"cyclone", &ref_ping}, {"spindle", &sp_ping}, {"gateway", &gw_ping}};

  Results res;
  const auto lat_limit = std::chrono::seconds(60 + o.round_trips / 100);
  const auto thr_limit = std::chrono::seconds(40 + static_cast<int>(o.seconds));
  for (uint32_t rep = 1; rep <= o.reps; ++rep) {
    for (const uint32_t size : o.sizes) {
      for (const auto& [path, ping] : paths) {
        const bool via_gw = path == "gateway";
        const double gw0 = cpu_seconds(gateway->pid());
        const auto t0 = Clock::now();
        ping->send("lat " + std::to_string(size) + " " + std::to_string(o.round_trips));
        auto f = fields(expect(*ping, "ping " + path, "lat ", lat_limit));
        record(res, path, size, rep, "rtt_us_p50", f["p50_us"]);
        record(res, path, size, rep, "rtt_us_p99", f["p99_us"]);
        if (via_gw) {
          const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
          record(res, path, size, rep, "gateway_cpu_pct_lat",
                 100 * (cpu_seconds(gateway->pid()) - gw0) / wall);
        }
      }
      for (const auto& [path, ping] : paths) {
        const bool via_gw = path == "gateway";
        const uint32_t window =
            std::max<uint32_t>(4, o.window_bytes / std::max<uint32_t>(size, 64));
        const double gw0 = cpu_seconds(gateway->pid());
        const auto t0 = Clock::now();
        std::ostringstream cmd;
        cmd << "thr " << size << " " << o.seconds << " " << window;
        ping->send(cmd.str());
        auto f = fields(expect(*ping, "ping " + path, "thr ", thr_limit));
        record(res, path, size, rep, "throughput_msgs_s", f["samples_per_s"]);
        record(res, path, size, rep, "throughput_MBps", f["MBps"]);
        if (via_gw) {
          const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
          record(res, path, size, rep, "gateway_cpu_pct_thr",
                 100 * (cpu_seconds(gateway->pid()) - gw0) / wall);
        }
      }
    }
  }

  // Medians over the repetitions, the ratios and the target: the gateway adds at
  // most one Cyclone round trip (gateway p50 - Cyclone p50 <= Cyclone p50).
  std::cout << "# medians over " << o.reps << " repetition(s); load " << loadavg() << std::endl;
  for (const uint32_t size : o.sizes) {
    auto med = [&](const std::string& path, const std::string& m) {
      return median(res[path][size][m]);
    };
    auto line = [&](const std::string& m, double v) {
      std::cout << "bench=gateway size=" << size << " metric=" << m << " value=" << v << std::endl;
    };
    for (const char* m : {"rtt_us_p50", "rtt_us_p99", "throughput_msgs_s", "throughput_MBps"}) {
      line(std::string("cyclone_") + m, med("cyclone", m));
      line(std::string("spindle_") + m, med("spindle", m));
      line(std::string("gateway_") + m, med("gateway", m));
    }
    line("rtt_p50_ratio", med("gateway", "rtt_us_p50") / med("cyclone", "rtt_us_p50"));
    line("rtt_p99_ratio", med("gateway", "rtt_us_p99") / med("cyclone", "rtt_us_p99"));
    line("throughput_ratio",
         med("gateway", "throughput_msgs_s") / med("cyclone", "throughput_msgs_s"));
    const double added = med("gateway", "rtt_us_p50") - med("cyclone", "rtt_us_p50");
    line("added_rtt_us_p50", added);
    // The gateway's own work: its path less a Cyclone leg and a Spindle leg.
    line("gateway_own_rtt_us_p50", added - med("spindle", "rtt_us_p50"));
    line("target_added_le_one_cyclone_rtt", added <= med("cyclone", "rtt_us_p50") ? 1 : 0);
    line("gateway_cpu_pct_lat", med("gateway", "gateway_cpu_pct_lat"));
    line("gateway_cpu_pct_thr", med("gateway", "gateway_cpu_pct_thr"));
  }

  for (const auto& [path, ping] : paths)
    ping->send("quit");
  ::kill(gateway->pid(), SIGTERM);
  std::string counters;
  while (auto l = gateway->read_line(Clock::now() + 20s))
    counters += "# gateway: " + *l + "\n";
  std::cout << counters;
  const int gw_rc = gateway->wait(Clock::now() + 20s);
  ::kill(ref_pong->pid(), SIGTERM);
  ::kill(sp_pong->pid(), SIGTERM);
  ::kill(sp_ref_pong->pid(), SIGTERM);
  for (auto* p : {ref_pong.get(), sp_pong.get(), sp_ref_pong.get(), &ref_ping, &gw_ping, &sp_ping})
    p->wait(Clock::now() + 10s);
  std::filesystem::remove_all(dir);
  if (gw_rc != 0) die("spindle-gateway exited " + std::to_string(gw_rc));
  return 0;
}

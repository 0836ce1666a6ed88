// SMC benchmark: the Spindle paper's experiments (§IV) at this machine's scale. The
// coordinator spawns 2-4 member processes of itself per run over each built transport
// (shm, tcp), measures atomic and unordered multicast, and the raw transport (the same
// bytes from the same senders as one-sided writes, each of SMC's largest push, through a
// ring as large as SMC's at window 100, no protocol; run busy and handing the core over
// after every round of writes, the faster of the two is the reference) in the same
// invocation, and prints one line per figure:
//
//   peer=spindle-smc transport=<t> size=<bytes> subs=<receivers> metric=<m> value=<x>
//     procs=<n> senders=<all|half|one> window=<w> subgroups=<k>
//     mode=<atomic|unordered|raw|raw_yield>
//     delay_us=<d>
//
// Metrics: throughput_msgs_s, throughput_MBps (10^6 B/s, delivered per member, averaged),
// throughput_GBps, ratio_to_raw (median over repetitions of SMC / the mean of the references
// just before and just after it), the reference's throughput_MBps_busy,
// throughput_MBps_handing_over and handing_over_over_busy, ratio_to_atomic (unordered runs, paired
// the same way with an atomic run, whose own ratio_to_raw is printed too), latency_us_p50/p99/p999
// (send to delivery, under load), sender_balance (the fewest messages one sender sent over the
// most, with two senders or more), send/receive/delivery batch means and histograms
// (batch_hist_<stage>_le<N> = fraction). --targets adds, per cell at its best window,
// target_best_window, target_atomic_ratio_to_raw, target_ratio_to_atomic, target_met (1/0)
// and target_met_window (the best window where both targets held, 0 if none); on stderr one
// summary line per cell (window:atomic/raw,unordered/atomic, * where both held).
//
// Usage: bench_smc [--quick|--smoke] [--transports tcp,shm] [--duration-ms T] [--reps N]
//        bench_smc --targets [--windows 100,150,200,300,500] [--transports ...] [--quick]
//        bench_smc --one [--transport T --procs N --senders all|half|one --size B ...]
//        bench_smc --help     (every option; members are pinned one per CPU unless --no-pin)
#include <sched.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "group/view.hpp"
#include "process.hpp"
#include "temp_dir.hpp"
#include "test_node.hpp"
#include "transports.hpp"

namespace sg = spindle::group;
namespace tst = spindle::testing;
namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct RunSpec {
  std::string transport = "tcp";
  std::uint32_t procs = 3;
  std::uint32_t size = 10240;
  std::string senders = "all";  // all | half | one
  std::uint32_t window = 100;
  std::uint32_t subgroups = 1;  // all members in all; subgroup 0 active
  std::string mode = "atomic";  // atomic | unordered | raw
  std::uint32_t delay_us = 0;   // busy-wait after each send, on the last sender
  std::uint32_t duration_ms = 400;
  std::uint32_t pace_us = 0;          // latency runs: every sender paces its sends
  std::uint32_t idle_spin_us = 1000;  // knobs.idle_spin of every member
  bool pin = true;                    // member i runs on the i-th allowed CPU (mod their count)
};

// raw_yield: the raw stream, but each sender hands its core over (sched_yield) after every
// round of writes, as a protocol thread waiting on its peers does. The reference is the
// faster of the two (see report() in the coordinator).
bool is_raw(const std::string& mode) {
  return mode == "raw" || mode == "raw_yield";
}

std::vector<std::uint32_t> sender_ranks(const RunSpec& r) {
  const std::uint32_t n = r.senders == "all"    ? r.procs
                          : r.senders == "half" ? std::max(1u, r.procs / 2)
                                                : 1u;
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < n; ++i)
    out.push_back(i);
  return out;
}

// The command line: a coordinator's (what to measure) or, with --role node, one member's
// (the coordinator passes its RunSpec on).
struct Options {
  RunSpec spec;
  bool one = false;      // just the configuration given, not the sweep
  bool hist = false;     // print batch histograms too
  bool quick = false;    // 3 members only
  bool smoke = false;    // a few short runs (the CTest smoke test)
  bool targets = false;  // issue 4's targets, each cell at its best window
  std::vector<std::uint32_t> windows{100, 150, 200, 300, 500};  // windows --targets tries
  std::vector<std::string> transports;                          // empty: every one built
  std::size_t reps = 3;                                         // 1 with --smoke unless given
  std::string role;                                             // "node": one member (internal)
  st::NodeId id = 0;
  std::string ns = "bench";
};

// ----------------------------------------------------------------------------- member
constexpr st::RegionId kRawRegion = 0x5241'5700;
// Latency is sampled on the messages whose per-sender index is a multiple of this. Reading a
// stamp pulls the first line of a payload to the receiver's core, and the sender's next copy
// into that slot must take it back: every 8th message cost shm (2 members all sending) 3-5 %
// of atomic/raw against every 64th (3 alternating pairs: 0.63-0.64 against 0.65-0.67).
constexpr std::uint64_t kStampEvery = 64;

struct Result {
  std::uint64_t msgs = 0;
  std::uint64_t bytes = 0;
  std::int64_t elapsed_ns = 0;
  double p50 = 0, p99 = 0, p999 = 0;
  std::uint64_t nulls = 0;
  std::array<std::uint64_t, spindle::smc::Histogram::kBuckets> hist[3]{};
  std::uint64_t hist_count[3]{};
  std::uint64_t hist_total[3]{};
};

// The paper busy-waits; on a two-core machine a busy-waiting sender would also starve its
// own predicate thread (the one that must send its nulls), so delays of 50 us and more
// sleep instead.
void busy_wait(std::chrono::microseconds d) {
  if (d >= std::chrono::microseconds(50)) {
    std::this_thread::sleep_for(d);
    return;
  }
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

// Members are spread over the CPUs as the paper's run on one machine each: member i and
// all its threads (application, predicate, transport) on the i-th CPU this process may
// use, modulo their number. Left to itself, the scheduler of a two-CPU machine often stacks
// three busy threads on one CPU while the other idles (perf sched, shm, 2 members all
// sending): never-sleeping threads that hand the core over by yielding look cache-hot and
// are not pulled to an idle CPU. The raw reference runs under the same placement.
void pin_to_cpu(st::NodeId id) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int n = CPU_COUNT(&allowed);
  if (n <= 0) return;
  int want = static_cast<int>(id % static_cast<st::NodeId>(n));
  for (std::size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || want-- != 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0)
      std::cerr << "member " << id << ": cannot pin to CPU " << cpu << " (runs unpinned)\n";
    return;
  }
}

int member(const Options& o) {
  const RunSpec& r = o.spec;
  const auto id = o.id;
  if (r.pin) pin_to_cpu(id);
  auto made = tst::make_transport(r.transport, id, o.ns);
  std::cout << "ready " << made.port << std::endl;
  std::string word, path;
  if (!(std::cin >> word >> path) || word != "go") return 3;
  const auto g = sg::load_group(path);
  const auto deadline = Clock::now() + std::chrono::milliseconds(r.duration_ms) + 60s;

  std::atomic<std::int64_t> last_delivery{0};
  std::vector<std::int64_t> lat;
  std::uint64_t msgs = 0, bytes = 0;
  tst::TestNode node(*made.transport, g, spindle::sst::steady_clock(), 1, false);
  node.on_batch = [&](std::uint32_t, std::span<const spindle::smc::Message> batch) {
    const auto t = now_ns();
    for (const auto& m : batch) {
      ++msgs;
      bytes += m.payload.size();
      if (m.payload.size() >= 8 && (r.pace_us > 0 || m.index % kStampEvery == 0) &&
          lat.size() < (1u << 20)) {
        std::int64_t ts = 0;
        std::memcpy(&ts, m.payload.data(), 8);
        lat.push_back(t - ts);
      }
    }
    last_delivery.store(t, std::memory_order_release);
  };
  const auto my_rank = *g.rank_of(id);
  const auto senders = sender_ranks(r);
  const bool i_send = std::find(senders.begin(), senders.end(),
                                static_cast<std::uint32_t>(my_rank)) != senders.end();
  const bool delayed = r.delay_us > 0 && my_rank == senders.back() && senders.size() > 1;

  // Raw mode: [counters: one line per member][data: a ring of window x size per member],
  // the footprint of SMC's rings.
  const bool raw = is_raw(r.mode);
  const bool hand_over = r.mode == "raw_yield";
  const std::size_t raw_lines = 64 * g.members.size();
  const std::size_t raw_area = std::size_t{r.window} * r.size;
  std::byte* raw_base = nullptr;
  if (raw) {
    raw_base = made.transport->create_region(kRawRegion, raw_lines + raw_area * g.members.size())
                   .bytes.data();
  }
  if (node.sst().connect(30'000ms) != st::Status::ok) {
    std::cerr << "member " << id << ": connect failed\n";
    return 4;
  }
  node.loop().start();
  auto wait_barrier = [&](std::uint64_t v, Clock::time_point until) {
    node.request_barrier(v);
    while (!node.barrier_reached(v) && Clock::now() < until)
      std::this_thread::sleep_for(100us);
    return node.barrier_reached(v);
  };
  if (!wait_barrier(1, deadline)) return 5;
  const std::int64_t t0 = now_ns();
  const auto end = Clock::now() + std::chrono::milliseconds(r.duration_ms);
  std::uint64_t sent = 0;
  if (raw) {
    // No protocol runs beside the raw stream: the predicate thread, woken by every
    // arriving write, would spin for knobs.idle_spin each time on the cores the stream
    // needs (the suspicion timeout is far longer than a run; it restarts for the barriers).
    node.loop().stop();
    auto& t = *made.transport;
    const std::size_t mine = raw_lines + raw_area * my_rank;
    if (i_send) {
      // The transport alone, streaming the same bytes through the same memory: each write
      // carries the largest batch SMC pushes (smc::kMaxPushBytes of messages, at most a
      // window), at the next position of a ring as large as SMC's, with no acknowledgement,
      // no ordering and no slot reuse. A delayed sender writes one message at a time. Peers
      // are fed round robin without waiting on any one of them (as SMC's per-peer queues
      // do), a peer at most 4 batches ahead of the slowest; only what every peer got counts.
      const std::uint64_t batch =
          delayed ? 1
                  : std::clamp<std::uint64_t>(spindle::smc::kMaxPushBytes / r.size, 1, r.window);
      std::vector<std::uint64_t> got(g.members.size(), 0);
      auto slowest = [&] {
        std::uint64_t low = UINT64_MAX;
        for (std::size_t p = 0; p < g.members.size(); ++p)
          if (p != my_rank) low = std::min(low, got[p]);
        return low;
      };
      while (Clock::now() < end) {
        const std::uint64_t low = slowest();
        bool progressed = false;
        for (std::size_t p = 0; p < g.members.size(); ++p) {
          if (p == my_rank || got[p] >= low + 4) continue;
          // Batch k of the stream starts at message k * batch of the ring (split at its end
          // as SMC splits a batch that wraps: two writes).
          const std::uint64_t first = (got[p] * batch) % r.window;
          const std::uint64_t head = std::min<std::uint64_t>(batch, r.window - first);
          const std::size_t off = mine + static_cast<std::size_t>(first) * r.size;
          auto s = t.write(g.members[p].id, kRawRegion, off, kRawRegion, off,
                           static_cast<std::size_t>(head) * r.size);
          if (s == st::Status::ok && head < batch) {
            s = t.write(g.members[p].id, kRawRegion, mine, kRawRegion, mine,
                        static_cast<std::size_t>(batch - head) * r.size);
          }
          if (s == st::Status::ok) {
            ++got[p];
            progressed = true;
          } else if (s != st::Status::retry) {
            return 6;
          }
        }
        // Refused everywhere: hand the core over and retry, as the predicate loop does with
        // a refused push. Not on the activity ticket (every arriving frame rings it), and no
        // sleep: with the member pinned, a 100 us sleep left the tcp link idle once the I/O
        // thread had drained its queue (tcp, 2 members all sending: raw 2.2 GB/s sleeping,
        // 3.6 GB/s yielding).
        if (!progressed || hand_over) std::this_thread::yield();
        if (delayed && progressed) busy_wait(std::chrono::microseconds(r.delay_us));
      }
      sent = slowest() * batch;
      // The count, after the data (same peer order): receivers see it last.
      const std::size_t cnt = 64 * my_rank;
      std::memcpy(raw_base + cnt, &sent, 8);
      for (std::size_t p = 0; p < g.members.size(); ++p) {
        if (p == my_rank) continue;
        for (;;) {
          const auto tk = t.activity();
          const auto s = t.write(g.members[p].id, kRawRegion, cnt, kRawRegion, cnt, 8);
          if (s == st::Status::ok) break;
          if (s != st::Status::retry) return 6;
          t.wait(tk, 1ms);
        }
      }
      msgs += sent;
      bytes += sent * r.size;
      last_delivery.store(now_ns());
    }
    // Receive side: wait for every other sender's final count, which comes after the run's
    // end: sleep until then (as SMC's receivers do below), then poll with short sleeps, not
    // on the activity ticket: every arriving frame rings that, and a receiver woken
    // thousands of times a second for nothing takes the core the I/O threads need.
    if (!i_send) std::this_thread::sleep_until(end);
    for (auto s : senders) {
      if (s == my_rank) continue;
      std::uint64_t c = 0;
      while (Clock::now() < deadline) {
        c = std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(raw_base + 64 * s))
                .load(std::memory_order_acquire);
        if (c != 0) break;
        std::this_thread::sleep_for(200us);
      }
      msgs += c;
      bytes += c * r.size;
      last_delivery.store(std::max(last_delivery.load(), now_ns()));
    }
  } else if (i_send) {
    const auto pace = std::chrono::microseconds(r.pace_us);
    auto next = Clock::now();
    // The clock is read for stamped messages only (every kStampEvery-th, each one when
    // paced), and the stamp is also the loop's deadline check: at millions of messages a
    // second per sender, one read per message cost 8 % of the machine's CPU time.
    auto stamp = Clock::now();
    while (stamp < end) {
      if (pace.count() > 0) {
        std::this_thread::sleep_until(next);  // a light load leaves the cores to the protocol
        next += pace;
      }
      // A full ring puts the sender to sleep until a slot frees (as DataWriter::write
      // does): a spinning sender would take the core its predicate thread needs.
      auto res = node.smc().reserve_wait(0, r.size, end);
      const bool stamped = pace.count() > 0 || res.index % kStampEvery == 0;
      if (stamped || res.status != spindle::smc::ReserveStatus::ok) stamp = Clock::now();
      if (res.status != spindle::smc::ReserveStatus::ok) continue;
      if (stamped && r.size >= 8) {
        const std::int64_t ts =
            std::chrono::duration_cast<std::chrono::nanoseconds>(stamp.time_since_epoch()).count();
        std::memcpy(res.data, &ts, 8);
      }
      node.smc().commit(0, res, r.size);
      ++sent;
      if (delayed) busy_wait(std::chrono::microseconds(r.delay_us));
    }
  }
  if (raw) node.loop().start();
  // A member that only receives has nothing to do until the run ends: it sleeps instead of
  // polling the barrier, which took 5-7 % of its CPU from the predicate and I/O threads.
  if (!i_send) std::this_thread::sleep_until(end);
  // Done sending; then wait until our own messages were delivered everywhere.
  const bool ok2 = wait_barrier(2, deadline);
  while (!raw && node.smc().is_sender(0) && node.smc().in_flight(0) != 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(100us);
  const bool ok3 = wait_barrier(3, deadline);
  (void)wait_barrier(4, Clock::now() + 2s);
  std::this_thread::sleep_for(20ms);
  node.loop().stop();

  Result res;
  res.msgs = msgs;
  res.bytes = bytes;
  res.elapsed_ns = last_delivery.load() - t0;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double q) {
    if (lat.empty()) return -1.0;
    return static_cast<double>(
               lat[static_cast<std::size_t>(q * static_cast<double>(lat.size() - 1))]) /
           1000.0;
  };
  res.p50 = pct(0.5);
  res.p99 = pct(0.99);
  res.p999 = pct(0.999);
  std::ostringstream os;
  os << "result ok=" << (ok2 && ok3 ? 1 : 0) << " msgs=" << res.msgs << " bytes=" << res.bytes
     << " elapsed_ns=" << res.elapsed_ns << " p50=" << res.p50 << " p99=" << res.p99
     << " p999=" << res.p999 << " sent=" << sent;
  for (std::uint32_t s = 0; s < g.subgroups.size(); ++s) {
    if (!node.smc().is_member(s)) continue;
    const auto& stt = node.smc().stats(s);
    res.nulls += stt.nulls;
    const spindle::smc::Histogram* hs[3] = {&stt.send_batches, &stt.receive_batches,
                                            &stt.delivery_batches};
    for (int k = 0; k < 3; ++k) {
      for (std::size_t b = 0; b < res.hist[k].size(); ++b)
        res.hist[k][b] += hs[k]->buckets[b];
      res.hist_count[k] += hs[k]->count;
      res.hist_total[k] += hs[k]->total;
    }
  }
  os << " nulls=" << res.nulls;
  for (int k = 0; k < 3; ++k) {
    os << " h" << k << "=" << res.hist_count[k] << ":" << res.hist_total[k];
    for (auto v : res.hist[k])
      os << ":" << v;
  }
  std::cout << os.str() << std::endl;
  made.transport->disconnect();
  return 0;
}

// ------------------------------------------------------------------------ coordinator
struct Aggregate {
  bool ok = false;
  double msgs_s = 0, bytes_s = 0, p50 = -1, p99 = -1, p999 = -1;
  std::uint64_t nulls = 0;
  double balance = -1;  // fewest messages a sender sent / most, with 2 senders or more
  std::array<std::uint64_t, spindle::smc::Histogram::kBuckets> hist[3]{};
  std::uint64_t hist_count[3]{}, hist_total[3]{};
};

Aggregate run(const RunSpec& r, const std::string& self) {
  Aggregate agg;
  static int counter = 0;
  // The runs' group files, in one folder removed when the benchmark exits.
  static const tst::TempDir scratch("spindle-bench-smc");
  const auto& dir = scratch.path();
  sg::View g;
  g.knobs.heartbeat_interval = 500ms;
  g.knobs.suspicion_timeout = 30'000ms;
  g.knobs.idle_spin = std::chrono::microseconds(r.idle_spin_us);
  for (std::uint32_t i = 0; i < r.procs; ++i)
    g.members.push_back(sg::Member{i, "127.0.0.1", 0});
  if (!is_raw(r.mode)) {
    for (std::uint32_t s = 0; s < r.subgroups; ++s) {
      sg::Subgroup sub;
      sub.name = "s" + std::to_string(s);
      for (std::uint32_t i = 0; i < r.procs; ++i)
        sub.members.push_back(i);
      for (auto i : sender_ranks(r))
        sub.senders.push_back(i);
      sub.window_size = r.window;
      sub.max_payload = r.size;
      sub.ordering = r.mode == "unordered" ? sg::Ordering::unordered : sg::Ordering::atomic;
      g.subgroups.push_back(sub);
    }
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(r.duration_ms) + 90s;
  std::vector<std::unique_ptr<tst::Process>> procs;
  const std::string ns = "bench" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  for (std::uint32_t i = 0; i < r.procs; ++i) {
    // The member's RunSpec, option by option.
    const std::pair<const char*, std::string> spec[] = {
        {"--transport", r.transport},
        {"--procs", std::to_string(r.procs)},
        {"--size", std::to_string(r.size)},
        {"--senders", r.senders},
        {"--window", std::to_string(r.window)},
        {"--subgroups", std::to_string(r.subgroups)},
        {"--mode", r.mode},
        {"--delay-us", std::to_string(r.delay_us)},
        {"--duration-ms", std::to_string(r.duration_ms)},
        {"--pace-us", std::to_string(r.pace_us)},
        {"--idle-spin-us", std::to_string(r.idle_spin_us)}};
    std::vector<std::string> argv = {self, "--role", "node", "--id", std::to_string(i), "--ns", ns};
    for (const auto& [option, value] : spec) {
      argv.emplace_back(option);
      argv.push_back(value);
    }
    if (!r.pin) argv.emplace_back("--no-pin");
    procs.push_back(std::make_unique<tst::Process>(std::move(argv)));
  }
  for (std::uint32_t i = 0; i < r.procs; ++i) {
    auto line = procs[i]->read_line(deadline);
    if (!line || line->rfind("ready ", 0) != 0) return agg;
    g.members[i].port = static_cast<std::uint16_t>(std::stoul(line->substr(6)));
  }
  const auto file = dir / (ns + ".yaml");
  std::ofstream(file) << sg::to_yaml(g);
  for (auto& p : procs)
    p->send("go " + file.string());
  std::vector<double> p50s, p99s, p999s, sent;
  const auto senders = sender_ranks(r);
  bool ok = true;
  for (std::uint32_t i = 0; i < r.procs; ++i) {
    auto line = procs[i]->read_line(deadline);
    if (!line || line->rfind("result ", 0) != 0) {
      ok = false;
      continue;
    }
    std::map<std::string, std::string> kv;
    std::istringstream is(line->substr(7));
    std::string tok;
    while (is >> tok) {
      const auto eq = tok.find('=');
      kv[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    if (kv["ok"] != "1") ok = false;
    const double el = std::stod(kv["elapsed_ns"]) / 1e9;
    if (el > 0) {
      agg.msgs_s += std::stod(kv["msgs"]) / el / r.procs;
      agg.bytes_s += std::stod(kv["bytes"]) / el / r.procs;
    }
    if (std::stod(kv["p50"]) >= 0) {
      p50s.push_back(std::stod(kv["p50"]));
      p99s.push_back(std::stod(kv["p99"]));
      p999s.push_back(std::stod(kv["p999"]));
    }
    agg.nulls += std::stoull(kv["nulls"]);
    if (std::find(senders.begin(), senders.end(), i) != senders.end())
      sent.push_back(std::stod(kv["sent"]));
    for (int k = 0; k < 3; ++k) {
      std::istringstream hs(kv["h" + std::to_string(k)]);
      std::string part;
      std::vector<std::uint64_t> v;
      while (std::getline(hs, part, ':'))
        v.push_back(std::stoull(part));
      if (v.size() < 2) continue;
      agg.hist_count[k] += v[0];
      agg.hist_total[k] += v[1];
      for (std::size_t b = 0; b + 2 < v.size() && b < agg.hist[k].size(); ++b)
        agg.hist[k][b] += v[b + 2];
    }
  }
  for (auto& p : procs)
    if (p->wait(deadline) != 0) ok = false;
  std::filesystem::remove(file);
  auto mean = [](const std::vector<double>& v) {
    if (v.empty()) return -1.0;
    double s = 0;
    for (auto x : v)
      s += x;
    return s / static_cast<double>(v.size());
  };
  agg.p50 = mean(p50s);
  agg.p99 = p99s.empty() ? -1.0 : *std::max_element(p99s.begin(), p99s.end());
  agg.p999 = p999s.empty() ? -1.0 : *std::max_element(p999s.begin(), p999s.end());
  if (sent.size() >= 2 && *std::max_element(sent.begin(), sent.end()) > 0) {
    agg.balance =
        *std::min_element(sent.begin(), sent.end()) / *std::max_element(sent.begin(), sent.end());
  }
  agg.ok = ok;
  return agg;
}

void line(const RunSpec& r, const std::string& metric, double value) {
  std::cout << "peer=spindle-smc transport=" << r.transport << " size=" << r.size
            << " subs=" << (r.procs - 1) << " metric=" << metric << " value=" << value
            << " procs=" << r.procs << " senders=" << r.senders << " window=" << r.window
            << " subgroups=" << r.subgroups << " mode=" << r.mode << " delay_us=" << r.delay_us
            << (r.pace_us ? " pace_us=" + std::to_string(r.pace_us) : std::string()) << std::endl;
}

int coordinator(const Options& o, const std::string& self) {
  const bool smoke = o.smoke;
  const bool quick = o.quick || smoke;
  const std::vector<std::string> kinds =
      o.transports.empty() ? tst::available_transports() : o.transports;
  int failures = 0;
  const std::size_t reps = o.reps;
  auto median = [](std::vector<double> v) {
    if (v.empty()) return -1.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // Every figure is bracketed by references: raw runs right before and right after it
  // (consecutive repetitions share one), and each ratio divides by the mean of the two.
  // Ratios are the median of the per-repetition ratios. On a shared machine the load drifts
  // from run to run; a reference on each side cancels a steady drift, which a reference on
  // one side only would count against (or for) the figure.
  // What report() found for --targets: medians it printed for an unordered figure (atomic's
  // ratio_to_raw and unordered's ratio_to_atomic; -1 for other modes), ok false if a run failed.
  struct Figures {
    bool ok = false;
    double atomic_ratio_to_raw = -1;
    double ratio_to_atomic = -1;
  };
  auto report = [&](const RunSpec& r, bool hist) -> Figures {
    RunSpec ref = r;
    ref.mode = "raw";
    ref.window = 100;  // the paper's setting: one reference for a whole window sweep
    ref.subgroups = 1;
    ref.delay_us = 0;
    RunSpec atomic = r;
    atomic.mode = "atomic";
    const bool vs_atomic = r.mode == "unordered";
    std::vector<Aggregate> runs;
    RunSpec handing = ref;
    handing.mode = "raw_yield";
    std::vector<double> raw_bytes, raw_msgs, ratios, ratios_atomic, atomic_ratios;
    std::vector<double> busy_bytes, handing_bytes, handing_ratios;
    std::vector<double> raw_balance, atomic_balance;  // sender_balance, where measured
    // One reference: the raw stream run both ways, busy and handing its core over after
    // every round of writes; the faster one is the reference (bytes/s), or nothing if either
    // failed. Which one wins depends on the transport: on shm the busy stream does (each
    // yield is a system call, and a process switch where members share a CPU), on tcp the
    // one that hands over does, by 1.2-2x (the stream's own I/O thread and the loopback
    // stack get the core without waiting for a preemption).
    auto reference = [&]() -> std::optional<double> {
      const Aggregate busy = run(ref, self);
      const Aggregate hand = run(handing, self);
      if (!busy.ok || !hand.ok) return std::nullopt;
      const Aggregate& best = hand.bytes_s > busy.bytes_s ? hand : busy;
      raw_bytes.push_back(best.bytes_s);
      raw_msgs.push_back(best.msgs_s);
      busy_bytes.push_back(busy.bytes_s);
      handing_bytes.push_back(hand.bytes_s);
      if (busy.bytes_s > 0) handing_ratios.push_back(hand.bytes_s / busy.bytes_s);
      if (best.balance >= 0) raw_balance.push_back(best.balance);
      return best.bytes_s;
    };
    auto before = reference();
    bool ok = before.has_value();
    for (std::size_t i = 0; ok && i < reps; ++i) {
      const Aggregate at = vs_atomic ? run(atomic, self) : Aggregate{};
      Aggregate x = run(r, self);
      const auto after = reference();
      if (!after || !x.ok || (vs_atomic && !at.ok)) {
        ok = false;
        break;
      }
      const double raw_mean = (*before + *after) / 2;
      if (raw_mean > 0) ratios.push_back(x.bytes_s / raw_mean);
      if (vs_atomic && at.bytes_s > 0) ratios_atomic.push_back(x.bytes_s / at.bytes_s);
      if (vs_atomic && raw_mean > 0) atomic_ratios.push_back(at.bytes_s / raw_mean);
      if (vs_atomic && at.balance >= 0) atomic_balance.push_back(at.balance);
      runs.push_back(std::move(x));
      before = after;
    }
    if (!ok) {
      ++failures;
      line(r, "failed", 1);
      return Figures{};
    }
    std::sort(runs.begin(), runs.end(),
              [](const Aggregate& x, const Aggregate& y) { return x.bytes_s < y.bytes_s; });
    const Aggregate& agg = runs[runs.size() / 2];
    line(ref, "throughput_msgs_s", median(raw_msgs));
    line(ref, "throughput_MBps", median(raw_bytes) / 1e6);
    line(ref, "throughput_MBps_busy", median(busy_bytes) / 1e6);
    line(ref, "throughput_MBps_handing_over", median(handing_bytes) / 1e6);
    line(ref, "handing_over_over_busy", median(handing_ratios));
    if (!raw_balance.empty()) line(ref, "sender_balance", median(raw_balance));
    line(r, "throughput_msgs_s", agg.msgs_s);
    line(r, "throughput_MBps", agg.bytes_s / 1e6);
    line(r, "throughput_GBps", agg.bytes_s / 1e9);
    line(r, "ratio_to_raw", median(ratios));
    if (vs_atomic) {
      line(r, "ratio_to_atomic", median(ratios_atomic));
      line(atomic, "ratio_to_raw", median(atomic_ratios));
    }
    if (agg.p50 >= 0) {
      line(r, "latency_us_p50", agg.p50);
      line(r, "latency_us_p99", agg.p99);
      line(r, "latency_us_p999", agg.p999);
    }
    if (!is_raw(r.mode)) line(r, "nulls", static_cast<double>(agg.nulls));
    if (agg.balance >= 0) line(r, "sender_balance", agg.balance);
    if (!atomic_balance.empty()) line(atomic, "sender_balance", median(atomic_balance));
    const char* stage[3] = {"send", "receive", "delivery"};
    for (int k = 0; k < 3; ++k) {
      if (agg.hist_count[k] == 0) continue;
      line(r, std::string("batch_mean_") + stage[k],
           static_cast<double>(agg.hist_total[k]) / static_cast<double>(agg.hist_count[k]));
      if (!hist) continue;
      for (std::size_t b = 0; b < agg.hist[k].size(); ++b) {
        if (agg.hist[k][b] == 0) continue;
        line(r, std::string("batch_hist_") + stage[k] + "_le" + std::to_string(1u << b),
             static_cast<double>(agg.hist[k][b]) / static_cast<double>(agg.hist_count[k]));
      }
    }
    return Figures{true, vs_atomic ? median(atomic_ratios) : -1.0,
                   vs_atomic ? median(ratios_atomic) : -1.0};
  };

  // Issue 4's targets, judged the way the paper picks its window: every cell (members x
  // senders, at --size) runs atomic and unordered at each window of --windows; the window
  // where atomic's ratio_to_raw is highest is the cell's, and the targets are checked there:
  // atomic >= 0.70 of the raw reference, unordered within 10 % of atomic. Also printed:
  // target_met_window, the best window among those where both held (0: none did).
  auto targets = [&](const std::string& kind) {
    constexpr double kAtomicTarget = 0.70, kUnorderedSpread = 0.10;
    const auto both = [](const Figures& f) {
      return f.ok && f.atomic_ratio_to_raw >= kAtomicTarget &&
             std::abs(f.ratio_to_atomic - 1) <= kUnorderedSpread;
    };
    std::size_t cells = 0, met = 0, any = 0;
    for (std::uint32_t n :
         quick ? std::vector<std::uint32_t>{3} : std::vector<std::uint32_t>{2, 3, 4}) {
      for (const char* s : {"all", "one"}) {
        RunSpec best = o.spec;
        best.transport = kind;
        best.procs = n;
        best.senders = s;
        best.mode = "unordered";
        Figures at_best;
        double met_ratio = -1;
        std::uint32_t met_window = 0;
        // One line per cell on stderr: window:atomic/raw,unordered/atomic (* where both held).
        std::ostringstream summary;
        summary << std::fixed << std::setprecision(2) << kind << ' ' << n << ' ' << s << ':';
        for (std::uint32_t w : o.windows) {
          RunSpec r = best;
          r.window = w;
          const Figures f = report(r, false);
          summary << ' ' << w << ':';
          if (f.ok) {
            summary << f.atomic_ratio_to_raw << ',' << f.ratio_to_atomic << (both(f) ? "*" : "");
          } else {
            summary << "failed";
          }
          if (f.ok && f.atomic_ratio_to_raw > at_best.atomic_ratio_to_raw) {
            at_best = f;
            best.window = w;
          }
          if (both(f) && f.atomic_ratio_to_raw > met_ratio) {
            met_ratio = f.atomic_ratio_to_raw;
            met_window = w;
          }
        }
        ++cells;
        std::cerr << "bench_smc: " << summary.str() << '\n';
        if (!at_best.ok) continue;  // every window failed: report() printed metric=failed
        const bool ok = both(at_best);
        met += ok ? 1 : 0;
        any += met_window != 0 ? 1 : 0;
        best.mode = "atomic";
        line(best, "target_best_window", best.window);
        line(best, "target_atomic_ratio_to_raw", at_best.atomic_ratio_to_raw);
        best.mode = "unordered";
        line(best, "target_ratio_to_atomic", at_best.ratio_to_atomic);
        line(best, "target_met", ok ? 1 : 0);
        line(best, "target_met_window", met_window);
      }
    }
    std::cerr << "bench_smc: " << kind << ": targets met in " << met << " of " << cells
              << " cells at their best window, in " << any << " at some window\n";
  };

  if (o.one) {
    // One configuration from the command line (--transport, --procs, --size, ...).
    report(o.spec, o.hist);
    return failures == 0 ? 0 : 1;
  }
  if (o.targets) {
    for (const auto& kind : kinds)
      targets(kind);
    return failures == 0 ? 0 : 1;
  }
  for (const auto& kind : kinds) {
    RunSpec base = o.spec;
    base.transport = kind;
    if (smoke) {
      RunSpec r = base;
      r.procs = 2;
      r.size = 1024;
      report(r, false);
      r.mode = "unordered";
      report(r, false);
      continue;
    }
    // 1. Single subgroup, continuous sending: sizes x sender patterns (Fig. 3/4/16).
    const std::vector<std::uint32_t> procs =
        quick ? std::vector<std::uint32_t>{3} : std::vector<std::uint32_t>{2, 3, 4};
    for (auto n : procs) {
      for (std::uint32_t size : {1u, 128u, 1024u, 10240u}) {
        for (const char* s : {"all", "half", "one"}) {
          RunSpec r = base;
          r.procs = n;
          r.size = size;
          r.senders = s;
          report(r, n == 3 && size == 10240 && std::string(s) == "all");
        }
      }
    }
    // 2. Unordered vs atomic at 10 KB (Fig. 18).
    for (const char* s : {"all", "one"}) {
      RunSpec r = base;
      r.senders = s;
      r.mode = "unordered";
      report(r, false);
    }
    // 3. Window sizes, all senders, 10 KB (Fig. 6).
    for (std::uint32_t w : {5u, 10u, 50u, 100u, 500u, 1000u}) {
      if (w == 100) continue;  // measured above
      RunSpec r = base;
      r.window = w;
      report(r, false);
    }
    // 4. One sender delayed 1 us / 100 us per message (Fig. 10).
    for (std::uint32_t d : {1u, 100u}) {
      RunSpec r = base;
      r.delay_us = d;
      report(r, false);
    }
    // 5. 1, 2, 10, 50 subgroups with one active (Fig. 9).
    for (std::uint32_t k : {2u, 10u, 50u}) {
      RunSpec r = base;
      r.subgroups = k;
      report(r, false);
    }
    // 6. Latency at a light load: one sender, 1 KB every 100 us.
    {
      RunSpec r = base;
      r.size = 1024;
      r.senders = "one";
      r.pace_us = 100;
      report(r, false);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench_smc: the Spindle paper's SMC experiments on this machine (2-4 member processes,\n"
      "shm and tcp), with the raw transport measured in the same run as the reference.\n"
      "Without --one it runs the whole sweep."};
  Options o;
  RunSpec& r = o.spec;
  const std::vector<std::string> built = tst::available_transports();
  const auto one_of = [](std::vector<std::string> v) { return CLI::IsMember(std::move(v)); };
  auto* one =
      app.add_flag("--one", o.one, "Measure only the configuration given by the options below");
  app.add_flag("--hist", o.hist, "With --one: print the batch-size histograms too");
  app.add_flag("--quick", o.quick, "Sweep with 3 members only");
  app.add_flag("--smoke", o.smoke, "A few short runs (the CTest smoke test)");
  auto* targets =
      app.add_flag("--targets", o.targets,
                   "Check the targets (atomic >= 0.70 of raw, unordered within 10 % of atomic) in\n"
                   "every cell of 2-4 members (3 with --quick), all/one sending, at --size, each\n"
                   "at the window of --windows where atomic does best")
          ->excludes(one);
  app.add_option("--windows", o.windows, "Windows --targets tries per cell")
      ->delimiter(',')
      ->check(CLI::Range(1u, sg::kMaxWindow))
      ->capture_default_str()
      ->needs(targets);
  app.add_option("--transports", o.transports, "Sweep these transports (default: all built)")
      ->delimiter(',')
      ->check(one_of(built));
  const auto* reps =
      app.add_option("--reps", o.reps, "Repetitions per figure (default 3, 1 with --smoke)")
          ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  app.add_option("--transport", r.transport, "With --one: the transport")
      ->check(one_of(built))
      ->capture_default_str();
  app.add_option("--procs", r.procs, "Member processes")
      ->check(CLI::Range(2u, 64u))
      ->capture_default_str();
  app.add_option("--size", r.size, "Message size in bytes")
      ->check(CLI::Range(1u, sg::kMaxPayload))
      ->capture_default_str();
  app.add_option("--senders", r.senders, "Which members send")
      ->check(one_of({"all", "half", "one"}))
      ->capture_default_str();
  app.add_option("--window", r.window, "SMC window size (slots per sender)")
      ->check(CLI::Range(1u, sg::kMaxWindow))
      ->capture_default_str()
      ->excludes(targets);  // --targets sweeps --windows
  app.add_option("--subgroups", r.subgroups,
                 "Subgroups of all members; subgroup 0 carries the load")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  app.add_option("--mode", r.mode, "What to measure against the raw reference")
      ->check(one_of({"atomic", "unordered", "raw", "raw_yield"}))
      ->capture_default_str();
  app.add_option("--delay-us", r.delay_us, "The last sender waits this long after each send")
      ->capture_default_str();
  const auto* duration = app.add_option("--duration-ms", r.duration_ms,
                                        "Length of each run (default 400, 60 with --smoke)")
                             ->check(CLI::Range(1u, 3'600'000u));
  app.add_option("--pace-us", r.pace_us, "Senders send one message per this many microseconds")
      ->capture_default_str();
  app.add_option("--idle-spin-us", r.idle_spin_us, "knobs.idle_spin of every member")
      ->capture_default_str();
  bool no_pin = false;
  app.add_flag("--no-pin", no_pin, "Leave members unpinned (default: member i on CPU i)");
  // Internal: how the coordinator starts a member.
  app.add_option("--role", o.role)->check(one_of({"node"}))->group("");
  app.add_option("--id", o.id)->group("");
  app.add_option("--ns", o.ns)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  r.pin = !no_pin;
  if (o.smoke && reps->count() == 0) o.reps = 1;
  if (o.smoke && duration->count() == 0) r.duration_ms = 60;
  try {
    if (o.role == "node") return member(o);
    char exe[4096] = {};
    const auto n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    return coordinator(o, std::string(exe, n > 0 ? static_cast<std::size_t>(n) : 0));
  } catch (const std::exception& e) {
    std::cerr << "bench_smc: " << e.what() << '\n';
    return 2;
  }
}

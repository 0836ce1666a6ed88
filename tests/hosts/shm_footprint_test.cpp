// The shared memory a domain on one host maps (issue 62): K standard-API processes with no
// domain file (transport auto: members meet over shared memory), one publisher of ShapeType on
// "Square" and K-1 subscribers, 200 samples and a dispose. While they run, every shared-memory
// object the processes map is counted once, at its largest mapping (a memfd or a /dev/shm file
// is known by its device and inode in /proc/<pid>/maps), and the peak sum is reported. Every
// subscriber must take all 200 samples, in order, and the dispose.
//
// SPINDLE_FOOTPRINT_OBJECTS=1 lists the objects of each peak by size, and
// SPINDLE_FOOTPRINT_TRACE=1 prints every sample (what a peak is made of).
//
// Participants are hosts_node's publisher and subscribers. Run it where nothing else uses the
// default shm namespace ("spindle"): CTest runs it alone (RUN_SERIAL); tools/contained gives it
// a /dev/shm and a network namespace of its own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "local_node.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kSamples = 200;

// The shared memory some processes map: each object (device and inode) once, at its largest
// mapping.
struct Footprint {
  std::uint64_t bytes = 0;
  // Each object's bytes that some process maps (the union of the file ranges mapped), summed:
  // what the formula of docs/transport-shm.md counts.
  std::uint64_t mapped = 0;
  std::size_t objects = 0;
  std::vector<std::pair<std::uint64_t, std::string>> sizes;  // each object's, and its name
};

Footprint footprint(const std::vector<int>& pids) {
  std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> largest;
  std::map<std::pair<std::string, std::uint64_t>, std::string> names;
  std::map<std::pair<std::string, std::uint64_t>,
           std::vector<std::pair<std::uint64_t, std::uint64_t>>>
      ranges;  // file ranges mapped, per object
  for (const int pid : pids) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
      // start-end perms offset dev inode path
      if (line.find("/memfd:") == std::string::npos && line.find("/dev/shm/") == std::string::npos)
        continue;
      std::istringstream in(line);
      std::string range, perms, offset, dev;
      std::uint64_t inode = 0;
      if (!(in >> range >> perms >> offset >> dev >> inode)) continue;
      const auto dash = range.find('-');
      if (dash == std::string::npos) continue;
      const auto start = std::stoull(range.substr(0, dash), nullptr, 16);
      const auto end = std::stoull(range.substr(dash + 1), nullptr, 16);
      auto& at = largest[{dev, inode}];
      at = std::max<std::uint64_t>(at, end - start);
      const auto file_offset = std::stoull(offset, nullptr, 16);
      ranges[{dev, inode}].emplace_back(file_offset, file_offset + (end - start));
      std::string name;
      std::getline(in >> std::ws, name);
      auto& named = names[{dev, inode}];
      if (named.empty()) named = name + ", mapped by";
      // Built in steps: GCC 12 at -O3 sees an overlapping copy in " " + to_string() (-Wrestrict).
      std::string tag(" ");
      tag += std::to_string(pid);
      if (named.find(tag + ",") == std::string::npos && !named.ends_with(tag)) named += tag;
    }
  }
  Footprint f;
  for (const auto& [key, bytes] : largest)
    f.bytes += bytes;
  for (const auto& [key, bytes] : largest)
    f.sizes.emplace_back(bytes, names[key]);
  f.objects = largest.size();
  for (auto& [key, r] : ranges) {
    std::sort(r.begin(), r.end());
    std::uint64_t covered = 0;
    std::uint64_t reach = 0;
    for (const auto& [lo, hi] : r) {
      if (hi <= reach) continue;
      covered += hi - std::max(lo, reach);
      reach = hi;
    }
    f.mapped += covered;
  }
  return f;
}

// The processes at rest: looks every 100 ms until two looks in a row agree (a retired view's
// memory goes within 50 ms of the view's end), for at most 3 s; the last look.
Footprint at_rest(const std::vector<int>& pids) {
  Footprint last = footprint(pids);
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(100ms);
    const Footprint now = footprint(pids);
    const bool same = now.mapped == last.mapped && now.objects == last.objects;
    last = now;
    if (same) break;
  }
  return last;
}

// What docs/transport-shm.md ("Bytes per member") says this domain maps at rest, with the
// defaults (engine.window_size 100, engine.slot_size 1024, DCPS's 64-byte sample header) and
// its layout: two subgroups, the builtin one where every member sends and Square's where the
// publisher sends, and each member belongs to both. No rings: ShapeType's samples fit a slot.
std::uint64_t documented_bytes(int k) {
  constexpr std::uint64_t kPage = 4096;
  const auto up = [](std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; };
  constexpr std::uint64_t subgroups = 2;
  constexpr std::uint64_t window = 100;
  const std::uint64_t stride = up(1024 + 64, 64);
  const auto row = [&](bool publishes) {
    std::uint64_t bytes = 64 + 128 + up(8 * subgroups, 64) + 32 * 8;  // control, membership
    bytes += subgroups * 64;                                          // counters
    const std::uint64_t ring = 64 + up(16 * window, 64) + window * stride;
    bytes += ring * (publishes ? 2 : 1);  // the builtin subgroup's, and Square's
    return up(bytes, kPage);
  };
  const std::uint64_t control = up(64 + 8384, kPage);
  const std::uint64_t region_header = kPage;  // the region's payload starts on the next page
  const auto members = static_cast<std::uint64_t>(k);
  return members * (control + region_header) + (members - 1) * row(false) + row(true);
}

// Samples the footprint of `pids` every millisecond until stopped; the peak. A view change
// holds two views' regions for as long as it connects (milliseconds at K = 4): a coarser
// sampler misses it in a small domain and catches it in a larger one.
class PeakSampler {
 public:
  explicit PeakSampler(std::vector<int> pids) : pids_(std::move(pids)) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        const auto f = footprint(pids_);
        if (std::getenv("SPINDLE_FOOTPRINT_TRACE") != nullptr)
          std::cerr << "sample: " << f.bytes << " bytes in " << f.objects << " objects\n";
        {
          std::lock_guard lock(mu_);
          if (f.bytes > peak_.bytes) peak_ = f;
        }
        std::this_thread::sleep_for(1ms);
      }
    });
  }
  ~PeakSampler() { stop(); }
  PeakSampler(const PeakSampler&) = delete;
  PeakSampler& operator=(const PeakSampler&) = delete;
  // The peak, counting a last look (the processes are all still there, at rest).
  Footprint stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    const auto last = footprint(pids_);
    std::lock_guard lock(mu_);
    if (last.bytes > peak_.bytes) peak_ = last;
    return peak_;
  }

 private:
  std::vector<int> pids_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  Footprint peak_;
  std::thread thread_;
};

struct Run {
  Footprint peak;
  Footprint rest;  // once every subscriber took everything, before they exit
};

// Runs K processes (a publisher, K-1 subscribers) to the end, with no domain file or with only
// `settings` (local_node); the peak footprint, and the footprint at rest.
Run run(int k, std::chrono::seconds patience, const std::string& settings = {}) {
  const auto deadline = Clock::now() + patience;
  std::vector<std::unique_ptr<tst::Process>> subs;
  std::vector<int> pids;
  for (int i = 1; i < k; ++i) {
    subs.push_back(tst::local_node({"subscriber", std::to_string(kSamples)}, settings));
    pids.push_back(subs.back()->pid());
  }
  auto pub =
      tst::local_node({"publisher", std::to_string(kSamples), std::to_string(k - 1)}, settings);
  pids.push_back(pub->pid());
  PeakSampler sampler(pids);
  for (std::size_t i = 0; i < subs.size(); ++i)
    REQUIRE(tst::expect_line(*subs[i], "sub" + std::to_string(i + 1), "ready", deadline));
  REQUIRE(tst::expect_line(*pub, "pub", "matched", deadline));
  REQUIRE(tst::expect_line(*pub, "pub", "wrote " + std::to_string(kSamples), deadline));
  int whole = 0;
  for (std::size_t i = 0; i < subs.size(); ++i)
    if (tst::expect_line(*subs[i], "sub" + std::to_string(i + 1),
                         "got " + std::to_string(kSamples) + " disposed", deadline))
      ++whole;
  auto peak = sampler.stop();
  const auto rest = at_rest(pids);
  for (auto& s : subs)
    s->send("exit");
  pub->send("exit");
  for (auto& s : subs)
    CHECK(s->wait(deadline) == 0);
  CHECK(pub->wait(deadline) == 0);
  std::cout << "footprint: " << k << " processes map " << (peak.bytes >> 20) << " MiB ("
            << peak.bytes << " bytes) in " << peak.objects << " objects at the peak, "
            << (peak.bytes / static_cast<std::uint64_t>(k) >> 10) << " KiB per process; " << whole
            << " of " << subs.size() << " subscribers took all " << kSamples
            << " samples and the dispose; at rest " << rest.mapped << " bytes mapped in "
            << rest.objects << " objects" << std::endl;
  CHECK(whole == k - 1);
  if (std::getenv("SPINDLE_FOOTPRINT_OBJECTS") != nullptr) {
    std::sort(peak.sizes.rbegin(), peak.sizes.rend());
    for (const auto& [b, name] : peak.sizes)
      std::cout << "  object of " << b << " bytes: " << name << '\n';
  }
  return Run{peak, rest};
}

}  // namespace

TEST_CASE("shm footprint: 4 and 16 processes", "[footprint]") {
  // The peak is sampled every millisecond, and a view change's moment with two views' rows
  // mapped can fall between two samples: with 4 processes it is short enough to be missed
  // (peaks of 745,472 bytes in 10 objects instead of 1.1-1.2 MB in 12, 2 runs in 10 on
  // 2026-12-07, which failed the ratio below). The larger of two runs of 4 is their peak.
  const auto first_four = run(4, 120s);
  const auto second_four = run(4, 120s);
  const auto& [four, four_rest] =
      first_four.peak.bytes >= second_four.peak.bytes ? first_four : second_four;
  const auto [sixteen, sixteen_rest] = run(16, 240s);
  // At rest each member maps its CONTROL and its own row of the view (with its region's header
  // page): the formula of docs/transport-shm.md, to the byte.
  CHECK(four_rest.mapped == documented_bytes(4));
  CHECK(sixteen_rest.mapped == documented_bytes(16));
  CHECK(four_rest.objects == 8);
  CHECK(sixteen_rest.objects == 32);
  std::cout << "footprint: 16 processes map "
            << static_cast<double>(sixteen.bytes) / static_cast<double>(four.bytes)
            << "x what 4 map" << std::endl;
  // Issue 62's bound: a domain of 16 small-sample processes maps at most 256 MiB (it mapped
  // 5.6 GiB when every member reserved 257 MiB of RDMC space and a ring per peer).
  CHECK(sixteen.bytes <= (std::uint64_t{256} << 20));
  // And it grows with the domain: at most 5x what 4 map (4x the members; each maps its own row
  // of the view, and of the next one while a view change connects). It was 4.6-6.9x while
  // rows of up to three views were mapped at once, and up to 6.0x while a region was mapped
  // whole for the moment between its creation and the declaration of its rows; 3.0-4.5x
  // since (docs/dev/status.md, issue 62).
  CHECK(sixteen.bytes <= 5 * four.bytes);
}

// Past 64 members (issue 62; docs/membership.md, "The view's size"): 96 processes in one
// domain on this host, every subscriber served whole. With engine.suspicion_timeout 5 s and
// connect_timeout 30 s, nothing else set: 96 sanitized processes started at once on two cores
// (48 a core) each wait their turn for the CPU. With the default 1 s a heartbeat came late now
// and then while the domain formed (a member removed and back, its reader short of what was
// written meanwhile); with the default 5 s an early joiner, whose leader was still starting,
// now and then gave up before the leader's port had said a word.
// SPINDLE_SCALE_PROCESSES=K runs K instead, and SPINDLE_SCALE_DEFAULTS=1 with no domain file
// at all (the acceptance: K = 72). Labelled "scale": `ctest -L scale` runs it alone.
TEST_CASE("shm scale: 96 processes in one domain, every subscriber served whole", "[scale]") {
  int k = 96;
  if (const char* e = std::getenv("SPINDLE_SCALE_PROCESSES")) k = std::stoi(e);
  REQUIRE(k >= 2);
  const bool defaults = std::getenv("SPINDLE_SCALE_DEFAULTS") != nullptr;
  const auto start = Clock::now();
  const auto [peak, rest] =
      run(k, 900s,
          defaults ? std::string()
                   : "version: 1\nengine:\n  suspicion_timeout: 5s\n  connect_timeout: 30s\n");
  std::cout << "scale: " << k << " processes served in "
            << std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count()
            << " s" << (defaults ? " (no domain file)" : " (suspicion 5 s, connect 30 s)")
            << std::endl;
  CHECK(peak.bytes > 0);
  CHECK(rest.mapped == documented_bytes(k));  // the formula holds at 96 too
}

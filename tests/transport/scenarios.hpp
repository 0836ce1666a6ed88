// The transport conformance scenarios, written once and run on every transport: as one
// member per process on tcp/shm/rdma (node.cpp, driven by conformance_test.cpp) and as
// actors of the deterministic in-memory transport over many seeds (conformance_sim_test).
//
// A scenario is a member's part of a test, cut into step functions ("parts") that never
// block: a step does what it can, returns true when it did any work, and is called again
// later. Part 0 polls transport events and checks; parts 1.. are writers to one peer each.
// The process driver runs every part on its own thread (concurrent writers to different
// peers, as the contract allows); the simulator driver steps every part of a member in
// turn inside that member's actor. Shared state between parts is atomic.
//
// Threading: a Scenario is built and destroyed on the driver's thread; part i is only ever
// called from one thread at a time. `Member` callbacks must be safe from every part.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::transport::test {

// Region map (every member registers the same ones, create_regions()):
//   1 table    per sender: kVersions slots of kSlot data bytes, then a guard (stride kStride)
//   2 big      big_bytes, target of the sizes scenario
//   3 rx       block receive buffers, kRxSlots x kMaxBlock
//   4 tx       block send source, kMaxBlock
//   5 control  per sender 64 bytes: +0 done count, +8 barrier, +16 step, +24 ack
//   10+p       staging for the writer part that writes to peer p
inline constexpr RegionId kTable = 1, kBigRegion = 2, kRx = 3, kTx = 4, kControl = 5, kStaging = 10;
inline constexpr std::size_t kSlot = 256, kVersions = 16, kStride = kVersions * kSlot + 64;
inline constexpr std::uint32_t kMaxBlock = 256u << 10, kRxSlots = 4;
inline constexpr std::size_t kMaxNodes = 4;

void create_regions(Transport& t, std::size_t big_bytes);

// What a scenario sees of its member and of the driver.
struct Member {
  Transport* t = nullptr;
  NodeId id = 0;
  std::vector<NodeAddress> view;  // the first view, already connected by the driver
  std::map<std::string, std::string> args;
  // The driver's clock: steady time in a process, virtual time in the simulator.
  std::function<std::chrono::nanoseconds()> now;
  // A line for the test harness (STREAMING, SUSPECT ...); the process driver prints it.
  std::function<void(const std::string&)> say;
  // Blocks the calling part for `d` (process driver); the simulator slows nodes instead,
  // so scenarios there are given pause_ms=0.
  std::function<void(std::chrono::nanoseconds)> pause;
  // True in the simulator: it never steps an idle actor, so a wait that must see its own
  // clock run (a re-send timer) reports work there instead of sleeping.
  bool virtual_time = false;

  [[nodiscard]] std::int64_t arg(const std::string& key, std::int64_t fallback) const;
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  // Part 0 first; parts 1.. are independent writers.
  [[nodiscard]] virtual std::size_t parts() const = 0;
  virtual bool step(std::size_t part) = 0;

  // Finished (successfully or not). A failure stops every part.
  [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }
  // "key=value ..." facts on success (checked by the harness).
  [[nodiscard]] const std::string& result() const noexcept { return result_; }

 protected:
  void fail(std::string why);
  void finish(std::string facts);

 private:
  std::atomic<bool> done_{false};
  std::string failure_;
  std::string result_;
};

// Scenarios: order (optionally with a victim that is killed or crashed by the harness),
// sizes, blocks, reconnect, idle. Throws std::invalid_argument for an unknown name.
std::unique_ptr<Scenario> make_scenario(const std::string& name, Member& member);

// "key=value" → the number, or -1 if absent.
double fact(const std::string& facts, const std::string& key);

}  // namespace spindle::transport::test

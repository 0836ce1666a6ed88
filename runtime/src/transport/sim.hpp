// In-memory deterministic transport: every member of a view lives in one process, and a
// seeded scheduler decides the order and (virtual) time of every write, block delivery,
// suspicion and protocol step. Same seed, same run, bit for bit (trace_hash() proves it).
// Protocol tests run their nodes as actors on it over thousands of seeds.
//
// Threading: single-threaded. The Network, its transports and the actors are used from the
// thread that runs the scheduler; nothing here locks. Transport::wait() never blocks (an
// idle actor is simply not scheduled until something reaches its node).
//
// Model. A channel per ordered pair (from, to) is a FIFO of messages (writes and blocks);
// a write's bytes are snapshotted when posted. Each message gets a random latency
// (uniform in [min_latency, max_latency], now and then a spike), but a channel never
// reorders: a message is due at max(now + latency, due time of the one before it). The
// scheduler pops the earliest due event (ties by insertion order). As with real
// transports a connection belongs to one view: a message carries its sender's view epoch,
// waits at the receiver until it connect()s to that view, and is dropped once the
// receiver has left it; disconnect() drops what is in flight in the view it leaves. Faults:
//   crash(n)   n stops; each channel out of n delivers a random prefix of what is in
//              flight; peers suspect n (reason crashed) after suspicion_timeout.
//   cut(a, b)  both directions deliver a random prefix, then drop; both ends suspect
//              each other (reason link_cut) after suspicion_timeout.
//   slow(n, d) adds d to the latency of every message from or to n and to n's steps.
//   forge_write(n, m, ...)  n writes where it may not (another member's row): m refuses it
//              when it lands (foreign_write) and drops their connection of this view both
//              ways; n suspects m (connection_lost) after suspicion_timeout.
// With Config::rows_in_place, rows declared alike (share_rows) are not carried: each member
// reads its peers' rows of the view where their owners store them (a write of one's own row
// only wakes the peer, one latency later), from the later of the two connect()s until it
// leaves the view, when it keeps a copy of each as it ended (as shm does).
//
// Replay: Seeds::from_env() reads SPINDLE_SIM_SEED (one seed), SPINDLE_SIM_SEEDS (how many)
// and the floor and time budget that keep a test's outcome independent of the machine's
// speed; replay_command(seed) is the shell line to print when a seed fails.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::transport::sim {

using Duration = std::chrono::nanoseconds;

// splitmix64-seeded xoshiro256**: the same numbers on every platform and standard library
// (std:: distributions are implementation-defined, so we never use them here).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept;
  std::uint64_t next() noexcept;
  // Uniform in [lo, hi] (inclusive), lo <= hi.
  std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi) noexcept;
  bool chance(std::uint32_t per_million) noexcept { return uniform(0, 999'999) < per_million; }

 private:
  std::uint64_t s_[4];
};

struct Config {
  std::uint64_t seed = 1;
  Duration min_latency{std::chrono::microseconds(1)};
  Duration max_latency{std::chrono::microseconds(20)};
  std::uint32_t spike_per_million = 20'000;                // 2 % of messages are late...
  Duration spike_latency{std::chrono::microseconds(500)};  // ...by up to this much
  Duration min_step{std::chrono::nanoseconds(200)};        // an actor step takes [min,max]
  Duration max_step{std::chrono::microseconds(5)};
  Duration suspicion_timeout{std::chrono::milliseconds(1)};
  std::size_t channel_bytes = 1u << 20;  // back-pressure: queued bytes per channel
  // Rows in place, as over shared memory (docs/transport-shm.md, "Rows in place"): a row
  // declared with share_rows() by both sides of a view is kept once, at its owner, and the
  // peer reads it where the owner stores it (the same memory, mapped read-only over the
  // peer's region), so a receiver sees each byte of a sender's slot as soon as it is stored,
  // and a write() of one's own row carries no bytes, only the wake-up. Off by default: each
  // row costs a mapping per peer, and a 256-member view would pass vm.max_map_count.
  bool rows_in_place = false;
};

class SimTransport;

class Network {
 public:
  explicit Network(Config config);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Adds member `id`; the network owns its transport.
  SimTransport& add_node(NodeId id);
  [[nodiscard]] SimTransport& node(NodeId id);
  [[nodiscard]] std::vector<NodeAddress> addresses() const;  // every node, for connect()

  // An actor is a node's protocol loop: step() returns true if it did work. A busy actor is
  // stepped again after a random step time; an idle one sleeps until something reaches its
  // node (a delivery or an event), like a predicate thread on its doorbell.
  void set_actor(NodeId id, std::function<bool()> step);
  // Steps node `id`'s actor at virtual time `at` (now, if `at` has passed) even if nothing
  // reaches the node: its timers. One wake-up per distinct time.
  void wake_at(NodeId id, Duration at);

  // Scheduler. step() runs one event and returns false if none is pending.
  bool step();
  // Runs until `done()` holds, nothing is pending, or virtual time passes `limit`.
  // Returns done() at the end.
  bool run_until(const std::function<bool()>& done, Duration limit);
  [[nodiscard]] Duration now() const noexcept;
  [[nodiscard]] std::uint64_t events_run() const noexcept;
  // Writes that carried no bytes because the peer reads the writer's row in place
  // (Config::rows_in_place): a test's proof that its run exercised rows in place.
  [[nodiscard]] std::uint64_t in_place_writes() const noexcept;

  // Faults.
  void crash(NodeId id);
  [[nodiscard]] bool crashed(NodeId id) const;
  void cut(NodeId a, NodeId b);
  void slow(NodeId id, Duration extra);
  // A one-sided write from `from` into `to`'s region `region` at `offset`, as a buggy or
  // hostile member would post it, past its own transport's checks: it travels and lands as
  // any write of `from` in its current view. A receiver that restricted the region
  // (restrict_writes) and granted `from` no such range refuses it (see the fault list).
  // Returns what write() would (ok, retry, peer_suspected, closed).
  Status forge_write(NodeId from, NodeId to, RegionId region, std::uint64_t offset,
                     std::span<const std::byte> bytes);
  // A SIGSTOP of `length`: the node takes no step until it ends (what peers write to it
  // still lands). Longer than the suspicion timeout, every peer suspects it; when it
  // resumes it suspects each peer that went on without it or suspected it meanwhile.
  void pause(NodeId id, Duration length);
  [[nodiscard]] bool paused(NodeId id) const;
  // Hosts, for certain death (group/liveness.hpp): nodes put on the same host (a number
  // other than 0) see each other's crash for certain; a node on host 0 (the default) is on
  // a host of its own.
  void set_host(NodeId id, std::uint32_t host);
  [[nodiscard]] std::uint32_t host_of(NodeId id) const;

  // Hash of every event run (time, kind, endpoints, bytes): equal for equal seeds.
  [[nodiscard]] std::uint64_t trace_hash() const noexcept;
  [[nodiscard]] std::uint64_t seed() const noexcept;
  // The network's random source, for tests that want seeded choices of their own.
  Rng& rng() noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class SimTransport final : public Transport {
 public:
  SimTransport(Network::Impl& net, NodeId id);
  ~SimTransport() override;

  [[nodiscard]] NodeId self() const noexcept override { return id_; }
  [[nodiscard]] std::string_view kind() const noexcept override { return "sim"; }
  LocalRegion create_region(RegionId id, std::size_t size) override;
  void release_region(RegionId id) override;
  void restrict_writes(RegionId id, std::span<const WriteGrant> grants) override;
  void share_rows(RegionId id, std::span<const WriteGrant> rows) override;
  [[nodiscard]] Status connect(std::span<const NodeAddress> members, std::uint64_t view_epoch,
                               std::chrono::milliseconds timeout) override;
  void disconnect() override;
  // A member joining with the view (connect_within) that has not joined it yet; its
  // PeerConnected comes one latency after its own connect().
  [[nodiscard]] bool connecting(NodeId peer) const override;
  [[nodiscard]] std::optional<RegionDescriptor> remote_region(NodeId peer,
                                                              RegionId id) const override;
  [[nodiscard]] std::optional<LocalRegion> local_region(RegionId id) const override;
  [[nodiscard]] Status write(NodeId peer, RegionId local, std::uint64_t local_offset,
                             RegionId remote, std::uint64_t remote_offset,
                             std::size_t length) override;
  [[nodiscard]] Status send_block(NodeId peer, RegionId local, std::uint64_t offset,
                                  std::uint32_t length, std::uint32_t immediate) override;
  [[nodiscard]] Status post_receive(NodeId peer, RegionId local, std::uint64_t offset,
                                    std::uint32_t capacity) override;
  std::size_t poll(std::vector<Event>& out) override;
  [[nodiscard]] std::uint64_t activity() const noexcept override { return activity_; }
  void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) override;
  void notify() noexcept override;

  // Internal to the simulator.
  struct State;
  State& state() noexcept { return *state_; }

 private:
  Network::Impl* net_;
  NodeId id_;
  std::uint64_t activity_ = 0;
  std::unique_ptr<State> state_;
  friend struct Network::Impl;
};

// Which seeds a test explores, so that its outcome never depends on the machine's speed:
// at least `floor` seeds whatever they take, then more while `budget` (wall-clock time since
// the first seed began) remains, `count` at most. A fast machine explores them all, a slow
// one (or a sanitizer build) the floor and what fits; the loop's end prints how many ran.
//   SPINDLE_SIM_SEED=<n>          replays seed n alone
//   SPINDLE_SIM_SEEDS=<count>     at most this many (default: the test's)
//   SPINDLE_SIM_MIN_SEEDS=<n>     the floor (default: the test's; never above the count)
//   SPINDLE_SIM_BUDGET=<seconds>  the budget (default: the test's; 0 means none: all `count`)
// Seeds are first..first+count-1. Iterate with `for (std::uint64_t seed : seeds)`; explored()
// is how many began (the coverage checks scale with it).
class Seeds {
 public:
  std::uint64_t first = 1;
  std::uint64_t count = 1;
  std::uint64_t floor = 1;
  std::chrono::milliseconds budget{0};

  // `default_floor` 0 means every seed of the count; `default_budget` 0 means no budget.
  static Seeds from_env(std::uint64_t default_count, std::uint64_t default_floor = 0,
                        std::chrono::seconds default_budget = std::chrono::seconds{0});

  // Whether another seed is to begin (and if so, counts it). The first call starts the clock;
  // the call that answers no prints the summary line to stderr.
  bool next();
  [[nodiscard]] std::uint64_t explored() const noexcept { return explored_; }
  // "explored 812 of 10000 seeds (first 1, floor 500, budget 120 s) in 120.4 s"
  [[nodiscard]] std::string summary() const;

  class Iterator {
   public:
    explicit Iterator(Seeds* s) noexcept : s_(s) {}
    std::uint64_t operator*() const noexcept { return s_->first + s_->explored_ - 1; }
    Iterator& operator++() noexcept { return *this; }
    bool operator!=(const Iterator& /*end*/) { return s_->next(); }

   private:
    Seeds* s_;
  };
  Iterator begin() noexcept { return Iterator{this}; }
  Iterator end() noexcept { return Iterator{this}; }

 private:
  std::uint64_t explored_ = 0;
  bool done_ = false;
  std::chrono::steady_clock::time_point started_{};
};

// "SPINDLE_SIM_SEED=<seed> <this executable> '<test>'" — print it when a seed fails.
[[nodiscard]] std::string replay_command(std::uint64_t seed, std::string_view test_name);

}  // namespace spindle::transport::sim

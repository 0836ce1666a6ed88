// A domain of whole participants — DCPS entities, view engine, SST, SMC — on the
// deterministic in-memory transport, all in this process and driven by one seeded
// scheduler (group/sim_runtime.hpp). Tests use the public ISO C++ PSM API on them as an
// application would; every wait runs the scheduler, so a seed replays exactly.
//
// Threading: single-threaded; the stack is used from the test's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <dds/dds.hpp>
#include "transport/sim.hpp"

#include "group/engine.hpp"
#include "group/view.hpp"
#include "storage/history.hpp"
#include "temp_dir.hpp"

namespace spindle::dcps {
class Participant;
struct SampleHeader;
}  // namespace spindle::dcps

namespace spindle::group {
class SimJoinHub;
}

namespace spindle::testing {

// A RELIABLE KEEP_ALL reader's QoS: what the simulator tests read with to see every sample.
inline dds::sub::qos::DataReaderQos keep_all() {
  dds::sub::qos::DataReaderQos q;
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return q;
}

class SimStack {
 public:
  // `members` participants with ids 1..members, every one in the first view. Samples
  // larger than `slot_size` go by RDMC, in blocks of 64 bytes with 1 KiB of buffer space
  // per writing member (so a sample takes several blocks, and writers wait for space).
  SimStack(const transport::sim::Config& config, std::uint32_t members,
           std::uint32_t window_size = 16, std::uint32_t slot_size = 1024);
  ~SimStack();
  SimStack(const SimStack&) = delete;
  SimStack& operator=(const SimStack&) = delete;

  [[nodiscard]] transport::sim::Network& net() noexcept { return *net_; }
  [[nodiscard]] std::size_t size() const noexcept { return participants_.size(); }
  [[nodiscard]] dds::domain::DomainParticipant& participant(std::size_t i) {
    return participants_.at(i);
  }
  [[nodiscard]] const group::View& first_view() const noexcept { return view_; }

  // Runs the scheduler until `done` holds or `limit` of virtual time passes; returns done().
  bool run_until(const std::function<bool()>& done,
                 std::chrono::nanoseconds limit = std::chrono::seconds(10));

  // Installs `next` at every participant (the engines' install(), in member order).
  void install(const group::View& next);

  // A new participant (the next id) joins the running domain through the simulator's join
  // channel, as create_participant does through the join port: it asks whoever leads, asks
  // again when that leader crashed, halted or was leaving, and is built from the view and
  // the state transfer its welcome carries. Returns its index, or nullopt with `why` when
  // no welcome came within `limit` of virtual time (or a refusal that is final).
  std::optional<std::size_t> join(std::string& why,
                                  std::chrono::nanoseconds limit = std::chrono::seconds(2));

  // `count` joiners (the next ids) that ask at once, are welcomed, and never connect:
  // processes that crashed right after asking. Their slots stay dead. Returns how many the
  // leader welcomed within `limit`.
  std::size_t join_and_vanish(std::size_t count,
                              std::chrono::nanoseconds limit = std::chrono::seconds(2));

  // Faults. crash(i): participant i stops at once (its node crashes on the network; the
  // others suspect it after the simulator's suspicion timeout). leave(i): participant i is
  // closed, as an application deletes its participant. Either way it is not used again.
  void crash(std::size_t i);
  void leave(std::size_t i);
  // isolate(i): every link between participant i and the others is cut (a partition with
  // i alone on its side; participants that join later are on the other side). It keeps
  // running: a minority, it must halt by itself.
  void isolate(std::size_t i);
  [[nodiscard]] bool alive(std::size_t i) const { return alive_.at(i); }
  // stall(i): participant i stops taking part in view changes, its heartbeat going on (a
  // protocol thread stuck in a trigger); the others must suspect it for want of progress.
  void stall(std::size_t i);
  // stall_deliveries(i): participant i stops receiving and delivering (its current view's
  // subgroups), its heartbeat and view-change part going on: a half-dead member. With
  // `transfers`, its RDMC stops too (group::Engine::stall_transfers).
  void stall_deliveries(std::size_t i, bool transfers = false);
  // resume_deliveries(i): ends it, as a paused process that runs again (a demotable member
  // left behind for its lag catches up and holds again from the next view).
  void resume_deliveries(std::size_t i, bool transfers = false);
  // forge_suspicion(i, owner, victim): participant i writes "`owner` suspects `victim`" into
  // every other member's copy of owner's SST row, the owner's own included (the suspected
  // bits, 8 bytes at each;
  // transport::sim::Network::forge_write), as a buggy or hostile member could try: rows
  // belong to their owners, so each refuses it and suspects i. Returns how many members it
  // was posted to.
  std::size_t forge_suspicion(std::size_t i, std::size_t owner, std::size_t victim);
  // evict(i, victim): participant i evicts `victim` (group::Engine::evict), as a member whose
  // revocation list now revokes the victim's certificate does (docs/security.md).
  void evict(std::size_t i, std::size_t victim);
  // Every participant, and those that join later, rejoins the domain by itself once it
  // halted (group::Engine::rejoin_with), through the simulator's join hub.
  void rejoin_on_halt();
  // Puts every participant, and those that join later, on one simulated host: their
  // crashes are certain deaths to each other (group/liveness.hpp), not partitions.
  void one_host();
  // Why participant i halted (majority rule), empty while it runs.
  [[nodiscard]] std::string halted(std::size_t i) const;
  // Participant i's engine: its current view, its counters, and the messages its router
  // delivered (every topic, the builtin one included).
  [[nodiscard]] group::View view(std::size_t i) const;
  [[nodiscard]] group::EngineStats engine_stats(std::size_t i) const;
  [[nodiscard]] std::uint64_t delivered(std::size_t i) const;
  // A builtin message (a discovery record, a retirement...) multicast by participant i's
  // router as given, header and payload: what a faulty or hostile member could send.
  void forge(std::size_t i, const dcps::SampleHeader& header, std::span<const std::byte> payload);
  // Participant i's router counters: messages dropped as malformed, and why the last one.
  [[nodiscard]] std::uint64_t malformed(std::size_t i) const;
  // What participant i retains of `topic` for late readers (storage/history.hpp).
  [[nodiscard]] std::vector<storage::Entry> retained(std::size_t i, const std::string& topic) const;
  // Retained histories participant i took again after it missed messages (docs/storage.md,
  // "Refresh"), and whether it still misses or waits for any.
  [[nodiscard]] std::uint64_t refreshes(std::size_t i) const;
  [[nodiscard]] bool history_whole(std::size_t i) const;
  // Repairs participant i's readers took (docs/dcps.md, "Repair").
  [[nodiscard]] std::uint64_t repairs(std::size_t i) const;

 private:
  // The participants' durable logs (logged topics): this stack's own, removed with it.
  TempDir logs_{"spindle-sim-logs"};
  std::unique_ptr<transport::sim::Network> net_;
  std::unique_ptr<group::SimJoinHub> hub_;
  group::LayoutSettings settings_;
  group::View view_;
  std::set<std::size_t> isolated_;
  std::uint32_t host_ = 0;  // one_host(): the host of every participant
  bool rejoin_ = false;     // rejoin_on_halt()
  void give_rejoiner(std::size_t i);
  std::vector<std::shared_ptr<dcps::Participant>> cores_;
  std::vector<dds::domain::DomainParticipant> participants_;
  std::vector<bool> alive_;
};

}  // namespace spindle::testing

// Shared State Table (DESIGN §4; the SST paper): one row per member of the view in one
// registered transport region; this node owns its row and pushes parts of it to exactly
// the peers that need them. Also the heartbeat column and suspicion reporting.
//
// Threading: built and connected on the control thread; afterwards owned by the predicate
// thread (push_*, flush, tick, on_events, set_* of own columns). Application threads may
// only read through the const accessors of single 8-byte fields (acquire loads); the SMC
// gives them their own lock-free path into slots. No locks: peers write other rows while
// we read them; each field is read with one acquire load (transport.hpp memory model).
//
// Pushes. A predicate trigger calls push_data() for bulk ranges (slot rings),
// push_guard() for counters that publish data (num_sent, rounds), and push_status() for
// counters that publish none of ours (received_num, delivered_num: what we have seen of
// others). Nothing is written until flush(), which the predicate loop calls after the whole
// evaluation step (Spindle §III-C). Per peer, flush() first writes every queued status,
// then every queued data range in FIFO order, and only when all of them were accepted,
// every queued guard; statuses and guards in ascending offset order, each reading the
// current (monotonic) value at that moment. So a guard never becomes visible before the
// data it covers, a status never waits behind a bulk copy (it is what frees the peer's
// slots), a repeated push in one step costs one write, and within a row a lower-offset
// guard (num_sent) always lands before a higher one (rounds) pushed in the same flush.
// A peer that answers `retry` keeps the rest of its queue, in order, for the next flush.
//
// Rows belong to their owners. The constructor restricts the region so that each member may
// write its own row only (Transport::restrict_writes); a transport that sees a peer write
// elsewhere reports a Suspicion of that peer (foreign_write), handled like any other.
//
// Suspicion. A peer is suspected when the transport reports it (Suspicion event) or when
// its heartbeat column has not moved for knobs.suspicion_timeout. The suspicion is
// recorded in our ControlRow.suspected set (pushed to everyone) and reported once
// through the handler given to set_suspicion_handler(); the membership layer decides.
// Suspected peers get no further pushes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "group/view.hpp"
#include "sst/layout.hpp"

namespace spindle::sst {

using transport::NodeId;
using Clock = std::function<std::chrono::nanoseconds()>;

// The steady clock, for real transports; the simulator passes its virtual time.
[[nodiscard]] Clock steady_clock();

struct SuspicionReport {
  std::size_t rank = 0;
  NodeId node = 0;
  transport::SuspicionReason reason = transport::SuspicionReason::heartbeat_timeout;
  std::string detail;
};

struct PushStats {
  std::uint64_t data_writes = 0;       // slot ranges
  std::uint64_t guard_writes = 0;      // counters and guards (heartbeats excluded)
  std::uint64_t heartbeat_writes = 0;  // control line pushes made by tick()
  std::uint64_t data_bytes = 0;
  std::uint64_t retries = 0;  // writes refused with retry (re-issued later)
  std::uint64_t flushes = 0;  // flushes that wrote something
};

class Sst {
 public:
  // Creates this view's region (control thread). `self` must be a member of `g`.
  Sst(transport::Transport& t, const group::View& g, Clock clock);
  Sst(const Sst&) = delete;
  Sst& operator=(const Sst&) = delete;

  // Connects the view's members pairwise (control thread). Members joining with this view
  // are not waited for: see connecting().
  [[nodiscard]] transport::Status connect(std::chrono::milliseconds timeout);

  // A member joining with this view whose transport is still connecting to it in the
  // background (Transport::connecting): pushes to it are dropped until it connected, then
  // this node's whole row goes to it at once (its columns are monotonic, so the latest
  // values are all it needs). Its heartbeat timeout runs from connect(): one that never
  // connects is suspected like a silent member. Predicate thread.
  [[nodiscard]] bool connecting(std::size_t rank) const noexcept {
    return rank < connecting_.size() && connecting_[rank] != 0;
  }
  // Called on the predicate thread when a member that was connecting() connected.
  void set_connected_handler(std::function<void(std::size_t rank)> h) {
    on_connected_ = std::move(h);
  }

  [[nodiscard]] static transport::RegionId region_id(std::uint64_t epoch) noexcept {
    return 0x5353'0000u + static_cast<transport::RegionId>(epoch & 0xffff);
  }

  [[nodiscard]] const SstLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] const group::View& group() const noexcept { return group_; }
  [[nodiscard]] std::size_t my_rank() const noexcept { return my_rank_; }
  [[nodiscard]] std::size_t rows() const noexcept { return layout_.rows(); }
  [[nodiscard]] NodeId node_of(std::size_t rank) const { return group_.members[rank].id; }
  [[nodiscard]] transport::Transport& transport() noexcept { return *transport_; }

  // Raw region memory: `at(off)` is this node's copy of whatever row covers `off`.
  [[nodiscard]] std::byte* at(std::size_t offset) const noexcept { return base_ + offset; }

  template <class T>
  [[nodiscard]] T load(std::size_t offset) const noexcept {
    return std::atomic_ref<T>(*reinterpret_cast<T*>(base_ + offset))
        .load(std::memory_order_acquire);
  }
  template <class T>
  void store(std::size_t offset, T v) noexcept {
    std::atomic_ref<T>(*reinterpret_cast<T*>(base_ + offset)).store(v, std::memory_order_release);
  }
  // A MemberSet column, word by word (member_set.hpp: its words only gain bits).
  [[nodiscard]] MemberSet load_set(std::size_t offset) const noexcept {
    MemberSet s;
    for (std::size_t i = 0; i < MemberSet::kWords; ++i)
      s.set_word(i, load<std::uint64_t>(offset + i * sizeof(std::uint64_t)));
    return s;
  }
  void store_set(std::size_t offset, const MemberSet& s) noexcept {
    for (std::size_t i = 0; i < MemberSet::kWords; ++i)
      store<std::uint64_t>(offset + i * sizeof(std::uint64_t), s.word(i));
  }

  // --- pushes (predicate thread) ------------------------------------------------------
  void push_data(std::size_t rank, std::size_t offset, std::size_t len);
  void push_guard(std::size_t rank, std::size_t offset, std::size_t len);
  void push_status(std::size_t rank, std::size_t offset, std::size_t len);
  void push_guard_to(std::span<const std::size_t> ranks, std::size_t offset, std::size_t len);
  // A status push that need not go at once (an acknowledgement, smc.hpp push_counters): it
  // rides on the next push to `rank` (data it sends anyway: a reply), or goes by itself once
  // `within` has passed since the first range still owed to anyone was queued (tick(), at
  // the next step that runs the timers; after_step() without heartbeats, at once). A peer
  // whose queue holds something already gets it with that, this step.
  void push_status_lazy(std::size_t rank, std::size_t offset, std::size_t len,
                        std::chrono::nanoseconds within);
  // Queues everything push_status_lazy() left owed, to go with the next flush: its deadline
  // passed, no timers run here (the simulator), or the thread stepping the loop is about to
  // sleep or leave, and nobody would be awake to send it (a frame now costs less than a
  // wake-up later). Returns whether anything was owed.
  bool release_lazy();
  // Whether push_status_lazy() may leave its ranges owed at all (otherwise they go at once):
  // only while an application thread that keeps coming straight back steps the loop (it
  // holds the protocol on lease, sst/predicate_loop.hpp) and wrote between its last two
  // waits (a ping-pong, whose next write is the reply), or is writing now. Acknowledgements the
  // protocol thread makes go at once: with nobody about to reply, waiting for a deadline only adds
  // a wake-up (a stream of one sample every 2 ms: 4.7-5.1 wake-ups per sample at the reader instead
  // of 3.6-3.7). Set by whoever takes the loop's token.
  void set_ride(bool ride) noexcept { ride_ = ride; }
  // Whether something push_status_lazy() queued for `rank` has not gone yet.
  [[nodiscard]] bool lazy_pending(std::size_t rank) const noexcept {
    return rank < queues_.size() && !queues_[rank].lazy.empty();
  }
  // Issues the queued pushes; returns true if it wrote anything.
  bool flush();
  [[nodiscard]] bool has_pending() const noexcept;

  // --- control columns -----------------------------------------------------------------
  // Sets our barrier column and pushes it to every member.
  void set_barrier(std::uint64_t value);
  [[nodiscard]] std::uint64_t barrier(std::size_t rank) const noexcept {
    return load<std::uint64_t>(layout_.control(rank) + offsetof(ControlRow, barrier));
  }
  [[nodiscard]] std::uint64_t heartbeat(std::size_t rank) const noexcept {
    return load<std::uint64_t>(layout_.control(rank) + offsetof(ControlRow, heartbeat));
  }

  // --- heartbeats and suspicions (predicate thread) ------------------------------------
  using SuspicionHandler = std::function<void(const SuspicionReport&)>;
  void set_suspicion_handler(SuspicionHandler h) { on_suspicion_ = std::move(h); }
  // Called by tick() with the time, once per heartbeat interval (after_step() without
  // heartbeats): the engine's progress check (smc.hpp). Returns whether it changed
  // anything (suspected a member, or left a lagging one behind). Null: none.
  using TickHook = std::function<bool(std::chrono::nanoseconds)>;
  void set_tick_hook(TickHook h) { tick_hook_ = std::move(h); }
  // The hook also runs once at `when` (on this SST's clock), between heartbeats: a lagging
  // member's time runs out then (smc.hpp, check_progress). Predicate thread.
  void hook_due(std::optional<std::chrono::nanoseconds> when) noexcept { hook_due_ = when; }
  // The hook runs at `when` at the latest (an earlier time already asked for stays).
  void hook_due_by(std::chrono::nanoseconds when) noexcept {
    if (!hook_due_ || when < *hook_due_) hook_due_ = when;
  }
  // Every transport event poll_events() takes (block completions for RDMC, suspicions)
  // also goes to `h`, on the predicate thread, after the SST handled it.
  void set_event_handler(std::function<void(const transport::Event&)> h) {
    on_event_ = std::move(h);
  }
  // Polls transport events and reports suspicions; returns true if there were events.
  bool poll_events();
  // Heartbeat push when due, and heartbeat-timeout detection; true if it suspected a peer
  // (a heartbeat sent is no sign of more work coming).
  bool tick();
  // Without heartbeats (the simulator), the tick hook runs here instead, after each step's
  // predicates: what they received is then counted. True if it suspected anyone.
  bool after_step();
  // How long until tick() has something to do (a heartbeat due, a peer's silence reaching
  // the suspicion timeout, an owed push_status_lazy() due); zero when overdue, nullopt
  // without heartbeats. An idle predicate loop sleeps no longer than this.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> tick_due_in() const;
  void suspect(std::size_t rank, transport::SuspicionReason why, std::string detail);
  [[nodiscard]] bool suspected(std::size_t rank) const noexcept {
    return rank < suspected_.size() && suspected_[rank];
  }

  [[nodiscard]] const PushStats& stats() const noexcept { return stats_; }
  // Counts each write batch that posted something into `*n` as well (any thread may read
  // it: group::EngineStats::batches). Set before the loop starts.
  void count_batches(std::atomic<std::uint64_t>* n) noexcept { batch_count_ = n; }
  // Ranges queued for `rank` and not yet handed to the transport (tests; predicate thread).
  [[nodiscard]] std::size_t queued(std::size_t rank) const;
  [[nodiscard]] std::chrono::nanoseconds now() const { return clock_(); }

  // --- local wake-ups ------------------------------------------------------------------
  // The predicate loop marks itself dozing before it sleeps on the transport and checks
  // its predicates once more (predicate thread). A local event that a predicate must see
  // (an application commit) calls nudge() after publishing it (any thread): it rings the
  // transport's wake-up source only while the loop dozes. Both sides fence (seq_cst), so
  // either the loop's last check sees the event or nudge() sees the loop dozing.
  void set_dozing(bool dozing) noexcept {
    dozing_.store(dozing, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  void nudge() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (dozing_.load(std::memory_order_relaxed)) transport_->notify();
  }

 private:
  struct Range {
    std::size_t offset;
    std::size_t len;
  };
  struct PeerQueue {
    std::vector<Range> status;  // sorted by offset, unique offsets
    std::vector<Range> data;    // disjoint, in offset order (push_data merges)
    std::vector<Range> guards;  // sorted by offset, unique offsets
    std::vector<Range> lazy;    // push_status_lazy(): goes with the next flush of the rest
    // Whether nothing is due to go (what is owed lazily waits for more, or its deadline).
    [[nodiscard]] bool empty() const noexcept {
      return status.empty() && data.empty() && guards.empty();
    }
  };
  PeerQueue* queue_for(std::size_t rank);
  // Queues this node's whole row for `rank` (a member that just connected): the control
  // and membership part as status, the counters and sender guards as guards, the rest
  // (slot headers and payloads) as data, so that no guard lands before what it guards.
  void push_row(std::size_t rank);
  bool flush_peer(std::size_t rank, PeerQueue& q);
  // Moves what `q` owes lazily into its status queue (it goes with this flush).
  void take_lazy(PeerQueue& q);
  // Empties what `q` owes lazily (taken, or its peer gone), and the deadline with the last.
  void forget_lazy(PeerQueue& q);

  transport::Transport* transport_;
  group::View group_;
  SstLayout layout_;
  Clock clock_;
  std::size_t my_rank_ = 0;
  transport::RegionId region_ = 0;
  TickHook tick_hook_;
  std::optional<std::chrono::nanoseconds> hook_due_;
  std::byte* base_ = nullptr;
  std::vector<PeerQueue> queues_;
  std::vector<std::size_t> dirty_;                    // ranks with a non-empty queue
  std::size_t lazy_peers_ = 0;                        // ranks whose queue owes something lazily
  std::optional<std::chrono::nanoseconds> lazy_due_;  // when the first of it must go
  bool ride_ = true;                                  // set_ride()
  std::vector<transport::WriteOp> ops_;  // flush_peer's batch, kept to reuse its capacity
  std::vector<char> suspected_;
  std::vector<char> connecting_;  // see connecting()
  std::function<void(std::size_t)> on_connected_;
  std::vector<std::uint64_t> last_heartbeat_;
  std::vector<std::chrono::nanoseconds> heartbeat_seen_at_;
  std::chrono::nanoseconds next_heartbeat_{0};
  std::vector<transport::Event> events_;
  SuspicionHandler on_suspicion_;
  std::function<void(const transport::Event&)> on_event_;
  PushStats stats_;
  std::atomic<std::uint64_t>* batch_count_ = nullptr;
  std::atomic<bool> dozing_{false};
};

}  // namespace spindle::sst

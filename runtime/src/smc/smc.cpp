// SMC subgroup engine: the send, receive (+ null-send), delivery and slot-free predicates
// of one subgroup (see smc.hpp for the ring arithmetic and docs/dev/smc.md for the layout).
#include "smc/smc.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include <spindle/detail/recycle.hpp>

namespace spindle::smc {

void Histogram::add(std::uint64_t n) noexcept {
  if (n == 0) return;
  const auto b = static_cast<std::size_t>(std::bit_width(n - 1));
  ++buckets[std::min(b, kBuckets - 1)];
  ++count;
  total += n;
}

namespace {
constexpr auto kReserveSpin = std::chrono::microseconds(20);
constexpr std::size_t kNumSent = offsetof(sst::SenderGuardRow, num_sent);
constexpr std::size_t kRounds = offsetof(sst::SenderGuardRow, rounds);
constexpr std::size_t kNumStarted = offsetof(sst::SenderGuardRow, num_started);
// A listener copies what it takes out of the ring (a sender may rewrite the slot meanwhile):
// at most this many bytes per receive step, the predicate staying true for the rest.
constexpr std::size_t kListenerBatchBytes = std::size_t{1} << 20;
constexpr std::size_t kReceived = offsetof(sst::CountersRow, received_num);
constexpr std::size_t kDelivered = offsetof(sst::CountersRow, delivered_num);
constexpr std::size_t kDemoted = offsetof(sst::CountersRow, demoted);
constexpr std::size_t kReleased = offsetof(sst::CountersRow, released_num);
// How long an acknowledgement may wait for a frame it can ride on (push_counters): a reply's
// round through the application (take, then write) takes a few microseconds; one that does
// not come costs the sender this much later a look at its slots, never a frame more.
constexpr auto kAckDelay = std::chrono::microseconds(50);
constexpr std::uint64_t kHeadersPerLine = sst::kLine / sizeof(sst::SlotHeader);
}  // namespace

// Holds on messages delivered in place (group::Pins; docs/dev/smc.md, "Pins"): one count per
// sender and slot. Shared by the subgroup's engine and every hold, which may outlive it.
struct PinTable {
  explicit PinTable(std::size_t slots)
      : counts(std::make_unique<std::atomic<std::uint32_t>[]>(slots)) {}
  // A hold ended (any thread): the last one of its slot tells the protocol thread, which is
  // woken once until it looked (a take's many holds end one after another).
  void release(std::size_t slot) noexcept {
    if (counts[slot].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (released.exchange(true, std::memory_order_acq_rel)) return;
    std::lock_guard lock(mu);
    if (sst != nullptr) sst->nudge();
  }
  std::unique_ptr<std::atomic<std::uint32_t>[]> counts;
  std::atomic<bool> released{false};  // a count reached 0 since the protocol thread looked
  std::mutex mu;
  sst::Sst* sst = nullptr;    // woken by release(); null once the engine is gone (under mu)
  std::weak_ptr<void> owner;  // what a hold keeps alive besides (the view: set_pin_owner)
};

namespace {
// One hold: ends its slot's count first, then lets the view go.
struct Hold {
  Hold(std::shared_ptr<PinTable> t, std::shared_ptr<void> o, std::size_t s)
      : table(std::move(t)), owner(std::move(o)), slot(s) {}
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() { table->release(slot); }
  std::shared_ptr<PinTable> table;
  std::shared_ptr<void> owner;
  std::size_t slot;
};
}  // namespace

// Receiver-side state for one sender of the subgroup.
struct SenderCursor {
  std::size_t row = 0;      // the sender's SST rank
  std::size_t guard = 0;    // offset of its SenderGuardRow
  std::size_t headers = 0;  // offset of its header[0]
  std::size_t slots = 0;    // offset of its slot[0]
  std::uint64_t real_seen = 0;
  std::uint64_t rounds_seen = 0;
  std::uint64_t last_round_plus1 = 0;
  std::uint64_t rr = 0;  // rounds accounted for
  std::uint64_t deliver_next = 0;
  std::uint64_t lost = 0;  // listener: skipped since its last delivered message
};

class SubgroupEngine final : public group::Pins {
 public:
  SubgroupEngine(sst::Sst& sst, std::uint32_t index, const DeliveryUpcall& upcall)
      : sst_(&sst), upcall_(&upcall), index_(index) {
    const auto& g = sst.group();
    const auto& sg = g.subgroups[index];
    const auto& layout = sst.layout();
    atomic_ = sg.ordering == group::Ordering::atomic;
    w_ = sg.window_size;
    max_payload_ = sg.max_payload;
    stride_ = layout.slot_stride(index);
    max_batch_ = std::clamp<std::uint64_t>(kMaxPushBytes / stride_, 1, w_);
    me_ = sst.my_rank();
    for (auto id : sg.members) {
      const std::size_t r = *g.rank_of(id);
      const bool listens =
          std::find(sg.listeners.begin(), sg.listeners.end(), id) != sg.listeners.end();
      const bool demotable =
          std::find(sg.demotable.begin(), sg.demotable.end(), id) != sg.demotable.end();
      members_.push_back(r);
      counters_.push_back(layout.columns(r, index).counters);
      holds_.push_back(!listens);
      demotable_.push_back(demotable && sg.lag_bound.count() > 0);
      if (demotable_.back()) lag_bound_ = sg.lag_bound;
      if (demotable_.back() && r == me_) may_be_left_behind_ = true;
      if (r != me_) others_.push_back(r);
      if (listens && r != me_) listener_ranks_.push_back(r);
      if (listens && r == me_) listener_ = true;
    }
    for (std::size_t r = 0; r < g.members.size(); ++r)
      if (std::find(members_.begin(), members_.end(), r) == members_.end()) outsiders_.push_back(r);
    const auto& mine = layout.columns(me_, index);
    // The `demoted` column: in the CountersRow (atomic), or after the per-sender counts.
    demoted_at_ = atomic_ ? kDemoted : sizeof(std::uint64_t) * sg.senders.size();
    my_counters_ = mine.counters;
    counters_len_ = mine.counters_len;
    for (std::size_t i = 0; i < sg.senders.size(); ++i) {
      const std::size_t r = *g.rank_of(sg.senders[i]);
      const auto& c = layout.columns(r, index);
      senders_.push_back(
          SenderCursor{.row = r, .guard = c.guard, .headers = c.headers, .slots = c.slots});
      sender_nodes_.push_back(sg.senders[i]);
      if (r == me_) my_sender_ = i;
      if (r != me_) others_send_ = true;
    }
    if (my_sender_) {
      committed_ = std::make_unique<std::atomic<std::uint64_t>[]>(w_);
      for (std::uint32_t i = 0; i < w_; ++i)
        committed_[i].store(0, std::memory_order_relaxed);
      round_of_.assign(w_, 0);
      my_guard_ = mine.guard;
      my_headers_ = mine.headers;
      my_slots_ = mine.slots;
    }
    // Messages are delivered in place (and may be held) where this member holds the ring
    // and no lag may leave it behind (it would read copies: deliver()).
    if (atomic_ && !listener_ && !may_be_left_behind_) {
      pins_ = std::make_shared<PinTable>(senders_.size() * w_);
      pins_->sst = sst_;
    }
  }
  ~SubgroupEngine() override {
    if (!pins_) return;
    std::lock_guard lock(pins_->mu);
    pins_->sst = nullptr;
  }
  SubgroupEngine(const SubgroupEngine&) = delete;
  SubgroupEngine& operator=(const SubgroupEngine&) = delete;

  // --- pins (group::Pins) ------------------------------------------------------------------
  void set_pin_owner(const std::weak_ptr<void>& owner, const PinRelief* relief) {
    if (pins_) pins_->owner = owner;
    relief_ = relief;
  }
  // During the delivery upcall, for a message of its batch delivered in place.
  std::shared_ptr<const void> pin(const group::Message& m) override {
    if (!pins_ || !in_upcall_ || m.sender_rank >= senders_.size() || m.seq < upcall_first_ ||
        m.seq > upcall_last_)
      return nullptr;
    auto owner = pins_->owner.lock();
    if (!owner) return nullptr;
    const std::size_t slot = pin_slot(m.sender_rank, m.index);
    if (pins_->counts[slot].fetch_add(1, std::memory_order_relaxed) == 0)
      pinned_.push_back(Pinned{m.seq, m.index, m.sender_rank});
    return std::allocate_shared<Hold>(detail::PoolAllocator<Hold>{}, pins_, std::move(owner), slot);
  }

  void register_predicates(sst::Predicates& p, std::vector<sst::Predicates::Id>& ids) {
    using K = sst::PredicateKind;
    if (my_sender_) {
      ids.push_back(p.add(
          K::recurrent, [this] { return send_ready(); }, [this] { send(); }));
    }
    if (listener_) {
      ids.push_back(p.add(
          K::recurrent, [this] { return listen_ready(); }, [this] { listen(); }));
      return;
    }
    ids.push_back(p.add(
        K::recurrent, [this] { return receive_ready(); }, [this] { receive(); }));
    if (atomic_) {
      ids.push_back(p.add(
          K::recurrent, [this] { return deliverable(); }, [this] { deliver(); }));
    }
    if (pins_) {
      ids.push_back(p.add(
          K::recurrent, [this] { return pins_->released.load(std::memory_order_acquire); },
          [this] {
            pins_->released.store(false, std::memory_order_relaxed);
            update_released();
          }));
    }
    if (my_sender_) {
      ids.push_back(p.add(
          K::recurrent, [this] { return freeable(); }, [this] { free_slots(); }));
    }
    ids.push_back(p.add(
        K::recurrent, [this] { return counters_dirty_; }, [this] { push_counters(); }));
  }

  // --- application threads ---------------------------------------------------------------
  Reservation reserve(std::uint32_t size) noexcept {
    if (!my_sender_) return Reservation{ReserveStatus::not_sender};
    if (wedged_.load(std::memory_order_acquire)) return Reservation{ReserveStatus::wedged};
    if (size > max_payload_) return Reservation{ReserveStatus::too_large};
    std::uint64_t r = reserved_.load(std::memory_order_relaxed);
    do {
      if (r >= freed_.load(std::memory_order_acquire) + w_) return Reservation{ReserveStatus::full};
    } while (!reserved_.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel,
                                              std::memory_order_relaxed));
    // The slot held message r - w, which a member taking copies may be reading — a listener,
    // or a member left behind (one that holds has delivered it, or the slot would not be
    // free): announce its rewrite before the writer touches it (where our row is in place,
    // the others see each byte as it is written). The protocol thread publishes who is left
    // behind before the freed count that let this reservation through.
    if (r >= w_ && (!listener_ranks_.empty() || left_behind_.load(std::memory_order_relaxed)))
      raise_started(r + 1);
    return Reservation{ReserveStatus::ok, sst_->at(slot_offset(my_slots_, r)), max_payload_, r};
  }

  // num_started = max(num_started, v), ordered before the stores that follow (the slot's).
  void raise_started(std::uint64_t v) noexcept {
    std::atomic_ref<std::uint64_t> started(
        *reinterpret_cast<std::uint64_t*>(sst_->at(my_guard_ + kNumStarted)));
    std::uint64_t cur = started.load(std::memory_order_relaxed);
    while (cur < v && !started.compare_exchange_weak(cur, v, std::memory_order_seq_cst,
                                                     std::memory_order_relaxed)) {
    }
  }

  void commit(const Reservation& res, std::uint32_t size, std::uint32_t flags, bool open,
              bool nudge) noexcept {
    auto* h = my_header(static_cast<std::size_t>(res.index % w_));
    if (res.appended) {
      // Ours alone while the bit is on: nobody else reads or writes the size now.
      h->size = res.offset + std::min(size, res.capacity);
      open_.store((res.index + 1) << 1, std::memory_order_release);
      if (nudge) sst_->nudge();
      return;
    }
    h->size = std::min(size, res.capacity);
    h->flags = flags & ~sst::kSlotNull;
    if (open) {
      // Before the committed store: the send predicate, which takes the slot only once that
      // is seen, then finds it open and seals it. Only forward, and never over an appender.
      const std::uint64_t mine = (res.index + 1) << 1;
      std::uint64_t cur = open_.load(std::memory_order_relaxed);
      while ((cur & 1) == 0 && cur < mine &&
             !open_.compare_exchange_weak(cur, mine, std::memory_order_release,
                                          std::memory_order_relaxed)) {
      }
    }
    committed_[res.index % w_].store(res.index + 1, std::memory_order_release);
    if (nudge) sst_->nudge();  // a dozing predicate loop must send it now
  }

  Reservation append(std::uint32_t size) noexcept {
    if (!my_sender_ || wedged_.load(std::memory_order_acquire))
      return Reservation{ReserveStatus::closed};
    std::uint64_t cur = open_.load(std::memory_order_acquire);
    if (cur == 0 || (cur & 1) != 0 ||
        !open_.compare_exchange_strong(cur, cur | 1, std::memory_order_acquire,
                                       std::memory_order_relaxed))
      return Reservation{ReserveStatus::closed};
    const std::uint64_t r = (cur >> 1) - 1;
    const std::uint32_t at = (my_header(static_cast<std::size_t>(r % w_))->size + 7u) & ~7u;
    // A later slot reserved: a message added here would go before it, so another thread's
    // next message could overtake its last.
    if (reserved_.load(std::memory_order_acquire) != r + 1 || at >= max_payload_ ||
        size > max_payload_ - at) {
      open_.store(cur, std::memory_order_release);
      return Reservation{ReserveStatus::closed};
    }
    return Reservation{ReserveStatus::ok,
                       sst_->at(slot_offset(my_slots_, r)) + at,
                       max_payload_ - at,
                       r,
                       at,
                       true};
  }

  void cancel_append(const Reservation& res) noexcept {
    if (res.appended) open_.store((res.index + 1) << 1, std::memory_order_release);
  }

  // The send predicate, run by whoever steps the loop now (a writer, Smc::push).
  bool push() {
    if (!my_sender_ || !send_ready()) return false;
    send();
    // Our counters moved with it (our own messages count as received once sent): they go in
    // the same flush, ahead of the data, as the loop's step sends them. Without them a
    // receiver has the message but not our received_num, and delivers it only once a later
    // flush brings that (one more send over tcp, and a hop, per message).
    if (counters_dirty_) push_counters();
    return true;
  }

  // reserve(), sleeping while the ring is full until a slot frees or `deadline` passes.
  // It first yield-spins for kReserveSpin: slots usually free within a few microseconds
  // (one delivery round), and a writer put to sleep takes a futex wake-up and a context
  // switch to resume, during which its ring runs dry (shm, 2 members all sending: atomic/raw
  // median 0.58 without the spin, 0.65 with 20 us).
  Reservation reserve_wait(std::uint32_t size, std::chrono::steady_clock::time_point deadline) {
    if (Reservation r = reserve(size); r.status != ReserveStatus::full) return r;  // no clock read
    const auto spin_until = std::chrono::steady_clock::now() + kReserveSpin;
    for (;;) {
      const std::uint32_t ticket = space_.ticket();
      Reservation r = reserve(size);
      if (r.status != ReserveStatus::full) return r;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return r;
      if (now < spin_until) {
        std::this_thread::yield();  // the predicate thread that frees slots may need the core
        continue;
      }
      space_.wait(ticket, deadline - now);
    }
  }

  // No reservation from now on; writers sleeping in reserve_wait() return `wedged` now.
  void wedge() noexcept {
    wedged_.store(true, std::memory_order_release);
    space_.ring();
  }

  // --- view change (predicate thread) --------------------------------------------------
  // Stops sending, receiving and delivering in this view; the counters as they stand are
  // final and pushed once more. Reservations are refused (wedge()).
  void freeze() {
    wedge();
    frozen_ = true;
    counters_dirty_ = true;
    // Members outside this subgroup get the final counters too (Smc::trim of a
    // non-member). Statuses are flushed before guards, so they land before `wedged`.
    for (auto r : outsiders_)
      sst_->push_status(r, my_counters_, counters_len_);
  }
  // The highest global seq every member outside `removed` (bit per SST rank) received:
  // final once all of them are frozen. Atomic subgroups only; -1 otherwise.
  [[nodiscard]] std::int64_t trim(const sst::MemberSet& removed) const {
    if (!atomic_) return -1;
    // A listener's own count does not bound it: it delivers nothing in the total order; nor
    // does a member left behind (the union of the final rows says who: docs/dev/smc.md).
    const sst::MemberSet behind = union_of_rows();
    std::int64_t t =
        listener_ || behind.test(me_) ? std::numeric_limits<std::int64_t>::max() : received_num_;
    for (std::size_t k = 0; k < members_.size(); ++k) {
      if (members_[k] == me_ || !holds_[k] || removed.test(members_[k])) continue;
      if (behind.test(members_[k])) continue;
      t = std::min(t, sst_->load<std::int64_t>(counters_[k] + kReceived));
    }
    return t == std::numeric_limits<std::int64_t>::max() ? -1 : t;
  }
  // Delivers, in order, every message up to global seq `trim` not delivered yet (the
  // ragged edge of a view change; trim <= our received_num).
  void deliver_to(std::int64_t trim) {
    if (!atomic_) {
      drain();
      return;
    }
    if (listener_ || trim <= delivered_num_) return;
    const std::int64_t target = std::min(trim, received_num_);
    stable_ = target;
    deliver();
    // A member left behind copies at most 1 MiB per step: the ragged edge needs it all.
    while (catching_up_ && delivered_num_ < target) {
      stable_ = target;
      catch_up();
    }
  }
  // Unordered, at a view change: everything each sender pushed before it froze (its final
  // guard; the caller waited for its `wedged`, which lands after it) is taken, so no
  // member that stays misses a message a sender that stays sent in this view. A
  // listener, or a member left behind, takes what its ring still holds.
  void drain() {
    for (;;) {
      bool more = false;
      for (std::size_t i = 0; i < senders_.size(); ++i) {
        if (my_sender_ && i == *my_sender_) continue;
        const auto n = sst_->load<std::uint64_t>(senders_[i].guard + kNumSent);
        if (n != (listener_ || catching_up_ ? senders_[i].deliver_next : senders_[i].real_seen))
          more = true;
      }
      if (!more) return;
      if (listener_) {
        listen();
      } else {
        receive();
      }
    }
  }
  // Our messages the next view must carry again, in order: sent ones past `trim` (atomic;
  // nobody delivered them) and committed ones never sent. The bytes are in this view's
  // slots, valid while it lives.
  [[nodiscard]] std::vector<Unsent> resend(std::int64_t trim, const sst::MemberSet& removed) const {
    std::vector<Unsent> out;
    if (!my_sender_) return out;
    const auto n = senders_.size();
    // Unordered: the least any member that stays (a listener aside) took of ours, by its
    // final counts (pushed before its `wedged`).
    std::uint64_t floor = sent_;
    if (!atomic_) {
      for (std::size_t m = 0; m < members_.size(); ++m) {
        if (members_[m] == me_ || !holds_[m] || removed.test(members_[m])) continue;
        floor = std::min(
            floor, sst_->load<std::uint64_t>(counters_[m] + *my_sender_ * sizeof(std::uint64_t)));
      }
    }
    const std::uint64_t reserved = reserved_.load(std::memory_order_acquire);
    for (std::uint64_t r = freed_.load(std::memory_order_acquire); r < reserved; ++r) {
      const auto k = static_cast<std::size_t>(r % w_);
      if (r < sent_) {
        if (!atomic_ ? r < floor
                     : static_cast<std::int64_t>(round_of_[k] * n + *my_sender_) <= trim)
          continue;
      } else if (committed_[k].load(std::memory_order_acquire) != r + 1) {
        continue;  // reserved, not committed: its owner commits it into the next view
      }
      const auto& h = header(my_headers_, k);
      const std::uint32_t size = std::min(h.size, max_payload_);
      out.push_back(Unsent{r, {sst_->at(slot_offset(my_slots_, r)), size}, h.flags});
    }
    return out;
  }

  // Reserved and not yet delivered by every member that holds the ring (a slot held in
  // place past its delivery counts as delivered here, though not yet free).
  [[nodiscard]] std::uint64_t in_flight() const noexcept {
    return reserved_.load(std::memory_order_acquire) - acked_.load(std::memory_order_acquire);
  }
  // Slots reserved, and delivered by every member, since the view began.
  [[nodiscard]] std::uint64_t reserved_count() const noexcept {
    return reserved_.load(std::memory_order_acquire);
  }
  [[nodiscard]] std::uint64_t acked_count() const noexcept {
    return acked_.load(std::memory_order_acquire);
  }
  [[nodiscard]] bool sender() const noexcept { return my_sender_.has_value(); }

  // --- predicate thread ------------------------------------------------------------------
  const SubgroupStats& stats() const noexcept { return stats_; }
  std::int64_t delivered_num() const noexcept { return delivered_num_; }

  // A relief whose grace ran out by `now` is asked for; one still to come is due by `due`.
  void check_relief(std::chrono::nanoseconds now, std::optional<std::chrono::nanoseconds>& due) {
    if (!relief_due_) return;
    if (now >= *relief_due_) update_released(now);
    if (relief_due_ && (!due || *relief_due_ < *due)) due = relief_due_;
  }

  // Progress (docs/membership.md, "Failure detection"): a member of this atomic subgroup
  // whose counters have not moved for `timeout` while another member's are ahead of them
  // takes no part in the stream: suspected (the ring waits for it, so everyone stops).
  bool check_progress(std::chrono::nanoseconds now, std::chrono::nanoseconds timeout,
                      const sst::MemberSet& exempt, std::optional<std::chrono::nanoseconds>& due,
                      bool& rejoin, bool& demoted) {
    if (counters_owed_) push_counters_now();
    // Unordered subgroups are looked at only where a member may be left behind (nobody is
    // suspected for want of progress there).
    if ((!atomic_ && lag_bound_.count() == 0) || listener_ || frozen_ ||
        stalled_.load(std::memory_order_relaxed))
      return false;
    if (progress_.size() != members_.size()) progress_.assign(members_.size(), Progress{});
    refresh_demoted();
    // Unordered: a member's progress is the sum of its per-sender counts.
    const auto sum_of = [this](std::size_t counters) {
      std::int64_t sum = 0;
      for (std::size_t j = 0; j < senders_.size(); ++j)
        sum += static_cast<std::int64_t>(
            sst_->load<std::uint64_t>(counters + j * sizeof(std::uint64_t)));
      return sum;
    };
    const std::int64_t my_received = atomic_ ? received_num_ : sum_of(my_counters_);
    const std::int64_t my_delivered = atomic_ ? delivered_num_ : my_received;
    std::int64_t most_received = my_received;
    std::int64_t most_delivered = my_delivered;
    std::int64_t least_delivered = std::numeric_limits<std::int64_t>::max();
    for (std::size_t k = 0; k < members_.size(); ++k) {
      if (members_[k] == me_ || !holds_[k]) continue;
      auto& p = progress_[k];
      if (atomic_) {
        p.received = sst_->load<std::int64_t>(counters_[k] + kReceived);
        p.delivered = sst_->load<std::int64_t>(counters_[k] + kDelivered);
      } else {
        p.received = p.delivered = sum_of(counters_[k]);
      }
      if (!holding(k)) continue;
      most_received = std::max(most_received, p.received);
      most_delivered = std::max(most_delivered, p.delivered);
      least_delivered = std::min(least_delivered, p.delivered);
    }
    if (catching_up_ && !rejoin_asked_ &&
        (least_delivered == std::numeric_limits<std::int64_t>::max() ||
         my_delivered >= least_delivered)) {
      // Left behind and caught up with what the ring holds for the others: the next view
      // takes this member back as one that holds.
      rejoin_asked_ = true;
      rejoin = true;
    }
    bool did = false;
    // While the stream moves, a demotable member is looked at every quarter of the lag bound
    // (a heartbeat interval may be longer than the bound): a lag then shows within 1.25
    // bounds of its start, plus a step.
    bool look_soon = lag_bound_.count() > 0 && !catching_up_ && my_received != checked_received_;
    checked_received_ = my_received;
    for (std::size_t k = 0; k < members_.size(); ++k) {
      // A listener may fall behind: nobody waits for it. Nor for a member left behind, but
      // one whose counters stand still for the suspicion timeout is suspected all the same
      // (a half-dead member whose heartbeat goes on would never catch up).
      if (members_[k] == me_ || !holds_[k] || sst_->suspected(members_[k])) continue;
      auto& p = progress_[k];
      if (exempt.test(members_[k])) {
        p.since = now;  // wedged for a view change: its stream stops on purpose
        continue;
      }
      const bool moved = p.received != p.last_received || p.delivered != p.last_delivered;
      const bool behind = p.received < most_received || p.delivered < most_delivered;
      // The clock runs from the first check that saw it behind and standing still: a
      // member level at the last check (an idle stream) has owed nothing for long.
      if (moved || !behind || p.since.count() == 0 || !p.behind) {
        p.last_received = p.received;
        p.last_delivered = p.delivered;
        p.since = now;
        p.behind = behind;
        if (behind && demotable_[k] && holding(k) && !catching_up_) look_soon = true;
        continue;
      }
      if (demotable_[k] && !catching_up_ && holding(k)) {
        if (now - p.since <= lag_bound_) {
          const auto at = p.since + lag_bound_ + std::chrono::nanoseconds(1);
          due = due ? std::min(*due, at) : at;
          continue;
        }
        demote(k);
        demoted = true;
        continue;
      }
      if (!atomic_) continue;
      if (now - p.since <= timeout) {
        const auto at = p.since + timeout + std::chrono::nanoseconds(1);
        due = due ? std::min(*due, at) : at;
        continue;
      }
      sst_->suspect(members_[k], transport::SuspicionReason::no_progress,
                    "node " + std::to_string(sst_->node_of(members_[k])) + " received " +
                        std::to_string(p.received + 1) + " and delivered " +
                        std::to_string(p.delivered + 1) + " messages of subgroup " +
                        std::to_string(index_) + " for " +
                        std::to_string((now - p.since).count() / 1'000'000) +
                        " ms while others went on to " + std::to_string(most_received + 1));
      did = true;
    }
    if (look_soon) {
      const auto at = now + lag_bound_ / 4;
      due = due ? std::min(*due, at) : at;
    }
    return did;
  }

  // Fault injection (tests): this member stops receiving and delivering, heartbeats going on.
  void stall() noexcept { stalled_.store(true, std::memory_order_relaxed); }
  void resume() noexcept { stalled_.store(false, std::memory_order_relaxed); }
  [[nodiscard]] bool left_behind() const noexcept { return catching_up_; }
  [[nodiscard]] sst::MemberSet left_behind_ranks() const { return union_of_rows(); }
  bool leave_behind(std::size_t rank) {
    if (lag_bound_.count() == 0 || frozen_) return false;
    refresh_demoted();
    for (std::size_t k = 0; k < members_.size(); ++k) {
      if (members_[k] != rank || members_[k] == me_) continue;
      if (!demotable_[k] || !holding(k)) return false;
      demote(k);
      return true;
    }
    return false;
  }

 private:
  [[nodiscard]] std::size_t slot_offset(std::size_t slots, std::uint64_t r) const noexcept {
    return slots + static_cast<std::size_t>(r % w_) * stride_;
  }
  // Header of ring position k (= message index % w_) of the ring whose headers start at
  // `headers`.
  [[nodiscard]] const sst::SlotHeader& header(std::size_t headers, std::size_t k) const noexcept {
    return *reinterpret_cast<const sst::SlotHeader*>(
        sst_->at(headers + k * sizeof(sst::SlotHeader)));
  }
  [[nodiscard]] sst::SlotHeader* my_header(std::size_t k) noexcept {
    return reinterpret_cast<sst::SlotHeader*>(sst_->at(my_headers_ + k * sizeof(sst::SlotHeader)));
  }
  // fn(r, k) for every message r in [first, last), k = r % w_: one 64-bit division for the
  // range instead of one per message.
  template <class F>
  void for_slots(std::uint64_t first, std::uint64_t last, F&& fn) const {
    auto k = static_cast<std::size_t>(first % w_);
    for (std::uint64_t r = first; r < last; ++r) {
      fn(r, k);
      if (++k == w_) k = 0;
    }
  }

  bool send_ready() const noexcept {
    // Not while the next slot is being added to (its appender nudges once it is done).
    return !frozen_ && committed_[sent_ % w_].load(std::memory_order_acquire) == sent_ + 1 &&
           open_.load(std::memory_order_relaxed) != (((sent_ + 1) << 1) | 1);
  }

  // Send predicate's trigger: every committed contiguous slot in one batch (up to kMaxPushBytes;
  // the predicate stays true for the rest).
  void send() {
    const std::uint64_t first = sent_;
    std::uint64_t last = first;
    while (last - first < max_batch_ &&
           committed_[last % w_].load(std::memory_order_acquire) == last + 1)
      ++last;
    // A slot that takes appends is sealed before it goes (nobody adds to it after); one being
    // added to right now goes next time, with the slots before it going now.
    for (std::uint64_t cur = open_.load(std::memory_order_acquire); cur != 0;) {
      const std::uint64_t o = (cur >> 1) - 1;
      if (o < first || o >= last) break;
      if ((cur & 1) != 0) {
        last = o;
        break;
      }
      if (open_.compare_exchange_weak(cur, 0, std::memory_order_acq_rel, std::memory_order_acquire))
        break;
    }
    if (last == first) return;
    const std::uint64_t n = last - first;
    const std::size_t rank = *my_sender_;
    for_slots(first, last, [&](std::uint64_t, std::size_t k) {
      my_header(k)->round = rounds_;
      round_of_[k] = rounds_;
      ++rounds_;
    });
    sent_ = last;
    if (!listener_ranks_.empty() || demoted_.any()) {
      // Listeners and members left behind first learn which slots are being rewritten (a
      // status push: flushed ahead of the payloads), so that a copy they take meanwhile is
      // known to be torn.
      raise_started(sent_);  // never below what a reservation raised it to
      for (auto r : listener_ranks_)
        sst_->push_status(r, my_guard_ + kNumStarted, sizeof(std::uint64_t));
      for (auto r : others_)
        if (demoted_.test(r)) sst_->push_status(r, my_guard_ + kNumStarted, sizeof(std::uint64_t));
    }
    sst_->store<std::uint64_t>(my_guard_ + kNumSent, sent_);
    if (atomic_) {
      // Our own messages count as received as soon as they are sent; nulls are implied by
      // the rounds of real messages, so `rounds` in the row only moves on null-sends.
      auto& me = senders_[rank];
      me.real_seen = sent_;
      me.last_round_plus1 = rounds_;
      me.rr = rounds_;
      recompute_received();
    }
    // Slots [first, last): per peer the payloads' used bytes and one write of their headers
    // (two when the range wraps around the ring). Neighbouring slots share a write while
    // the unused tail between them is at most kMaxGap bytes; past that a write ends where
    // its last payload does, so small samples in large slots cost their own bytes, not the
    // slot's (64 B samples in 1 KiB slots: 1/16 of the copy).
    auto queue = [&](std::uint64_t a, std::uint64_t b) {
      const auto ka = static_cast<std::size_t>(a % w_);
      const auto count = static_cast<std::size_t>(b - a);
      ranges_.clear();
      std::size_t start = my_slots_ + ka * stride_;
      std::size_t end = start + header(my_headers_, ka).size;
      for (std::size_t i = 1; i < count; ++i) {
        const std::size_t k = ka + i;
        const std::size_t at = my_slots_ + k * stride_;
        if (at - end > kMaxGap) {
          ranges_.push_back({start, end - start});
          start = at;
        }
        end = at + header(my_headers_, k).size;
      }
      ranges_.push_back({start, end - start});
      const std::size_t hoff = my_headers_ + ka * sizeof(sst::SlotHeader);
      const std::size_t hlen = count * sizeof(sst::SlotHeader);
      for (auto r : others_) {
        for (const auto& [off, len] : ranges_)
          sst_->push_data(r, off, len);
        sst_->push_data(r, hoff, hlen);
      }
    };
    const std::uint64_t wrap = (first / w_ + 1) * w_;
    if (last <= wrap) {
      queue(first, last);
    } else {
      queue(first, wrap);
      queue(wrap, last);
    }
    for (auto r : others_)
      sst_->push_guard(r, my_guard_ + kNumSent, sizeof(std::uint64_t));
    stats_.sent += n;
    stats_.send_batches.add(n);
    if (!atomic_) {
      // Unordered: delivered to ourselves on send (on receipt).
      batch_.clear();
      for_slots(first, last, [&](std::uint64_t r, std::size_t k) {
        batch_.push_back(make_message(rank, r, k, -1));
      });
      senders_[rank].deliver_next = last;
      counts_due_.push_back(rank);
      emit();
    }
  }

  // A cheap check of every other sender's guards.
  bool receive_ready() const noexcept {
    if (frozen_ || stalled_.load(std::memory_order_relaxed)) return false;
    for (std::size_t i = 0; i < senders_.size(); ++i) {
      if (my_sender_ && i == *my_sender_) continue;
      const auto& c = senders_[i];
      if (sst_->load<std::uint64_t>(c.guard + kNumSent) != c.real_seen) return true;
      if (atomic_ && sst_->load<std::uint64_t>(c.guard + kRounds) != c.rounds_seen) return true;
    }
    return false;
  }

  // Receive predicate's trigger: takes every new message of every sender up to its guard,
  // advances received_num once, sends the nulls owed as one counter update.
  void receive() {
    // Left behind (possibly just now): what the rings hold may be rewritten while it is read.
    refresh_demoted();
    // Unordered messages are delivered on receipt: a member that a lag may leave behind
    // takes copies, checked whole, as a listener does (deliver() says why).
    if (takes_copies() && !atomic_) {
      listen();
      return;
    }
    std::uint64_t taken = 0;
    if (!atomic_) batch_.clear();
    for (std::size_t i = 0; i < senders_.size(); ++i) {
      if (my_sender_ && i == *my_sender_) continue;
      auto& c = senders_[i];
      const std::uint64_t rounds = atomic_ ? sst_->load<std::uint64_t>(c.guard + kRounds) : 0;
      const std::uint64_t n = sst_->load<std::uint64_t>(c.guard + kNumSent);
      if (n == c.real_seen && rounds == c.rounds_seen) continue;
      taken += n - c.real_seen;
      // The new headers were just written by the sender's core: fetch their lines at once,
      // so the delivery walk does not miss on them in series.
      for (std::uint64_t r = c.real_seen; r < n; r += kHeadersPerLine)
        __builtin_prefetch(&header(c.headers, static_cast<std::size_t>(r % w_)));
      if (atomic_) {
        if (n > c.real_seen) {
          const auto round = header(c.headers, static_cast<std::size_t>((n - 1) % w_)).round;
          // Left behind, the slot may already hold a later message (a torn read): its round
          // would claim rounds not seen yet. Take the guard again later.
          std::atomic_thread_fence(std::memory_order_acquire);
          if (takes_copies() && sst_->load<std::uint64_t>(c.guard + kNumStarted) > n - 1 + w_)
            continue;
          c.last_round_plus1 = round + 1;
        }
        c.rounds_seen = rounds;
        c.real_seen = n;
        c.rr = std::max(c.rounds_seen, c.last_round_plus1);
      } else {
        for_slots(c.real_seen, n, [&](std::uint64_t r, std::size_t k) {
          batch_.push_back(make_message(i, r, k, -1));
        });
        c.real_seen = n;
        c.deliver_next = n;
        counts_due_.push_back(i);
      }
    }
    if (taken > 0) stats_.receive_batches.add(taken);
    if (!atomic_) {
      emit();
      return;
    }
    if (my_sender_) send_nulls();
    recompute_received();
  }

  // --- listener (group::Subgroup::listeners, docs/dev/smc.md "Listeners") --------------------
  // Some sender sent something this listener has not taken.
  bool listen_ready() const noexcept {
    if (frozen_ || stalled_.load(std::memory_order_relaxed)) return false;
    for (const auto& c : senders_)
      if (sst_->load<std::uint64_t>(c.guard + kNumSent) != c.deliver_next) return true;
    return false;
  }

  // Takes, per sender in order, what the ring still holds, copied out (nobody waits for a
  // listener, so a sender may rewrite a slot while it is read), and delivers it as one
  // upcall, each sender's messages in order (seq -1: a listener is outside the total
  // order). Messages overwritten before they were taken, or while they were copied, are
  // skipped and counted (stats().lost); the layers above see the gap in the sender's own
  // numbering.
  void listen() {
    batch_.clear();
    copies_.clear();
    taken_.clear();
    for (std::size_t i = 0; i < senders_.size(); ++i) {
      auto& c = senders_[i];
      const std::uint64_t n = sst_->load<std::uint64_t>(c.guard + kNumSent);
      if (n == c.deliver_next) continue;
      if (n - c.deliver_next > w_) {  // lapped: the ring holds the last w_ only
        stats_.lost += n - w_ - c.deliver_next;
        c.lost += n - w_ - c.deliver_next;
        c.deliver_next = n - w_;
      }
      std::uint64_t m = c.deliver_next;
      for (; m < n && copies_.size() < kListenerBatchBytes; ++m) {
        const auto k = static_cast<std::size_t>(m % w_);
        const auto& h = header(c.headers, k);
        const std::uint32_t size = std::min(h.size, max_payload_);
        const std::size_t at = copies_.size();
        copies_.resize(at + size);
        std::memcpy(copies_.data() + at, sst_->at(c.slots + k * stride_), size);
        taken_.push_back(Taken{i, m, at, size, h.flags});
      }
      c.deliver_next = m;
      if (!listener_) {  // a member that takes copies (takes_copies()): its counts follow
        c.real_seen = m;
        counts_due_.push_back(i);
      }
    }
    batch_whole_copies(true);
    emit();
  }

  // The copies in taken_ that are whole go into batch_; the others are counted lost. Message
  // m's slot is rewritten only for message m + w_, and its sender raised num_started past
  // m + w_ before it wrote there. `listened`: taken on receipt by a listener (Message).
  void batch_whole_copies(bool listened) {
    std::atomic_thread_fence(std::memory_order_acquire);
    for (const auto& t : taken_) {
      auto& c = senders_[t.sender];
      if (sst_->load<std::uint64_t>(c.guard + kNumStarted) > t.index + w_) {
        ++stats_.lost;
        ++c.lost;
        continue;
      }
      batch_.push_back(Message{index_,
                               sender_nodes_[t.sender],
                               static_cast<std::uint32_t>(t.sender),
                               t.index,
                               t.seq,
                               {copies_.data() + t.offset, t.size},
                               t.flags,
                               std::exchange(c.lost, 0),
                               listened});
    }
  }

  // Null-send rule (Spindle §III-B): after receiving, if our next message would precede the
  // latest message of some other sender in the round-robin order, account for the rounds
  // in between as nulls, all in one `rounds` update.
  void send_nulls() {
    const std::size_t i = *my_sender_;
    std::uint64_t target = rounds_;
    for (std::size_t j = 0; j < senders_.size(); ++j) {
      if (j == i) continue;
      const std::uint64_t rr = senders_[j].rr;
      const std::uint64_t need = i < j ? rr : (rr == 0 ? 0 : rr - 1);
      target = std::max(target, need);
    }
    if (target == rounds_) return;
    // Committed messages go first, as real messages in those rounds.
    if (send_ready()) send();
    if (target <= rounds_) return;
    stats_.nulls += target - rounds_;
    ++stats_.null_updates;
    rounds_ = target;
    sst_->store<std::uint64_t>(my_guard_ + kRounds, rounds_);
    auto& me = senders_[i];
    me.rounds_seen = rounds_;
    me.rr = rounds_;
    for (auto r : others_)
      sst_->push_guard(r, my_guard_ + kRounds, sizeof(std::uint64_t));
  }

  void recompute_received() {
    if (senders_.empty()) return;
    std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
    std::size_t first = 0;
    for (std::size_t j = 0; j < senders_.size(); ++j) {
      if (senders_[j].rr < m) {
        m = senders_[j].rr;
        first = j;
      }
    }
    const auto received = static_cast<std::int64_t>(m * senders_.size() + first) - 1;
    if (received > received_num_) {
      received_num_ = received;
      sst_->store<std::int64_t>(my_counters_ + kReceived, received_num_);
      counters_dirty_ = true;
    }
  }

  // Delivery predicate: stable = min(received_num over members) passed delivered_num.
  bool deliverable() {
    if (frozen_ || received_num_ <= delivered_num_ || stalled_.load(std::memory_order_relaxed))
      return false;
    refresh_demoted();
    std::int64_t stable = received_num_;
    if (catching_up_) {
      // Left behind: up to what some holder delivered (stable, so it survives any view
      // change), not further than this member received.
      std::int64_t most = -1;
      for (std::size_t k = 0; k < members_.size(); ++k)
        if (members_[k] != me_ && holding(k))
          most = std::max(most, sst_->load<std::int64_t>(counters_[k] + kDelivered));
      stable = std::min(stable, most);
    } else {
      for (std::size_t k = 0; k < members_.size() && stable > delivered_num_; ++k) {
        if (members_[k] == me_ || !holding(k)) continue;
        stable = std::min(stable, sst_->load<std::int64_t>(counters_[k] + kReceived));
      }
    }
    stable_ = stable;
    return stable > delivered_num_;
  }

  // Its trigger: everything up to stable, in order, as one upcall; then delivered_num once.
  void deliver() {
    // A member that a lag may leave behind delivers copies, checked whole (catch_up), from
    // the start: a sender that leaves it behind stops waiting for it at once and rewrites its
    // slots, and this member learns it from the same stream, maybe only after a rewrite
    // landed. Over tcp the rewrite lands from the receiving thread while the layers above
    // still read a message in place: one instance's key with another's value, or a newer
    // value under an older writer number (issue 60: a KEEP_LAST reader's instance went back).
    if (takes_copies()) {
      catch_up();
      return;
    }
    const std::int64_t stable = stable_;
    batch_.clear();
    // Global seq g is message `g / n` of sender `g % n`: walk both without dividing.
    const auto n = senders_.size();
    const auto first = static_cast<std::uint64_t>(delivered_num_ + 1);
    auto i = static_cast<std::size_t>(first % n);
    std::uint64_t round = first / n;
    for (std::int64_t g = delivered_num_ + 1; g <= stable; ++g) {
      auto& c = senders_[i];
      if (c.deliver_next < c.real_seen) {
        const auto k = static_cast<std::size_t>(c.deliver_next % w_);
        if (header(c.headers, k).round == round) {
          batch_.push_back(make_message(i, c.deliver_next, k, g));
          if (pins_) batch_.back().pins = this;
          ++c.deliver_next;
        }
      }
      if (++i == n) {
        i = 0;
        ++round;
      }
    }
    delivered_num_ = stable;
    delivered_due_ = true;
    emit();
  }

  // Slot reuse: a slot is free once every member delivered its message. The predicate
  // computes how far; the trigger publishes it to reserve().
  // A slot held in place (pins) is delivered but not free: `acked_` counts what every member
  // delivered, `freed_` what every member also let go of.
  bool freeable() {
    const std::uint64_t freed = freed_.load(std::memory_order_relaxed);
    if (freed >= sent_) return false;
    const std::uint64_t acked = acked_.load(std::memory_order_relaxed);
    compute_freed(freed, acked);
    return next_freed_ > freed || next_acked_ > acked;
  }
  // Writers blocked on a full ring are woken once a quarter of it is free (or everything
  // in flight was delivered): waking them per freed slot would cost a context switch per
  // message and shrink the next send batch to one.
  void free_slots() {
    acked_.store(std::max(next_acked_, next_freed_), std::memory_order_release);
    if (next_freed_ == freed_.load(std::memory_order_relaxed)) return;
    freed_.store(next_freed_, std::memory_order_release);
    const std::uint64_t space = w_ - (reserved_.load(std::memory_order_acquire) - next_freed_);
    if (space >= std::max<std::uint64_t>(1, w_ / 4) || next_freed_ == sent_) space_.ring();
  }

  // next_freed_ and next_acked_ from the members' counters.
  void compute_freed(std::uint64_t freed, std::uint64_t acked) {
    const std::size_t rank = *my_sender_;
    if (atomic_) {
      // A sender is never left behind: its own counters bound the rest.
      std::int64_t min_delivered = delivered_num_;
      std::int64_t min_released = released_num_;
      for (std::size_t k = 0; k < members_.size(); ++k) {
        if (members_[k] == me_ || !holding(k)) continue;
        min_delivered =
            std::min(min_delivered, sst_->load<std::int64_t>(counters_[k] + kDelivered));
        min_released = std::min(min_released, sst_->load<std::int64_t>(counters_[k] + kReleased));
      }
      const auto n = senders_.size();
      const auto upto = [&](std::uint64_t from, std::int64_t bound) {
        auto k = static_cast<std::size_t>(from % w_);
        while (from < sent_ && static_cast<std::int64_t>(round_of_[k] * n + rank) <= bound) {
          ++from;
          if (++k == w_) k = 0;
        }
        return from;
      };
      next_freed_ = upto(freed, std::min(min_released, min_delivered));
      next_acked_ = upto(std::max(acked, next_freed_), min_delivered);
    } else {
      std::uint64_t min_count = sent_;
      for (std::size_t k = 0; k < members_.size(); ++k) {
        if (members_[k] == me_ || !holding(k)) continue;
        min_count = std::min(
            min_count, sst_->load<std::uint64_t>(counters_[k] + rank * sizeof(std::uint64_t)));
      }
      next_freed_ = std::max(freed, min_count);
      next_acked_ = next_freed_;
    }
  }

  // --- lagging members (docs/dev/smc.md, "Lagging members") ------------------------------
  // This member reads copies, checked whole, not the ring in place: it is left behind, or a
  // lag may leave it behind (deliver() says why).
  [[nodiscard]] bool takes_copies() const noexcept { return catching_up_ || may_be_left_behind_; }
  // Member k holds the ring: not a listener, not left behind.
  [[nodiscard]] bool holding(std::size_t k) const noexcept {
    return holds_[k] && !demoted_.test(members_[k]);
  }
  // Who is left behind: the union of every member's row, ours included.
  [[nodiscard]] sst::MemberSet union_of_rows() const {
    sst::MemberSet mask;
    if (lag_bound_.count() == 0) return mask;
    for (auto c : counters_)
      mask |= sst_->load_set(c + demoted_at_);
    return mask;
  }
  // Takes the union into our row before acting on it, so that a view change's trim (from
  // the survivors' final rows) leaves out whoever we left out, even if the member that
  // decided it is gone.
  void refresh_demoted() {
    if (lag_bound_.count() == 0) return;
    const sst::MemberSet mask = union_of_rows();
    if (mask == demoted_) return;
    demoted_ = mask;
    left_behind_.store(mask.any(), std::memory_order_relaxed);  // before freed_ moves past them
    sst_->store_set(my_counters_ + demoted_at_, mask);
    counters_dirty_ = true;
    if (mask.test(me_) && !catching_up_) {
      catching_up_ = true;
      ++stats_.left_behind;
    }
  }
  void demote(std::size_t k) {
    ++stats_.demotions;
    sst_->store_set(my_counters_ + demoted_at_, demoted_ | sst::MemberSet::of(members_[k]));
    refresh_demoted();
    counters_dirty_ = true;
  }

  // Delivery of a member left behind: the total order up to stable_, from what its copy of
  // each sender's ring still holds. A message overwritten before it was taken (or while it
  // was copied) is skipped and counted (stats().lost; the layers above see the gap in the
  // sender's numbering). Messages are copied out: nobody waits for this member, so a sender
  // may rewrite a slot while it is read.
  void catch_up() {
    const std::int64_t stable = stable_;
    batch_.clear();
    copies_.clear();
    taken_.clear();
    const auto n = senders_.size();
    firsts_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      // Message m is whole while num_started <= m + w.
      const auto started = sst_->load<std::uint64_t>(senders_[i].guard + kNumStarted);
      firsts_[i] = started > w_ ? started - w_ : 0;
    }
    auto skip = [&](SenderCursor& c, std::uint64_t count) {
      stats_.lost += count;
      c.lost += count;
      c.deliver_next += count;
    };
    const auto first = static_cast<std::uint64_t>(delivered_num_ + 1);
    auto i = static_cast<std::size_t>(first % n);
    std::uint64_t round = first / n;
    std::int64_t g = delivered_num_ + 1;
    for (; g <= stable && copies_.size() < kListenerBatchBytes; ++g) {
      auto& c = senders_[i];
      if (c.deliver_next < firsts_[i]) skip(c, firsts_[i] - c.deliver_next);
      while (c.deliver_next < c.real_seen) {
        const auto k = static_cast<std::size_t>(c.deliver_next % w_);
        const auto& h = header(c.headers, k);
        if (h.round < round) {  // its round went by (its slot was being rewritten)
          skip(c, 1);
          continue;
        }
        if (h.round == round) {
          const std::uint32_t size = std::min(h.size, max_payload_);
          const std::size_t at = copies_.size();
          copies_.resize(at + size);
          std::memcpy(copies_.data() + at, sst_->at(c.slots + k * stride_), size);
          taken_.push_back(Taken{i, c.deliver_next, at, size, h.flags, g});
          ++c.deliver_next;
        }
        break;
      }
      if (++i == n) {
        i = 0;
        ++round;
      }
    }
    batch_whole_copies(false);
    delivered_num_ = g - 1;
    delivered_due_ = true;
    emit();
  }

  void push_counters() {
    counters_dirty_ = false;
    if (atomic_ && !others_send_ && !frozen_ && received_num_ == pushed_received_ &&
        demoted_ == pushed_demoted_) {
      // Only our delivered_num moved (our own messages became stable), and nobody else sends
      // here: no member frees a slot by it, and a push now would wake each of them for
      // nothing. It goes with our next push, or at the next progress check (a tick), before
      // anyone could judge us behind for it.
      counters_owed_ = true;
      return;
    }
    if (may_ride()) {
      // An acknowledgement to the one other member: it goes with our next push to it (our
      // reply, in a round trip: one frame per hop), or after kAckDelay.
      pushed_received_ = received_num_;
      pushed_demoted_ = demoted_;
      lazy_received_ = received_num_;
      sst_->push_status_lazy(others_.front(), my_counters_, counters_len_, kAckDelay);
      return;
    }
    push_counters_now();
  }
  void push_counters_now() {
    counters_owed_ = false;
    pushed_received_ = received_num_;
    pushed_demoted_ = demoted_;
    acked_received_ = lazy_received_ = received_num_;
    for (auto r : others_)
      sst_->push_status(r, my_counters_, counters_len_);
  }
  // Whether our counters may wait for a frame to ride on: an atomic subgroup of two members
  // (with a third, each of them delivers only once our received_num reached it), no view
  // change or demotion under way (those go at once), and the other's senders short of a
  // quarter of their window that we received and have not acknowledged: a sender that
  // streams gets its slots back in time, without waiting for a deadline.
  bool may_ride() {
    if (!atomic_ || frozen_ || others_.size() != 1 || demoted_ != pushed_demoted_) return false;
    if (!sst_->lazy_pending(others_.front()))
      acked_received_ = std::max(acked_received_, lazy_received_);  // it went meanwhile
    const auto quarter = static_cast<std::int64_t>(std::max<std::uint32_t>(1, w_ / 4));
    return received_num_ - acked_received_ < quarter * static_cast<std::int64_t>(senders_.size());
  }

  void set_unordered_count(std::size_t sender, std::uint64_t count) {
    sst_->store<std::uint64_t>(my_counters_ + sender * sizeof(std::uint64_t), count);
    counters_dirty_ = true;
  }

  // Message r of `sender`, at ring position k.
  Message make_message(std::size_t sender, std::uint64_t r, std::size_t k, std::int64_t seq) const {
    const auto& c = senders_[sender];
    const auto& h = header(c.headers, k);
    const std::uint32_t size = std::min(h.size, max_payload_);
    return Message{index_,
                   sender_nodes_[sender],
                   static_cast<std::uint32_t>(sender),
                   r,
                   seq,
                   {sst_->at(c.slots + k * stride_), size},
                   h.flags};
  }

  // The upcall of batch_, then the delivered counters that it moved (delivered_due_,
  // counts_due_): only once the upcall has read the batch in its slots may a sender rewrite
  // them, and a writer waiting for its readers count them delivered — at once where the rows
  // are in place (docs/transport-shm.md).
  void emit() {
    if (!batch_.empty()) {
      stats_.delivered += batch_.size();
      stats_.delivery_batches.add(batch_.size());
      if (*upcall_) {
        in_upcall_ = true;
        upcall_first_ = batch_.front().seq;
        upcall_last_ = batch_.back().seq;
        (*upcall_)(index_, batch_);
        in_upcall_ = false;
      }
    }
    for (const auto i : counts_due_)
      set_unordered_count(i, senders_[i].deliver_next);
    counts_due_.clear();
    if (delivered_due_) {
      sst_->store<std::int64_t>(my_counters_ + kDelivered, delivered_num_);
      counters_dirty_ = true;
      delivered_due_ = false;
      if (atomic_) update_released();
    }
  }

  // The pin count of sender `sender`'s message `index` (its slot in its ring).
  [[nodiscard]] std::size_t pin_slot(std::size_t sender, std::uint64_t index) const noexcept {
    return sender * w_ + static_cast<std::size_t>(index % w_);
  }
  // released_num: delivered, up to the first message still held in place. Where a held
  // message's sender has used three quarters of its window past it for kReliefGrace, the
  // layers above are asked to let go of what they hold without lending it out
  // (PinRelief), once per such message. The grace starts when the need is first seen and
  // ends when it is gone (nothing held, or the sender no longer that far past the first
  // message held): a reader whose application takes what it was delivered as fast as it
  // comes empties its cache well within it and copies nothing; one whose application is
  // away is asked when the grace runs out: check_relief(), from the loop's timers, passes
  // `now` (the other callers, once a batch, read no clock while a grace runs).
  void update_released(std::optional<std::chrono::nanoseconds> now = std::nullopt) {
    for (int pass = 0; pass < 2; ++pass) {
      while (!pinned_.empty() &&
             pins_->counts[pin_slot(pinned_.front().sender, pinned_.front().index)].load(
                 std::memory_order_acquire) == 0)
        pinned_.pop_front();
      const std::int64_t released =
          pinned_.empty() ? delivered_num_ : std::min(delivered_num_, pinned_.front().seq - 1);
      if (released != released_num_) {
        released_num_ = released;
        sst_->store<std::int64_t>(my_counters_ + kReleased, released_num_);
        counters_dirty_ = true;
      }
      if (pinned_.empty() || relief_ == nullptr || !*relief_) {
        relief_due_.reset();
        return;
      }
      const auto& front = pinned_.front();
      if (front.seq == relieved_for_ || senders_[front.sender].real_seen <
                                            front.index + std::max<std::uint32_t>(1, w_ - w_ / 4)) {
        relief_due_.reset();
        return;
      }
      if (!relief_due_) {
        relief_due_ = sst_->now() + kReliefGrace;
        sst_->hook_due_by(*relief_due_);
        return;
      }
      if (!now || *now < *relief_due_) return;
      relief_due_.reset();
      relieved_for_ = front.seq;
      ++stats_.pin_reliefs;
      (*relief_)(index_);
    }
  }

  sst::Sst* sst_;
  const DeliveryUpcall* upcall_;
  std::uint32_t index_;
  bool atomic_ = true;
  std::uint32_t w_ = 1;
  std::uint32_t max_payload_ = 0;
  std::size_t stride_ = 0;
  std::uint64_t max_batch_ = 1;  // slots per send batch
  std::size_t me_ = 0;
  std::vector<std::size_t> members_;         // SST ranks of the subgroup's members
  std::vector<bool> holds_;                  // per member: not a listener (it holds the ring)
  std::vector<bool> demotable_;              // per member: a lag leaves it behind
  std::atomic<bool> left_behind_{false};     // demoted_.any(), for reserve() (application threads)
  std::vector<std::size_t> counts_due_;      // unordered: senders whose count emit() stores
  bool delivered_due_ = false;               // atomic: emit() stores delivered_num_
  std::chrono::nanoseconds lag_bound_{0};    // how long a lag; 0: nobody is demotable
  sst::MemberSet demoted_;                   // SST ranks left behind (the union)
  bool catching_up_ = false;                 // this member is left behind: catch_up()
  bool may_be_left_behind_ = false;          // a lag may leave this member behind: it copies
  bool rejoin_asked_ = false;                // check_progress() reported it caught up
  std::int64_t checked_received_ = -1;       // received_num at the last check_progress()
  std::size_t demoted_at_ = 0;               // offset of `demoted` in a counters row
  std::vector<std::size_t> listener_ranks_;  // the listeners' ranks, other than me
  bool listener_ = false;                    // this node listens: listen(), nothing else
  std::vector<std::size_t> counters_;        // their counters offsets (same order)
  std::vector<std::size_t> others_;          // members other than me
  std::vector<std::size_t> outsiders_;       // ranks of the view outside the subgroup
  std::size_t my_counters_ = 0;
  std::size_t counters_len_ = 0;
  std::vector<SenderCursor> senders_;
  std::vector<NodeId> sender_nodes_;
  std::optional<std::size_t> my_sender_;
  std::size_t my_guard_ = 0;
  std::size_t my_headers_ = 0;
  std::size_t my_slots_ = 0;

  // Shared with application threads.
  std::atomic<std::uint64_t> reserved_{0};
  std::atomic<std::uint64_t> freed_{0};
  std::atomic<std::uint64_t> acked_{0};  // delivered by every member (>= freed_)
  std::atomic<bool> wedged_{false};
  std::unique_ptr<std::atomic<std::uint64_t>[]> committed_;
  // The slot that takes appends: (index + 1) << 1, with bit 0 set while one is written;
  // 0 for none (append()).
  alignas(64) std::atomic<std::uint64_t> open_{0};
  transport::DoorbellData space_bell_;  // rung when slots are freed
  transport::Doorbell space_{&space_bell_, false};

  std::atomic<bool> stalled_{false};  // stall(): fault injection

  // Predicate thread only.
  struct Progress {
    std::int64_t received = -1, delivered = -1;
    std::int64_t last_received = -1, last_delivered = -1;
    std::chrono::nanoseconds since{0};  // when a check first saw it behind and still
    bool behind = false;                // the last check saw it behind
  };
  std::vector<Progress> progress_;  // per member, check_progress()
  bool frozen_ = false;
  std::uint64_t sent_ = 0;
  std::uint64_t rounds_ = 0;
  std::vector<std::uint64_t> round_of_;
  std::int64_t received_num_ = -1;
  std::int64_t delivered_num_ = -1;
  std::int64_t stable_ = -1;
  std::uint64_t next_freed_ = 0;
  std::uint64_t next_acked_ = 0;
  bool counters_dirty_ = false;
  // Pins: the table (null where messages are not delivered in place), the messages held,
  // in delivery order (one entry per message, from its first hold until the protocol
  // thread finds it let go), released_num, and the held message relief was last asked for.
  struct Pinned {
    std::int64_t seq;
    std::uint64_t index;
    std::size_t sender;
  };
  std::shared_ptr<PinTable> pins_;
  std::deque<Pinned> pinned_;
  std::int64_t released_num_ = -1;
  std::int64_t relieved_for_ = -1;
  std::optional<std::chrono::nanoseconds> relief_due_;  // the grace's end (update_released)
  const PinRelief* relief_ = nullptr;
  bool in_upcall_ = false;
  std::int64_t upcall_first_ = 0;
  std::int64_t upcall_last_ = -1;
  // push_counters(): what the others last got of our row, and whether a delivered_num that
  // nobody needs at once still waits to go (atomic, no other sender).
  bool others_send_ = false;
  bool counters_owed_ = false;
  // may_ride(): our received_num as our counters last went out (at once, or riding on a push
  // that has gone since), and as they were last left to ride.
  std::int64_t acked_received_ = -1;
  std::int64_t lazy_received_ = -1;
  std::int64_t pushed_received_ = std::numeric_limits<std::int64_t>::min();
  sst::MemberSet pushed_demoted_ = ~sst::MemberSet{};
  std::vector<Message> batch_;
  std::vector<std::byte> copies_;  // listen(): what it took out of the ring, as delivered
  struct Taken {
    std::size_t sender;
    std::uint64_t index;
    std::size_t offset;  // in copies_
    std::uint32_t size;
    std::uint32_t flags;
    std::int64_t seq = -1;  // catch_up(): its place in the total order; listen(): -1
  };
  std::vector<Taken> taken_;
  std::vector<std::uint64_t> firsts_;  // catch_up(): per sender, the first message still whole
  // send(): the payload ranges of one batch (kept to reuse its memory).
  struct ByteRange {
    std::size_t offset;
    std::size_t length;
  };
  std::vector<ByteRange> ranges_;
  // The unused tail of a slot a write may cover to reach the next one: on shm a write is
  // a fence and a copy, so a short gap costs less than a second write.
  static constexpr std::size_t kMaxGap = 256;
  SubgroupStats stats_;
};

Smc::Smc(sst::Sst& sst, sst::Predicates& predicates, DeliveryUpcall upcall)
    : sst_(&sst), predicates_(&predicates), upcall_(std::move(upcall)) {
  const auto& g = sst.group();
  engines_.resize(g.subgroups.size());
  for (std::uint32_t s = 0; s < g.subgroups.size(); ++s) {
    if (!sst.layout().columns(sst.my_rank(), s).present) continue;
    engines_[s] = std::make_unique<SubgroupEngine>(sst, s, upcall_);
    engines_[s]->register_predicates(predicates, ids_);
  }
}

Smc::~Smc() {
  for (auto id : ids_)
    predicates_->remove(id);
}

ProgressCheck Smc::check_progress(std::chrono::nanoseconds now, const sst::MemberSet& exempt) {
  const auto timeout = std::chrono::nanoseconds(sst_->group().knobs.suspicion_timeout);
  ProgressCheck out;
  for (auto& e : engines_) {
    if (!e) continue;
    if (e->check_progress(now, timeout, exempt, out.due, out.rejoin, out.demoted))
      out.suspected = true;
    e->check_relief(now, out.relief_due);
  }
  return out;
}

void Smc::stall() noexcept {
  for (auto& e : engines_)
    if (e) e->stall();
}

void Smc::resume() noexcept {
  for (auto& e : engines_)
    if (e) e->resume();
}

bool Smc::left_behind(std::uint32_t subgroup) const {
  return is_member(subgroup) && engines_[subgroup]->left_behind();
}

sst::MemberSet Smc::left_behind_ranks(std::uint32_t subgroup) const {
  return is_member(subgroup) ? engines_[subgroup]->left_behind_ranks() : sst::MemberSet{};
}

bool Smc::leave_behind(std::uint32_t subgroup, std::size_t rank) {
  return is_member(subgroup) && engines_[subgroup]->leave_behind(rank);
}

Reservation Smc::reserve(std::uint32_t subgroup, std::uint32_t size) noexcept {
  if (subgroup >= engines_.size() || !engines_[subgroup]) return Reservation{};
  return engines_[subgroup]->reserve(size);
}

Reservation Smc::reserve_wait(std::uint32_t subgroup, std::uint32_t size,
                              std::chrono::steady_clock::time_point deadline) {
  if (subgroup >= engines_.size() || !engines_[subgroup]) return Reservation{};
  return engines_[subgroup]->reserve_wait(size, deadline);
}

void Smc::commit(std::uint32_t subgroup, const Reservation& r, std::uint32_t size,
                 std::uint32_t flags, bool open) noexcept {
  if (r.status != ReserveStatus::ok) return;
  engines_[subgroup]->commit(r, size, flags, open, true);
}

void Smc::commit_quiet(std::uint32_t subgroup, const Reservation& r, std::uint32_t size,
                       std::uint32_t flags, bool open) noexcept {
  if (r.status != ReserveStatus::ok) return;
  engines_[subgroup]->commit(r, size, flags, open, false);
}

Reservation Smc::append(std::uint32_t subgroup, std::uint32_t size) noexcept {
  if (subgroup >= engines_.size() || !engines_[subgroup]) return Reservation{};
  return engines_[subgroup]->append(size);
}

void Smc::cancel_append(std::uint32_t subgroup, const Reservation& r) noexcept {
  if (r.status == ReserveStatus::ok) engines_[subgroup]->cancel_append(r);
}

void Smc::nudge() noexcept {
  sst_->nudge();
}

bool Smc::push(std::uint32_t subgroup) {
  if (subgroup >= engines_.size() || !engines_[subgroup]) return false;
  const bool sent = engines_[subgroup]->push();
  sst_->flush();
  return sent;
}

void Smc::wedge() noexcept {
  for (auto& e : engines_)
    if (e) e->wedge();
}

void Smc::freeze() {
  for (auto& e : engines_)
    if (e) e->freeze();
}

std::int64_t Smc::trim(std::uint32_t subgroup, const sst::MemberSet& removed) const {
  if (is_member(subgroup)) return engines_[subgroup]->trim(removed);
  const auto& g = sst_->group();
  if (subgroup >= g.subgroups.size() || g.subgroups[subgroup].ordering != group::Ordering::atomic)
    return -1;
  // Not ours: the final counters its members pushed to everyone when they froze (its
  // listeners' do not count: they deliver nothing in the total order).
  std::optional<std::int64_t> t;
  const auto& listeners = g.subgroups[subgroup].listeners;
  // Nor do those left behind (the union of the members' final rows: docs/dev/smc.md).
  sst::MemberSet behind;
  for (auto id : g.subgroups[subgroup].members)
    behind |= sst_->load_set(sst_->layout().columns(*g.rank_of(id), subgroup).counters + kDemoted);
  for (auto id : g.subgroups[subgroup].members) {
    const std::size_t r = *g.rank_of(id);
    if (removed.test(r) || behind.test(r)) continue;
    if (std::find(listeners.begin(), listeners.end(), id) != listeners.end()) continue;
    const auto received = sst_->load<std::int64_t>(sst_->layout().columns(r, subgroup).counters +
                                                   offsetof(sst::CountersRow, received_num));
    t = t ? std::min(*t, received) : received;
  }
  return t.value_or(-1);
}

void Smc::deliver_to(std::uint32_t subgroup, std::int64_t trim) {
  if (is_member(subgroup)) engines_[subgroup]->deliver_to(trim);
}

std::vector<Unsent> Smc::resend(std::uint32_t subgroup, std::int64_t trim,
                                const sst::MemberSet& removed) const {
  if (!is_member(subgroup)) return {};
  return engines_[subgroup]->resend(trim, removed);
}

std::uint64_t Smc::in_flight(std::uint32_t subgroup) const noexcept {
  if (subgroup >= engines_.size() || !engines_[subgroup]) return 0;
  return engines_[subgroup]->in_flight();
}

std::optional<std::uint64_t> Smc::sender_mark(std::uint32_t subgroup) const noexcept {
  if (!is_sender(subgroup)) return std::nullopt;
  return engines_[subgroup]->reserved_count();
}

bool Smc::delivered_through(std::uint32_t subgroup, std::uint64_t mark) const noexcept {
  return !is_member(subgroup) || engines_[subgroup]->acked_count() >= mark;
}

void Smc::set_pin_owner(const std::weak_ptr<void>& owner, PinRelief relief) {
  relief_ = std::move(relief);
  for (auto& e : engines_)
    if (e) e->set_pin_owner(owner, &relief_);
}

bool Smc::is_member(std::uint32_t subgroup) const noexcept {
  return subgroup < engines_.size() && engines_[subgroup] != nullptr;
}

bool Smc::is_sender(std::uint32_t subgroup) const noexcept {
  return is_member(subgroup) && engines_[subgroup]->sender();
}

const SubgroupStats& Smc::stats(std::uint32_t subgroup) const {
  if (!is_member(subgroup)) throw std::out_of_range("smc: not a member of that subgroup");
  return engines_[subgroup]->stats();
}

std::int64_t Smc::delivered_num(std::uint32_t subgroup) const {
  if (!is_member(subgroup)) throw std::out_of_range("smc: not a member of that subgroup");
  return engines_[subgroup]->delivered_num();
}

std::uint64_t Smc::delivered_count(std::uint32_t subgroup) const {
  return stats(subgroup).delivered;
}

}  // namespace spindle::smc

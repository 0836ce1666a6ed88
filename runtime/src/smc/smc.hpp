// Small-message multicast with the Spindle optimizations (DESIGN §5; Spindle §II-C, §III).
//
// Per subgroup and sender, a ring of window_size slots in the sender's SST row; the
// application builds each message in place (reserve/commit, no lock, no copy), the
// predicate thread pushes every committed contiguous slot in one write per peer (two on
// wrap-around) followed by the num_sent guard, receivers take every new message up to the
// guard and advance received_num once per batch, and the delivery predicate delivers
// everything up to stable = min(received_num) as one upcall and pushes delivered_num once.
// Total order is round robin over the senders: message of round k from sender rank i has
// global seq k * n_senders + i. Rounds a sender skips are nulls, sent as one `rounds`
// counter update, never as slots, never delivered.
//
// Threading:
//   - reserve()/commit() are lock-free and may be called from any application thread,
//     concurrently (several threads may fill different slots of one ring at once; the
//     send predicate only ever pushes the committed prefix, so ordering is by reserve).
//   - Everything else runs on the predicate thread — whichever thread holds the predicate
//     loop's token (a driving application thread too, sst/predicate_loop.hpp): the
//     predicates registered in the constructor, push(), the delivery upcall, and stats(),
//     which must be read on that thread or after it stopped.
//   - Construction and destruction on the control thread with the predicate thread stopped.
//
// Ring arithmetic (one sender's ring, w = window_size; indices count real messages from 0
// and never wrap, the slot of index r is r % w):
//
//        freed          sent          committed prefix      reserved
//          |              |                  |                  |
//   ... ---+==============+==================+------------------+---- index r
//          | in flight:   | committed, not   | reserved, being  |
//          | pushed, not  | yet pushed (send | written by app   |
//          | yet delivered| predicate takes) | threads          |
//          | by everyone  |                  |                  |
//   invariant: freed <= sent <= reserved <= freed + w
//   reserve(): CAS reserved -> reserved + 1 while reserved < freed + w
//   commit():  header.size = size; committed[r % w] = r + 1 (release)
//   send:      while committed[sent % w] == sent + 1: header.round = rounds++; ++sent
//              then push slots [old sent, sent) (split at the ring end) and num_sent
//   free:      while slot `freed` has global seq <= min(released_num of members): ++freed
//              (released_num: delivered_num, short of the first message the layers above
//              still hold in place, group::Pins)
//   append():  open = (r + 1) << 1 names the slot committed last with `open` (set before its
//              committed store); an appender CASes the low bit on, checks r + 1 == reserved,
//              writes past header.size, raises it, and stores `open` back; send seals the
//              slot by CAS open -> 0 before it takes it, and stops short of it while the bit
//              is on (docs/dev/smc.md, "Several messages per slot")
//
// Receiver view of sender j (per subgroup): real_seen = num_sent read, rounds_seen =
// rounds read (read `rounds` first, then num_sent: both acquire), and
// rr_j = max(rounds_seen, round of the last real message + 1) rounds of j are accounted
// for. received_num = (min_j rr_j) * n_senders + (first j with rr_j minimal) - 1.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <spindle/transport/doorbell.hpp>

#include "group/message.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::smc {

using transport::NodeId;

// A send batch pushes at most this many bytes (and at least one slot): a larger push holds
// the predicate thread in one copy (shm, tcp) long enough to delay the counters and
// deliveries that free slots, and a batch that fits the core's cache copies fastest; 256 KiB
// keeps a 10 KB window of 100 flowing.
inline constexpr std::size_t kMaxPushBytes = std::size_t{256} << 10;

// How long a sender may stand three quarters of its window past a message held in place
// here before the layers above are asked to let go of what they hold (PinRelief): an
// application that takes promptly empties its cache within microseconds, and relief then
// would copy the samples it is about to take. The time runs from when the need is first
// seen and ends when nothing is held (docs/dev/smc.md, "Pins").
inline constexpr std::chrono::nanoseconds kReliefGrace = std::chrono::milliseconds(1);

// What Smc::check_progress() found.
struct ProgressCheck {
  bool suspected = false;  // it suspected a member
  // This member was left behind in some subgroup for a lag and has caught up since: the
  // next view takes it back as a member that holds (the engine asks for a relayout).
  bool rejoin = false;
  bool demoted = false;  // it left a lagging member behind: deliveries may go on at once
  std::optional<std::chrono::nanoseconds> due;  // look again then (a member is behind)
  // Look again then as well: a held message's relief falls due (kReliefGrace). Only the
  // loop's own timers need to know; nothing else waits for it.
  std::optional<std::chrono::nanoseconds> relief_due;
};

// One delivered message (the group layer's type: group/message.hpp).
using Message = group::Message;

// One of this node's messages a view change must carry into the next view (resend()).
struct Unsent {
  std::uint64_t index = 0;  // the sender's count of real messages before it
  std::span<const std::byte> bytes;
  std::uint32_t flags = 0;
};

// Called on the predicate thread with every message that became deliverable in one step of
// one subgroup. Copy out or hand off; do not block (DESIGN §9).
using DeliveryUpcall = std::function<void(std::uint32_t subgroup, std::span<const Message>)>;

// Called on the predicate thread when a sender has used three quarters of its window past a
// message that the layers above still hold in place (group::Pins): they should let go of the
// holds they did not lend to the application (keeping copies instead).
using PinRelief = std::function<void(std::uint32_t subgroup)>;

enum class ReserveStatus : std::uint8_t {
  ok,
  full,        // every slot is in flight: retry after deliveries (back-pressure)
  too_large,   // size > max_payload: give up (use RDMC)
  not_sender,  // this node is not a sender of the subgroup: caller bug
  wedged,      // the view is ending (Smc::wedge): reserve again in the next view
  closed,      // append(): no unsent slot takes more bytes now (reserve() one instead)
};

struct [[nodiscard]] Reservation {
  ReserveStatus status = ReserveStatus::not_sender;
  std::byte* data = nullptr;  // max_payload writable bytes, in the SST slot itself
  std::uint32_t capacity = 0;
  std::uint64_t index = 0;
  // append(): `data` is `offset` bytes into a slot committed before, which takes the bytes
  // commit() is given after those it holds.
  std::uint32_t offset = 0;
  bool appended = false;
};

// Batch sizes in power-of-two buckets: bucket 0 = 1, bucket b = (2^(b-1), 2^b].
struct Histogram {
  static constexpr std::size_t kBuckets = 17;
  std::array<std::uint64_t, kBuckets> buckets{};
  std::uint64_t count = 0;
  std::uint64_t total = 0;
  void add(std::uint64_t n) noexcept;
  [[nodiscard]] double mean() const noexcept {
    return count == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(count);
  }
};

struct SubgroupStats {
  std::uint64_t sent = 0;          // real messages pushed by this node
  std::uint64_t delivered = 0;     // real messages delivered here
  std::uint64_t nulls = 0;         // null rounds sent by this node
  std::uint64_t null_updates = 0;  // `rounds` counter updates that carried them
  std::uint64_t lost = 0;  // listener, or left behind: messages overwritten before it took them
  std::uint64_t demotions = 0;    // members this node left behind for a lag (its own decisions)
  std::uint64_t left_behind = 0;  // times this node was left behind (0 or 1 per view)
  std::uint64_t pin_reliefs = 0;  // PinRelief calls (held messages a sender needed)
  Histogram send_batches;
  Histogram receive_batches;
  Histogram delivery_batches;
};

class SubgroupEngine;

class Smc {
 public:
  // Registers the send/receive/delivery predicates of every subgroup this node belongs
  // to, in subgroup order, on `predicates` (control thread, predicate thread stopped).
  Smc(sst::Sst& sst, sst::Predicates& predicates, DeliveryUpcall upcall);
  ~Smc();
  Smc(const Smc&) = delete;
  Smc& operator=(const Smc&) = delete;

  // --- application threads -------------------------------------------------------------
  // A slot for a message of up to `size` bytes (lock-free; never blocks).
  Reservation reserve(std::uint32_t subgroup, std::uint32_t size) noexcept;
  // The same, but while every slot is in flight it sleeps (no spinning: on a small machine
  // the predicate threads need the cores) until one is freed or `deadline` passes; then
  // status is `full`. This is DataWriter::write()'s blocking under back-pressure.
  Reservation reserve_wait(std::uint32_t subgroup, std::uint32_t size,
                           std::chrono::steady_clock::time_point deadline);
  // Publishes a reserved slot holding `size` bytes (size <= the reserved capacity). `flags`
  // travel with it to every receiver's Message (bits above sst::kSlotNull: the client's own).
  // `open`: until the send predicate takes it, append() may add to it.
  // An appended reservation (append()) adds its `size` bytes to its slot (flags, open aside).
  void commit(std::uint32_t subgroup, const Reservation& r, std::uint32_t size,
              std::uint32_t flags = 0, bool open = false) noexcept;
  // commit() without waking a dozing predicate thread: the caller then either pushes the
  // message itself from its own thread (push(), as the loop's token holder) or nudge()s.
  void commit_quiet(std::uint32_t subgroup, const Reservation& r, std::uint32_t size,
                    std::uint32_t flags = 0, bool open = false) noexcept;
  // Room for `size` more bytes, 8-byte aligned, in the slot committed last with `open`: while
  // the send predicate has not taken it, and no later slot is reserved (so one thread's
  // messages stay in its order), it takes more (several small samples per slot: the caller
  // frames them, group/packed.hpp). Lock-free; the slot waits to be sent until the appended
  // reservation is committed (commit(), or cancel_append()), so fill it and commit at once.
  // `closed` when no slot takes it: reserve() then.
  Reservation append(std::uint32_t subgroup, std::uint32_t size) noexcept;
  // Gives an appended reservation up: its slot keeps what it held before.
  void cancel_append(std::uint32_t subgroup, const Reservation& r) noexcept;
  void nudge() noexcept;
  // The send predicate of `subgroup` and the SST flush, on the thread that holds the
  // predicate loop's token (PredicateLoop::try_run): what is committed goes out now.
  bool push(std::uint32_t subgroup);
  // Ends reservations in this view (a view change begins): every later reserve() and every
  // writer sleeping in reserve_wait() gets `wedged`. Any thread; idempotent.
  void wedge() noexcept;
  // --- view change (predicate thread) ------------------------------------------------
  // Wedges, and stops sending, receiving and delivering in every subgroup: the counters as
  // they stand are final, pushed once more — to every member of the view, not only the
  // subgroup's, so that a view leader outside a subgroup can compute its ragged edge.
  void freeze();
  // The ragged edge of `subgroup` (atomic): the highest global seq every member outside
  // `removed` (bit per SST rank) has received — final once they are all frozen (for a
  // non-member, from the final counters they pushed it); -1 for unordered subgroups and
  // subgroups with no member left.
  [[nodiscard]] std::int64_t trim(std::uint32_t subgroup, const sst::MemberSet& removed) const;
  // Delivers in order every message of `subgroup` up to `trim` not delivered yet; in an
  // unordered subgroup, every message its senders pushed in this view (call it once every
  // member that stays is seen wedged: their final guards have landed).
  void deliver_to(std::uint32_t subgroup, std::int64_t trim);
  // This node's messages of `subgroup` that the next view must carry again, in order:
  // sent past `trim` (atomic), or committed and never sent. Valid while this Smc lives.
  // Unordered: also the ones sent that a member outside `removed` (bit per SST rank) had not
  // taken by its final counts — a member that saw us leave before our last pushes landed
  // (members that took them take them again: the layers above drop what they took).
  [[nodiscard]] std::vector<Unsent> resend(std::uint32_t subgroup, std::int64_t trim,
                                           const sst::MemberSet& removed = {}) const;

  // Messages reserved but not yet delivered by every member that holds the ring (one held in
  // place past its delivery, group::Pins, counts as delivered); 0 when quiet.
  [[nodiscard]] std::uint64_t in_flight(std::uint32_t subgroup) const noexcept;

  // Where this node sends in `subgroup`: how many slots it reserved so far, a mark that
  // delivered_through() passes once every member that holds the ring delivered them (counted
  // on the protocol thread after the delivery upcall that carried them returned, here and,
  // by their counters, at the others; a slot held in place past that is not free yet, but
  // delivered). nullopt where it does not send.
  [[nodiscard]] std::optional<std::uint64_t> sender_mark(std::uint32_t subgroup) const noexcept;
  [[nodiscard]] bool delivered_through(std::uint32_t subgroup, std::uint64_t mark) const noexcept;

  // Zero-copy receive (group::Pins; docs/dev/smc.md, "Pins"): from now on, messages delivered
  // in place carry Message::pins, and each hold keeps `owner` alive (the view); `relief` is
  // called when a sender needs what is held. Control thread, predicate thread stopped.
  void set_pin_owner(const std::weak_ptr<void>& owner, PinRelief relief);

  [[nodiscard]] bool is_member(std::uint32_t subgroup) const noexcept;
  [[nodiscard]] bool is_sender(std::uint32_t subgroup) const noexcept;
  [[nodiscard]] std::size_t subgroups() const noexcept { return engines_.size(); }

  // --- predicate thread (or after it stopped) -----------------------------------------
  [[nodiscard]] const SubgroupStats& stats(std::uint32_t subgroup) const;
  [[nodiscard]] std::int64_t delivered_num(std::uint32_t subgroup) const;
  [[nodiscard]] std::uint64_t delivered_count(std::uint32_t subgroup) const;
  // Suspects (Sst::suspect) each member of an atomic subgroup whose counters stood still
  // for the suspicion timeout while another member's were ahead (docs/membership.md,
  // "Failure detection"). Call it now and then (the engine does, through Sst::tick), and
  // again at `due` if one is given: a member is behind, and its time runs out then.
  // Ranks in `exempt` (bit per SST rank: members wedged for a view change) are not judged.
  // In a subgroup with a lag bound (group::Subgroup::lag_bound), a demotable member whose
  // counters stood still that long while another's went on is left behind instead (docs/dev/
  // smc.md, "Lagging members"), and suspected no more for it.
  ProgressCheck check_progress(std::chrono::nanoseconds now, const sst::MemberSet& exempt = {});
  // Fault injection (tests; any thread): this member stops receiving and delivering while
  // its heartbeat goes on — a half-dead member; resume() ends it.
  void stall() noexcept;
  void resume() noexcept;
  // Whether this member is left behind in `subgroup` (predicate thread).
  [[nodiscard]] bool left_behind(std::uint32_t subgroup) const;
  // The members left behind in `subgroup`, as every member's row says (bit per SST rank);
  // 0 where this node is not a member or nobody may be left behind. Predicate thread.
  [[nodiscard]] sst::MemberSet left_behind_ranks(std::uint32_t subgroup) const;
  // Leaves the member of SST rank `rank` behind in `subgroup`, as a lag of its counters
  // would (docs/dev/smc.md, "Lagging members"): the engine saw it keep a large message that the
  // members that hold all have for the lag bound (docs/dev/rdmc.md). False where it cannot be
  // (not demotable there, left behind already, or this node not a member). Predicate thread.
  bool leave_behind(std::uint32_t subgroup, std::size_t rank);

 private:
  sst::Sst* sst_;
  sst::Predicates* predicates_;
  DeliveryUpcall upcall_;
  PinRelief relief_;
  std::vector<std::unique_ptr<SubgroupEngine>> engines_;  // null where not a member
  std::vector<sst::Predicates::Id> ids_;
};

}  // namespace spindle::smc

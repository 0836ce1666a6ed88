// SST row layout: where every column of every member's row lives inside the SST region,
// computed at run time from the group description. Every member computes the same layout,
// so "my row at offset X" is at offset X in every peer's copy too; a push of a part of my
// row is a one-sided write of [X, X+len) to the same offsets at the peer.
//
// Threading: an immutable value built once per view (control thread), then read from
// any thread.
//
// The region holds one row per member, each starting on a page (transport::kRowAlign), so
// that a transport on one host can keep each row once, at its owner, and let the others read
// it in place (Transport::share_rows; docs/transport-shm.md). Rows are not all the same size:
// a row carries slot rings only for the subgroups where its owner is a sender, and counters
// only for the subgroups its owner belongs to.
//
//   region: | row 0 | row 1 | ... | row n-1 |
//
//   row of member m (every part 64-byte aligned):
//   +---------------------------------------------------------------+
//   | ControlRow (64 B): heartbeat | barrier | suspected (MemberSet) |  -> all members
//   | MembershipRow (128 B): wedged | leaving | proposal (MemberSet) |  -> all members
//   |   | proposal_num | committed | joins | relayout                 |
//   | trims[subgroups]: i64 each, padded to a line (view change)     |  -> all members
//   | joiners[kMaxJoins]: JoinEntry, 32 B each (view change)         |  -> all members
//   | identities[kMaxJoins]: JoinIdentity, 256 B each (secured only) |  -> all members
//   +---------------------------------------------------------------+
//   | for each subgroup s that m belongs to, in subgroup order:      |
//   |   counters  atomic:    CountersRow {received_num, delivered_num,|  -> members of s
//   |                        demoted (MemberSet), released_num}      |
//   |             unordered: delivered_count[n_senders] (u64 each),  |
//   |                        demoted (MemberSet)                     |
//   |   if m is a sender of s:                                       |
//   |     SenderGuardRow (64 B): num_sent | rounds | num_started    |  -> members of s
//   |     header[0] .. header[w-1], SlotHeader, 16 B each, padded   |  -> members of s
//   |       to a line: size (u32) | flags (u32) | round (u64)       |
//   |     slot[0] .. slot[w-1]: max_payload bytes each, padded to 64 |  -> members of s
//   +---------------------------------------------------------------+
//
// Headers sit apart from the payloads so that a receiver, which reads every new message's
// header, never holds a line of a payload the sender's next copy writes: with the header
// inline, that cache-line traffic slowed the sender's copy of 10 KB messages by up to 40 %
// (2 members, shm; see docs/dev/smc.md).
//
// Columns are monotonic: heartbeat, barrier, counters, num_sent and rounds only grow,
// suspected bits only go 0 -> 1; in the membership part wedged and leaving go 0 -> 1,
// proposal bits only appear, proposal_num and committed only grow (group/membership.hpp). Slots are
// append-only ring entries guarded by num_sent.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "group/view.hpp"
#include "sst/member_set.hpp"

namespace spindle::sst {

inline constexpr std::size_t kLine = 64;

[[nodiscard]] constexpr std::size_t round_up(std::size_t v, std::size_t a) noexcept {
  return (v + a - 1) / a * a;
}

// Plain data (STYLE 3): these live in SST memory and are read with acquire loads of single
// fields; only the owner writes its own row.
struct alignas(kLine) ControlRow {
  std::uint64_t heartbeat;  // bumped every heartbeat interval
  std::uint64_t barrier;    // application phase counter (tests, benchmarks, shutdown)
  // Bit r: this member suspects the member of rank r (MemberSet words; Sst::load_set).
  std::uint64_t suspected[MemberSet::kWords];
};
static_assert(sizeof(ControlRow) == kLine);

// The view-change columns (DESIGN §7; the protocol is in group/membership.hpp). Written by
// the row's owner and pushed to every member; the trims of the subgroups follow the row.
struct alignas(kLine) MembershipRow {
  std::uint64_t wedged;   // 1: the owner froze its subgroups and pushed final counters
  std::uint64_t leaving;  // 1: the owner leaves on purpose (its participant closes)
  std::uint64_t proposal[MemberSet::kWords];  // bit r: the next view removes rank r
  std::uint64_t proposal_num;  // leader: version of `proposal`; others: the version echoed
  std::uint64_t committed;     // leader: the proposal_num committed; others: echoed commit
  std::uint64_t joins;         // entries of the joiner table the proposal adds
  std::uint64_t relayout;      // 1: the owner asks the leader for a view change that removes
                               // nobody (a member left behind that caught up, docs/dev/smc.md)
};
static_assert(sizeof(MembershipRow) == 2 * kLine);

// A participant the proposal adds (after the trims, kMaxJoins of them).
struct JoinEntry {
  std::uint32_t id;
  std::uint32_t ipv4;  // network byte order; 0 for shm
  std::uint16_t port;  // its transport port
  std::uint16_t reserved0;
  std::uint32_t pid;      // its process (group/liveness.hpp); 0: unknown
  std::uint64_t host_id;  // the host that pid belongs to; 0: unknown
  std::uint64_t nonce;    // the join port's CHECK nonce: its transport proves it (tcp HELLO)
};
static_assert(sizeof(JoinEntry) == 32);
inline constexpr std::size_t kMaxJoins = 8;  // per view change

// In a secured domain (group::View::secured()) the joiner table is followed by each joiner's
// certificate identity, as the leader's join port authenticated it (docs/security.md): the
// view records it, streams are authenticated to it, permissions are granted to it.
// NUL-padded text; a subject that does not fit is refused at the join port.
struct JoinIdentity {
  char subject[208];  // canonical RFC 4514
  char serial[48];    // hex: a serial of up to 20 octets (RFC 5280; openssl's own are 20)
};
static_assert(sizeof(JoinIdentity) == 256);

struct alignas(kLine) CountersRow {
  std::int64_t received_num;   // highest global seq with every lower seq received; -1 none
  std::int64_t delivered_num;  // highest global seq delivered; -1 none
  // Bit r: the member of SST rank r lagged and is left behind for the rest of the view
  // (docs/dev/smc.md, "Lagging members"). Bits only appear; every member goes by the union of
  // the rows it sees, and copies that union into its own row before it acts on it.
  std::uint64_t demoted[MemberSet::kWords];
  // Highest global seq with every lower seq delivered and no longer held in place by the
  // layers above (zero-copy receive, group::Pins); <= delivered_num, -1 none. Senders reuse
  // a slot once every member that holds the ring released it.
  std::int64_t released_num;
};
static_assert(sizeof(CountersRow) == kLine);

// num_sent guards the slots (count of real messages pushed); rounds is the number of
// rounds this sender has accounted for, real messages and nulls together. They are two
// separate writes, num_sent first (see docs/dev/smc.md, "Null-sends").
//
// num_started is for listeners (group::Subgroup::listeners) and members a lag may leave
// behind: the count of messages whose slots are being written, raised before a batch's
// payloads go out (a status push, flushed ahead of the data) and, where such members exist,
// already when a writer reserves a slot that held an earlier message (a row kept in place,
// Transport::share_rows, shows the writer's bytes as it writes them). A listener that copied
// message m out of its ring and then reads num_started <= m + w knows the copy is whole: m's
// slot is rewritten only for message m + w, announced first.
struct alignas(kLine) SenderGuardRow {
  std::uint64_t num_sent;
  std::uint64_t rounds;
  std::uint64_t num_started;
};
static_assert(sizeof(SenderGuardRow) == kLine);

struct SlotHeader {
  std::uint32_t size;   // payload bytes
  std::uint32_t flags;  // bit 0: null (reserved: nulls travel as `rounds`, never as slots)
  std::uint64_t round;  // the sender's round of this message: global seq = round*n + rank
};
static_assert(sizeof(SlotHeader) == 16);
inline constexpr std::uint32_t kSlotNull = 1;

// Where one subgroup's columns sit in one row.
struct SubgroupColumns {
  bool present = false;          // the row's owner is a member of the subgroup
  std::size_t counters = 0;      // offset of CountersRow / delivered_count[]
  std::size_t counters_len = 0;  // bytes of the counters part
  bool sender = false;           // the row's owner is a sender of the subgroup
  std::size_t guard = 0;         // offset of SenderGuardRow
  std::size_t headers = 0;       // offset of header[0] (SlotHeader each)
  std::size_t slots = 0;         // offset of slot[0] (payload bytes only)
};

class SstLayout {
 public:
  explicit SstLayout(const group::View& g);

  [[nodiscard]] std::size_t rows() const noexcept { return row_offset_.size(); }
  [[nodiscard]] std::size_t region_size() const noexcept { return region_size_; }
  [[nodiscard]] std::size_t row_offset(std::size_t rank) const { return row_offset_[rank]; }
  [[nodiscard]] std::size_t row_size(std::size_t rank) const { return row_size_[rank]; }
  // The pages the row has to itself (row_size rounded up to transport::kRowAlign): what its
  // owner alone writes, and what a transport may keep in place.
  [[nodiscard]] std::size_t row_extent(std::size_t rank) const {
    return round_up(row_size_[rank], transport::kRowAlign);
  }
  [[nodiscard]] std::size_t control(std::size_t rank) const { return row_offset_[rank]; }
  [[nodiscard]] std::size_t membership(std::size_t rank) const {
    return row_offset_[rank] + sizeof(ControlRow);
  }
  // The trims (one i64 per subgroup) follow the MembershipRow.
  [[nodiscard]] std::size_t trims(std::size_t rank) const {
    return membership(rank) + sizeof(MembershipRow);
  }
  // The joiner table follows the trims.
  [[nodiscard]] std::size_t joiners(std::size_t rank) const {
    return membership(rank) + joiners_at_;
  }
  // The joiners' identities follow the joiner table, in a secured view only.
  [[nodiscard]] bool has_identities() const noexcept { return identities_; }
  [[nodiscard]] std::size_t identities(std::size_t rank) const {
    return joiners(rank) + sizeof(JoinEntry) * kMaxJoins;
  }
  // Bytes of the membership part: MembershipRow, the trims, the joiner table and (secured)
  // the identities.
  [[nodiscard]] std::size_t membership_len() const noexcept { return membership_len_; }
  [[nodiscard]] const SubgroupColumns& columns(std::size_t rank, std::size_t subgroup) const {
    return columns_[rank * subgroups_ + subgroup];
  }
  // Bytes from one slot's payload to the next in a ring of this subgroup.
  [[nodiscard]] std::size_t slot_stride(std::size_t subgroup) const { return stride_[subgroup]; }

  [[nodiscard]] static std::size_t stride_for(std::uint32_t max_payload) noexcept {
    return std::max(kLine, round_up(max_payload, kLine));
  }

 private:
  std::size_t subgroups_ = 0;
  std::vector<std::size_t> row_offset_;
  std::vector<std::size_t> row_size_;
  std::vector<SubgroupColumns> columns_;
  std::vector<std::size_t> stride_;
  std::size_t region_size_ = 0;
  std::size_t membership_len_ = 0;
  std::size_t joiners_at_ = 0;  // from the start of the membership part
  bool identities_ = false;
};

}  // namespace spindle::sst

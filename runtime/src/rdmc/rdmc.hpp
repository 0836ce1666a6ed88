// RDMC transfers (DESIGN §6; the RDMC paper): one node's part in the large-message
// multicast groups of one view, over the transport's two-sided block send/receive. A group
// is a list of members whose first one sends; a message is cut into blocks of
// `block_size` and moved by the group's block schedule (schedule.hpp), each member walking
// its own plan. Failures are reported, never repaired: a peer that fails mid-transfer is a
// suspicion for the membership layer, which installs the next view (and a new Rdmc).
//
//   regions (registered before connect)
//     control   per group: a ring of kHeaders message headers {size, where, seq} the sender
//               writes into every receiver's copy; per member the count of messages it
//               started (has a buffer for: nobody sends it a block of a message it has not
//               started) and finished (the header ring's flow control), written to every
//               member; per pair of nodes the receive credits (how many staging receives
//               one posted for the other). Each node may write only its own credits,
//               counters and (a sender) header ring: the constructor restricts the region
//               so (Transport::restrict_writes), and the pool to no one-sided writes.
//     pool      per peer, `staging_per_peer` block buffers posted as receives for it, then
//               per group this node belongs to `group_bytes` of message buffers (the
//               sender's copies, or the receiver's messages), first fit. A group's messages
//               use its own space only: one group's full buffers never stall another's
//               transfers (shared space could: two groups each waiting for the other's
//               relays to free room).
//     sends     where the transport keeps rows in place (shm; Transport::keeps_rows_in_place):
//               the senders' message buffers, one row per node holding the buffer space of
//               every group it sends in (a page at least), declared with share_rows() and
//               kept mapped past the view (keep_rows_mapped: loans read them). A sender's
//               groups then take their space here instead of in the pool.
//
//   sender     send(): waits for room (kHeaders messages unfinished at most, buffer space),
//              copies the message into the pool, announces {size, seq} in the header ring,
//              then sends its plan's blocks as credits allow
//   receiver   sees the header, takes a buffer from the pool (none free: it waits, and so
//              does everyone who would send it a block: back-pressure, nothing allocated
//              beyond the pool), says it started, and follows its plan: each block lands in
//              a staging buffer, is copied into the message by the block number in its
//              immediate, the staging buffer is posted again and its credit returned
//              (ready_for_block); relays send what they have
//   complete   a receiver with every block delivers the message (delivered(), bytes valid
//              until release()); once its own sends completed too it counts the message
//              complete and tells every member; once every receiver did, the sender's
//              delivered() fires with its own copy (the whole group has it)
//   done       a message released (and complete) leaves, in order; the count tells the
//              sender its header slot may be used again
//   in place   a sender whose every receiver maps its row of the sends region
//              (Transport::row_in_place: all on its host, over shm) sends no block: the
//              header says where the message lies ({size, offset | kInPlace, seq + 1}), each
//              receiver checks that it lies in the sender's space for the group, "has" every
//              block at once and delivers the sender's bytes where they are; the sender keeps
//              the buffer until every receiver is done with the message (their done counts),
//              not only until it released its own copy. A receiver that does not map the row
//              suspects the sender. docs/dev/rdmc.md, "In place on one host".
//
// Blocks land in staging buffers because a transport matches receives per peer in FIFO
// order, while blocks of different groups (and messages) from one peer interleave; the
// immediate names the block: group << 20 | (seq % kHeaders) << 16 | block. The message's size
// travels in its header, so the first block needs no size of its own.
//
// Threading: one thread (the view's protocol thread) calls everything but the
// constructor (control thread, before connect), regions(), reserve() and unreserve().
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "rdmc/schedule.hpp"

namespace spindle::rdmc {

using transport::NodeId;
using GroupId = std::uint32_t;

struct Settings {
  Algorithm algorithm = Algorithm::binomial_pipeline;
  std::uint32_t block_size = 1u << 20;
  std::uint32_t staging_per_peer = 2;               // receive buffers posted to each peer
  std::size_t group_bytes = std::size_t{16} << 20;  // message buffers per group, per member
  // Bytes each group's buffer space has on top of group_bytes, and max_message(g) with it: a
  // header its user puts in front of the largest message (the engine's copies).
  std::size_t header_room = 0;
  // Where the transport keeps rows in place (shm): the senders' buffers in the sends region,
  // read where they lie by the receivers that map them (no transfer). Off: the blocks move
  // as over any transport (measurements, and tests of the block path over shm).
  bool in_place = true;
};

inline constexpr std::uint32_t kSeqBits = 4;               // of the immediate: a message's seq
inline constexpr std::uint32_t kHeaders = 1u << kSeqBits;  // messages unfinished per group at most
inline constexpr std::uint32_t kMaxGroups = 4096;          // 12 bits of the immediate
inline constexpr std::uint32_t kBlockBits = 16;            // of the immediate: a block's number
inline constexpr std::uint32_t kMaxBlocks = 1u << kBlockBits;

struct Callbacks {
  // A message is here: every block received (a receiver), or every receiver completed it
  // (the sender, with its own copy). `bytes` stay valid until release(), which every member,
  // the sender too, calls once done with them. Without this callback messages are released
  // at once.
  std::function<void(GroupId, std::uint64_t seq, std::span<const std::byte> bytes)> delivered;
  // A transfer to or from `peer` failed: a suspicion for the membership layer. The groups
  // with `peer` stop.
  std::function<void(NodeId peer, const std::string& why)> failed;
};

class Rdmc {
 public:
  // Registers this node's regions on `t` (region ids derived from `epoch`). `groups[g]`
  // lists group g's members, its sender first; every member builds the same list.
  // `group_bytes[g]`, where given, is group g's message buffer space in place of
  // settings.group_bytes (the same list everywhere too). Throws std::invalid_argument on a
  // malformed list or settings.
  Rdmc(transport::Transport& t, std::uint64_t epoch, std::vector<std::vector<NodeId>> groups,
       Settings settings, Callbacks callbacks, std::vector<std::size_t> group_bytes = {});
  Rdmc(const Rdmc&) = delete;
  Rdmc& operator=(const Rdmc&) = delete;
  ~Rdmc();

  [[nodiscard]] std::vector<transport::RegionId> regions() const {
    if (sends_ == nullptr) return {control_id_, pool_id_};
    return {control_id_, pool_id_, sends_id_};
  }
  [[nodiscard]] static transport::RegionId control_region(std::uint64_t epoch) noexcept {
    return 0x5244'0000u + static_cast<transport::RegionId>(epoch & 0xffff);
  }
  [[nodiscard]] static transport::RegionId pool_region(std::uint64_t epoch) noexcept {
    return 0x5250'0000u + static_cast<transport::RegionId>(epoch & 0xffff);
  }
  [[nodiscard]] static transport::RegionId sends_region(std::uint64_t epoch) noexcept {
    return 0x5253'0000u + static_cast<transport::RegionId>(epoch & 0xffff);
  }
  // Where group g's header ring lies in the control region (the same at every node).
  [[nodiscard]] std::size_t header_offset(GroupId g) const { return groups_.at(g).header_offset; }
  // The largest message send() takes in group g (its buffer space, and the immediate's
  // block numbers).
  [[nodiscard]] std::size_t max_message(GroupId g) const;

  // After the transport connected: posts the staging receives and returns the credits. A
  // member the transport still connects to in the background (a joiner,
  // Transport::connecting) gets them when its PeerConnected comes (on_event), with
  // everything of ours it missed.
  void start();
  // Starts multicasting `message` in group g (this node must be its sender). False while
  // there is no room (kHeaders messages unfinished, or the pool full): try again later.
  // Throws std::invalid_argument when this node does not send in g or the message exceeds
  // max_message(g).
  bool send(GroupId g, std::span<const std::byte> message);
  // Zero-copy sending, in two steps. reserve() (any thread) takes `size` bytes of group g's
  // buffer space for a message the caller writes in place; nullopt while there is no room.
  // send_reserved() (the protocol thread) starts multicasting it: false while the header
  // ring is full (try again later), otherwise true with `seq` set. unreserve() (any thread)
  // gives back a reservation never sent. Same errors as send().
  [[nodiscard]] std::optional<std::span<std::byte>> reserve(GroupId g, std::size_t size);
  bool send_reserved(GroupId g, std::span<const std::byte> message, std::uint64_t& seq);
  void unreserve(GroupId g, std::span<const std::byte> reservation);
  // Whether send_reserved() in group g (this node its sender) would start a message now:
  // a header is free and the group is not broken.
  [[nodiscard]] bool can_send(GroupId g) const noexcept {
    return g < groups_.size() && groups_[g].member && groups_[g].rank == 0 && !groups_[g].broken &&
           header_room(groups_[g]);
  }
  // Whether `peer` runs this view's transfers with this node: it posted receives for our
  // blocks (a member still installing the view, or connecting, has not).
  [[nodiscard]] bool started_by(NodeId peer) const noexcept {
    const auto i = index_of(peer);
    return i && load(credit_offset(*i, me_)) > 0;
  }
  // Whether this node sends in group g.
  [[nodiscard]] bool sends_in(GroupId g) const noexcept {
    return g < groups_.size() && groups_[g].member && groups_[g].rank == 0;
  }
  // A receiver is done with the bytes of message `seq` of group g.
  void release(GroupId g, std::uint64_t seq);
  // Transport events (block completions, suspicions, members connected) for this node.
  void on_event(const transport::Event& e);
  // Moves transfers on (headers, buffers, sends, completions); true if it did anything.
  bool poll();

  struct Stats {
    std::uint64_t blocks_sent = 0;
    std::uint64_t blocks_received = 0;
    std::uint64_t messages_delivered = 0;
    std::uint64_t waits_for_pool = 0;     // a message found no buffer at once
    std::uint64_t blocks_placed = 0;      // of blocks_received: landed in place, no staging copy
    std::uint64_t messages_in_place = 0;  // of messages_delivered: read in the sender's buffer
  };
  [[nodiscard]] const Stats& stats() const noexcept { return stats_; }

 private:
  struct Message {
    std::uint64_t seq = 0;
    std::uint64_t size = 0;
    std::uint32_t blocks = 0;
    // Its buffer: in the pool, or in the sends region (the sender's there, and a receiver's
    // read in place).
    transport::RegionId region = 0;
    std::size_t offset = 0;
    bool in_place = false;  // no transfer: every receiver reads the sender's buffer
    std::vector<Step> plan;
    std::size_t next = 0;  // the next plan step whose send is due
    std::vector<char> have;
    std::uint32_t have_count = 0;
    std::uint32_t sends = 0;       // in the plan
    std::uint32_t sends_done = 0;  // BlockSent
    bool delivered = false;
    bool released = false;
    bool finished = false;  // its blocks all here and our sends done
  };
  struct Group {
    std::vector<NodeId> members;
    std::vector<std::uint32_t> node;  // per rank: index into nodes_
    std::uint32_t rank = 0;           // ours
    bool member = false;
    bool broken = false;
    std::uint64_t next_seq = 0;  // sender: the next to announce; receiver: the next to start
    std::deque<Message> active;  // in seq order
    std::uint64_t done = 0;      // messages gone (complete and released) here, in order
    std::uint64_t complete = 0;  // messages complete here, in order
    std::size_t header_offset = 0;
    std::size_t started_offset = 0;   // per rank: messages it started
    std::size_t complete_offset = 0;  // per rank: messages complete there
    std::size_t done_offset = 0;      // per rank: messages gone there
    std::size_t bytes = 0;            // its buffer space: message bytes and header room
    // With a sends region: where the sender's buffer space starts there (in its row).
    std::size_t send_at = 0;
    // Its buffer space in the pool, or for its sender in the sends region (offset -> size),
    // under pool_mu_.
    std::map<std::size_t, std::size_t> free;
    std::map<std::size_t, std::size_t> used;
  };

  [[nodiscard]] std::uint64_t load(std::size_t off) const noexcept;
  void store(std::size_t off, std::uint64_t v) noexcept;
  void push(NodeId peer, std::size_t off, std::size_t len);
  // Posts node i's staging receives and returns its credits.
  void open(std::uint32_t i);
  // `node`'s index in nodes_, if it is in any group.
  [[nodiscard]] std::optional<std::uint32_t> index_of(NodeId node) const noexcept;
  [[nodiscard]] std::optional<std::size_t> allocate(Group& g, std::size_t size);
  void free(Group& g, std::size_t offset);
  // Checks that this node sends in `id` and that `size` bytes can go; throws otherwise.
  Group& sender_group(GroupId id, std::size_t size);
  // The largest message group g takes (max_message(g)).
  [[nodiscard]] std::size_t largest(const Group& g) const noexcept;
  // Room in the header ring for the group's next message.
  [[nodiscard]] bool header_room(const Group& g) const noexcept;
  [[nodiscard]] std::size_t credit_offset(std::uint32_t from, std::uint32_t to) const noexcept;
  [[nodiscard]] Message* find(Group& g, std::uint32_t parity);
  bool start_messages(Group& g);
  bool send_blocks(GroupId id, Group& g);
  bool finish(GroupId id, Group& g);
  // The message a block with this immediate is for, if this node receives it (`want`: the
  // block's length).
  Message* expecting(std::uint32_t immediate, std::uint32_t& want);
  // The block placer (Transport::place_blocks): an expected block's place in its message.
  std::optional<transport::BlockPlace> place(std::uint32_t immediate, std::uint32_t length);
  // Takes a block in: copied from its staging buffer into its message (the buffer posted
  // again), or placed there already by the transport; either way its credit goes back.
  void land(const transport::BlockReceived& b);
  // Message::have: a block placed (the transport copies it there), not yet reported.
  static constexpr char kPlaced = 2;
  void fail(NodeId peer, const std::string& why);
  // Where a message's bytes are.
  [[nodiscard]] std::byte* address(const Message& m) const noexcept {
    return (m.region == pool_id_ ? pool_ : sends_) + m.offset;
  }
  // The buffer space group g's messages use here: its sender's in the sends region (where
  // there is one), a receiver's in the pool.
  [[nodiscard]] std::byte* space_of(const Group& g) const noexcept {
    return g.rank == 0 && sends_ != nullptr ? sends_ : pool_;
  }
  // Whether every receiver of group g reads its sender's buffer in place (the sender asks).
  [[nodiscard]] bool all_in_place(const Group& g) const;
  // Starts group g's next message (`size` bytes in `blocks`), announced in place at `where`
  // (its header's, the in-place bit included) of the sends region.
  bool start_in_place(Group& g, std::uint64_t size, std::uint32_t blocks, std::uint64_t where);
  // The least of the counts group g's receivers wrote in the column at `column_offset` of
  // the control region (started, complete or done).
  [[nodiscard]] std::uint64_t least(const Group& g, std::size_t column_offset) const noexcept;
  // Writes our `started`/`done` count of group g to its other members.
  void announce(Group& g, std::size_t column_offset, std::uint64_t value);
  [[nodiscard]] std::uint32_t immediate(GroupId g, std::uint64_t seq, std::uint32_t block) const;

  transport::Transport* t_;
  Settings s_;
  Callbacks cb_;
  transport::RegionId control_id_;
  transport::RegionId pool_id_;
  transport::RegionId sends_id_;
  std::byte* control_ = nullptr;
  std::byte* pool_ = nullptr;
  // Senders' buffers, one row per node (every group it sends in), read in place by the
  // receivers that map the sender's row (Transport::share_rows); null where the transport
  // keeps no rows in place, the senders' buffers then in the pool.
  std::byte* sends_ = nullptr;
  std::size_t pool_size_ = 0;
  std::vector<NodeId> nodes_;  // every node of any group, ascending
  std::uint32_t me_ = 0;       // our index in nodes_
  std::vector<Group> groups_;
  std::size_t staging_end_ = 0;            // staging buffers: [0, staging_end_)
  std::vector<std::uint64_t> sent_to_;     // per node: blocks sent (credits used)
  std::vector<std::uint64_t> posted_for_;  // per node: staging receives posted
  std::vector<char> suspected_;            // per node
  std::vector<std::size_t> staging_at_;    // per node: its staging receives' offset
  // Our own ranges of the control region (its grant), header rings first: what a peer that
  // connects late is sent at once.
  std::vector<transport::ByteRange> mine_;
  std::mutex pool_mu_;  // the groups' free/used maps (reserve() is any thread)
  Stats stats_;
};

}  // namespace spindle::rdmc

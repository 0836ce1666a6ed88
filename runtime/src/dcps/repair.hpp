// Repair (docs/dcps.md, "Repair"): the latest changes per instance of a member's RELIABLE
// KEEP_LAST writers, sent to a member whose reliable readers missed some of the topic's
// messages while it was left behind for a lag (docs/dev/smc.md, "Lagging members").
//
//   member X (its readers of T missed          every member with RELIABLE KEEP_LAST writers
//   messages while it was left behind)         of T (KeptSamples: their latest per instance)
//   view boundary: on_gaps(T)
//   repair_request {T}  ---------------------> (builtin subgroup)
//                                              repair pieces for X: the floors of X's readers,
//   last piece: each reliable reader of T <--- then each kept message
//   takes what is newer than what it has
//
// No member waits for a repair and nothing is held back: a repair only adds changes, and a
// reader's cache drops a change it already has (per instance and writer, by the writer's
// message number: HistoryCache, Change::writer_seq), whichever of the stream and the repair
// brings it first. Per instance the order holds; across instances the repaired changes come
// where the repair reached the reader (its restart point).
//
// Threading: KeptSamples is fed on the protocol thread (a TopicSink of its topic); keep(),
// forget() and append_to() from any thread. mu_ is a leaf.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dcps/history_cache.hpp"
#include "dcps/router.hpp"

namespace spindle::dcps {

// One piece of a history (refresh_state) or of a repair (repair), as sent in the builtin
// subgroup: u64 epoch | u64 topic | u32 piece | u32 pieces | u32 n | u32 target node x n |
// bytes (little-endian). Pieces of one whole go back to back from one sender.
inline constexpr std::size_t kPieceHead = 8 + 8 + 4 + 4 + 4;
struct Piece {
  std::uint64_t epoch = 0;
  std::uint64_t topic = 0;
  std::uint32_t piece = 0;
  std::uint32_t pieces = 0;
  std::vector<NodeId> targets;
  std::span<const std::byte> bytes;  // into the message
};
// Checks that a piece came from `sender`'s own participant and its head; nullopt and `error`
// saying what is wrong.
[[nodiscard]] std::optional<Piece> parse_piece(const ParsedSample& s, NodeId sender,
                                               std::string& error);
// The topic ids of a refresh_request or repair_request from `sender` (u64 each,
// little-endian); nullopt and `error` when it is not such a list from that member.
[[nodiscard]] std::optional<std::vector<std::uint64_t>> parse_topic_list(const ParsedSample& s,
                                                                         NodeId sender,
                                                                         std::string& error);
// Says on stderr that a refresh or repair message from `sender` was dropped, and why.
void report_dropped(NodeId sender, SampleKind kind, const std::string& error);

// A writer's floor for one of its matched readers: its last message number when the match
// began. What it wrote up to there is not for that reader.
struct RepairFloor {
  std::uint64_t reader = 0;
  std::uint64_t writer = 0;
  std::uint64_t floor = 0;
  friend bool operator==(const RepairFloor&, const RepairFloor&) = default;
};

// What a repair carries: every writer's floors for the target's readers, and the messages
// with their places in the total order as delivered at the sender (ParsedSample::epoch,
// subgroup, order):
//   u32 n | (u64 reader | u64 writer | u64 floor) x n |
//   (u32 length | u64 epoch | u32 subgroup | i64 order | message of `length` bytes) repeated
// little-endian. decode_repair() checks every length and says what is wrong.
void encode_repair(std::span<const RepairFloor> floors, std::span<const std::byte> messages,
                   std::vector<std::byte>& out);
struct Repair {
  std::vector<RepairFloor> floors;
  std::vector<ParsedSample> messages;  // spans into the decoded bytes, with their places
};
[[nodiscard]] bool decode_repair(std::span<const std::byte> bytes, Repair& out, std::string& error);

// The latest `depth` changes (data, dispose, unregister) per instance of this member's RELIABLE
// KEEP_LAST writers of one topic, as they were delivered here. A dispose or an unregister
// drops the changes of the instance before it: what is kept is the instance's latest state.
// An instance whose latest change is an unregister goes `forget_after` later (the writer has
// no more business with it, and every member that missed the unregister has asked for its
// repair by then or was removed): instances that come and go do not pile up. An external
// client keeps its writers' changes as its relay delivered them (group::Want::own) and answers
// repair requests through that relay.
class KeptSamples final : public TopicSink {
 public:
  using Clock = std::chrono::steady_clock;
  explicit KeptSamples(Clock::duration forget_after) : forget_after_(forget_after) {}

  // `writer` (a local writer of the topic) is kept from now on, `depth` changes per instance.
  void keep(std::uint64_t writer, std::int32_t depth);
  // `writer` went: its changes go. True when no writer is kept any more.
  bool forget(std::uint64_t writer);
  // Every kept message, writer by writer, instance by instance, oldest first, appended to
  // `out` as a repair carries it (u32 length | place | message). Returns how many.
  std::size_t append_to(std::vector<std::byte>& out) const;

  // Instances kept now (every writer's), and unregistered ones forgotten as of `now` (called
  // by on_sample with the clock's time).
  [[nodiscard]] std::size_t instances() const;
  void forget_unregistered(Clock::time_point now);

  // TopicSink (protocol thread).
  void on_sample(const ParsedSample& sample, NodeId sender) override;
  void on_batch_end() override {}
  // Its own writers' messages only (an external client's relay hands on no more).
  [[nodiscard]] group::Want wants() const override { return group::Want::own; }

 private:
  // One instance: a ring of `depth` messages (each its place, then header and payload),
  // oldest at `head`.
  struct Slot {
    std::vector<std::vector<std::byte>> ring;
    std::size_t head = 0;
    Clock::time_point unregistered{};  // when its latest change became an unregister
  };
  struct Unregistered {
    std::uint64_t writer = 0;
    cdr::KeyHash key{};
    Clock::time_point at{};
  };
  struct Kept {
    std::size_t depth = 1;
    std::unordered_map<cdr::KeyHash, Slot, KeyHashHash> slots;
  };

  void forget_unregistered_locked(Clock::time_point now);  // mu_ held

  const Clock::duration forget_after_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, Kept> writers_;
  std::deque<Unregistered> unregistered_;  // oldest first
};

}  // namespace spindle::dcps

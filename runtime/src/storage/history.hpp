// spindle::storage::History: what the `volatile` consistency level keeps in memory (DESIGN
// §8) — one topic's retained history at one member, for readers that come later (in this
// process, in another member, in a process that joins: docs/storage.md).
//
// Every member of a retained topic's subgroup (with a writer that offers durability
// TRANSIENT_LOCAL or more, or consistency VOLATILE or LOGGED, the subgroup spans the whole
// domain: group/layout.hpp) feeds every message of the topic to its History in delivery
// order. Delivery order is the same at every member, so the histories are the same at every
// member at each view boundary: the joiner's copy travels in the state transfer.
//
//   History of topic T
//     writers:  guid -> WriterTerms (depth, limits, per writer or per instance, outlives
//               the writer or not), and whether the writer is gone
//     slots:    (writer guid or 0, key hash) -> deque of entries, oldest first
//     order:    every entry by its arrival number (`seq`, this History's own counter):
//               the topic's total order as delivered here
//
//   entry:  seq | writer guid | key hash | kind | message bytes (header and payload)
//
// The terms of the writer of a message decide: TRANSIENT_LOCAL keeps the last `depth`
// samples per (writer, instance), and after them the instance's latest dispose and
// unregister (new data drops those: the instance lives again), and a writer's changes go when the
// writer goes (retire(): the DDS rule that such data lives with its writer); TRANSIENT and
// PERSISTENT keep the last `depth` per instance, whoever wrote them, after the writer is gone.
// `max_samples` bounds the whole history (the oldest entry goes first) and `max_instances`
// the instances (the one updated longest ago goes first). A message from a writer that was
// never registered is not kept, nor one from a gone writer whose data went with it. The
// retirement travels in another subgroup than the writer's last messages, so members see
// them in either order: both rules give every member the same history once both arrived.
//
// Threading: every member is safe from any thread (one lock, a leaf). retain() runs on the
// protocol thread as messages are delivered; snapshot() on the control thread at a view
// boundary, or wherever the caller holds deliveries back.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <vector>

#include <spindle/detail/thread_annotations.hpp>

namespace spindle::storage {

using KeyHash = std::array<std::uint8_t, 16>;

// ResourceLimits' LENGTH_UNLIMITED.
inline constexpr std::int32_t kUnlimited = -1;

// How the messages of one writer are kept (its DataWriter QoS, mapped by DCPS).
struct WriterTerms {
  bool per_writer = true;        // TRANSIENT_LOCAL: slots per (writer, instance)
  bool outlives_writer = false;  // TRANSIENT, PERSISTENT: kept after the writer goes
  std::int32_t depth = 1;        // kUnlimited: KEEP_ALL
  std::int32_t max_samples = kUnlimited;
  std::int32_t max_instances = kUnlimited;
  std::int32_t max_samples_per_instance = kUnlimited;
  friend bool operator==(const WriterTerms&, const WriterTerms&) = default;
};

// What kind of change a message is (DCPS: data, dispose, unregister).
enum class ChangeKind : std::uint8_t { data = 1, dispose = 2, unregister = 3 };

struct Entry {
  std::uint64_t seq = 0;  // arrival number in this History
  std::uint64_t writer = 0;
  KeyHash key{};
  ChangeKind kind = ChangeKind::data;
  std::vector<std::byte> message;
  friend bool operator==(const Entry&, const Entry&) = default;
};

struct HistoryStats {
  std::uint64_t entries = 0;
  std::uint64_t instances = 0;
  std::uint64_t bytes = 0;    // message bytes held
  std::uint64_t evicted = 0;  // entries dropped by depth or limits (not by a writer going)
};

class History {
 public:
  History() = default;
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // A writer whose messages this History keeps (again: new terms apply from now on; a
  // retired one is kept again, its entries gone or not).
  void add_writer(std::uint64_t guid, const WriterTerms& terms);
  // The writer is gone: without `outlives_writer` its entries go now; a message of it that
  // arrives later is not kept. Its terms stay known (entries of it may remain).
  void retire(std::uint64_t guid);
  // Keeps one delivered message — `message`, then `more` — trimming to its writer's terms;
  // false when not kept.
  bool retain(std::uint64_t writer, const KeyHash& key, ChangeKind kind,
              std::span<const std::byte> message, std::span<const std::byte> more = {});
  // Drops every entry (the writers stay known): a joiner's transferred history follows.
  void clear();
  // Puts back an entry a joiner received in the state transfer (its `seq` is kept).
  void restore(Entry entry);

  // Every entry, oldest first; with `keep`, those whose writer's guid it keeps.
  [[nodiscard]] std::vector<Entry> snapshot() const {
    return snapshot([](std::uint64_t) { return true; });
  }
  template <class Filter>
  [[nodiscard]] std::vector<Entry> snapshot(Filter&& keep) const {
    spindle::detail::MutexLock lock(mu_);
    std::vector<Entry> out;
    out.reserve(order_.size());
    for (const auto& [seq, at] : order_)
      if (keep(at->writer)) out.push_back(*at);
    return out;
  }
  // Writers whose entries are here, or who are registered: their guid and whether gone.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, bool>> writers() const;
  [[nodiscard]] bool knows(std::uint64_t writer) const;
  // Whether an entry of `writer` is kept now: known, and live or kept after it went.
  [[nodiscard]] bool keeps(std::uint64_t writer) const;
  [[nodiscard]] HistoryStats stats() const;

 private:
  struct SlotKey {
    std::uint64_t writer = 0;  // 0: per instance
    KeyHash key{};
    friend auto operator<=>(const SlotKey&, const SlotKey&) = default;
  };
  struct Slot {
    std::deque<Entry> entries;
    std::uint64_t last_seq = 0;
  };
  struct Writer {
    WriterTerms terms;
    bool gone = false;
  };

  [[nodiscard]] SlotKey slot_key(const Entry& e) const SPINDLE_REQUIRES(mu_);
  void insert(Slot& slot, Entry e) SPINDLE_REQUIRES(mu_);
  void drop_front(Slot& slot) SPINDLE_REQUIRES(mu_);
  [[nodiscard]] static std::size_t data_count(const Slot& slot);
  template <class Pred>
  void remove_if(Slot& slot, Pred pred) SPINDLE_REQUIRES(mu_);
  void enforce_limits(const WriterTerms& terms) SPINDLE_REQUIRES(mu_);

  mutable spindle::detail::Mutex mu_;
  std::map<std::uint64_t, Writer> writers_ SPINDLE_GUARDED_BY(mu_);
  std::map<SlotKey, Slot> slots_ SPINDLE_GUARDED_BY(mu_);
  std::map<std::uint64_t, Entry*> order_ SPINDLE_GUARDED_BY(mu_);  // seq -> entry in a slot
  std::uint64_t next_seq_ SPINDLE_GUARDED_BY(mu_) = 1;
  std::uint64_t bytes_ SPINDLE_GUARDED_BY(mu_) = 0;
  std::uint64_t evicted_ SPINDLE_GUARDED_BY(mu_) = 0;
};

}  // namespace spindle::storage

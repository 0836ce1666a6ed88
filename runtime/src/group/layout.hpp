// The subgroup layout of a view (DESIGN §7): which subgroups exist and which one carries a
// channel — one topic's stream of a given ordering. DCPS names channels, never subgroups.
//
// Per-topic subgroups. Subgroup 0 is the builtin one: every member belongs and sends
// (discovery records, goodbyes), atomic. A writer's channel is its topic, its ordering and
// its partition set (the publisher's PARTITION names, as one key). For each topic and
// ordering, the channels with a writer are grouped by the readers that match them: two
// partition sets one reader matches (a reader in both, or with a wildcard) travel in one
// subgroup, so that every reader still takes all it matches in one total order. Each such
// group with a reader is a subgroup whose senders are its writers' processes and whose
// members are those and the processes with a reader that matches one of its partition
// sets, ordered by (topic, ordering, smallest partition key). A member whose readers there
// are all best-effort, and that writes nothing there, is one of its listeners: it receives
// and holds no one (a paused best-effort reader stops only itself; docs/dev/smc.md). The members
// that neither write nor listen nor have a RELIABLE KEEP_ALL reader of a RELIABLE KEEP_ALL
// writer there are demotable (Subgroup::demotable): one that lags for the subgroup's
// lag_bound is left behind until the next view (docs/dev/smc.md). A retained channel (a writer
// that keeps history for late readers, docs/storage.md) has every member of the view as a
// reader: its subgroup spans the domain, so that every member holds the same history and a
// late reader anywhere takes it from its own member; a member left behind there that missed
// messages gets that history again after the next view boundary (docs/storage.md, "Refresh"). A
// process with no endpoint on a topic, or only readers in other partitions, is in none of its
// subgroups: it receives none of those samples and pays nothing for them; a channel nobody reads
// has no subgroup at all (its writes go nowhere, as DDS has it for a writer with no matched
// reader).
//
// The layout is a pure function of the view's members and the demand — every endpoint the
// DCPS layer knows, from discovery records delivered in the builtin subgroup's total order
// — so every survivor of a view change, having delivered the same prefix up to the ragged
// edge, computes the same next view. Creating or deleting an endpoint changes the demand;
// the engine then asks for a view change with no member change (a relayout), batching
// whatever else changed meanwhile — also where the layout stays the same, because the
// view boundary is where every member starts (or stops) taking a writer's samples.
//
//   view v+1:  subgroup 0  "builtin"          members A B C   senders A B C   atomic
//              subgroup 1  "Track/atomic"     members A C     senders A       (A writes, C reads)
//              subgroup 2  "Track/atomic#2"   members B D     senders B       (partition "ops")
//              subgroup 3  "Alerts/unordered" members B C     senders B C
//
// Ring sizes: a topic's window and slot are the domain file's engine settings, or larger
// where one of its writers asks for more in its Engine QoS policy. RDMC space for messages
// larger than a slot (Subgroup::large) only where a writer's type can have such samples.
//
// Threading: pure functions over values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "group/view.hpp"

namespace spindle::security {
class Permissions;
}

namespace spindle::group {

// One topic's stream: topic 0 is the builtin stream (discovery, liveliness, goodbyes).
// `partition` keys the writers' partition set (dcps: partition_key()); 0 on topic 0.
struct Channel {
  std::uint64_t topic = 0;
  Ordering ordering = Ordering::atomic;
  std::uint64_t partition = 0;
  friend bool operator==(const Channel&, const Channel&) = default;
};

// Messages larger than a slot that one sender's RDMC group has unfinished at most
// (rdmc::kHeaders): a subgroup whose writers' samples are bounded has room for this many of
// the largest (Subgroup::large).
inline constexpr std::uint64_t kLargeInFlight = 16;
// An unbounded type's writers have room for kLargeInFlight samples of this many bytes at
// least (1 MiB with the header), more as they ask for it (ChannelDemand::room).
inline constexpr std::uint64_t kUnboundedRoom = 64 * 1024;

// What sizes a view's rings: the domain file's engine settings.
struct LayoutSettings {
  std::uint32_t window_size = 100;
  std::uint32_t slot_size = 1024;     // bytes of a message after the DCPS sample header
  std::uint32_t header_size = 0;      // bytes of that header, added to every slot
  std::uint32_t min_slot_size = 512;  // a builtin slot always holds a discovery record
  // How long a demotable member of an atomic topic subgroup may lag (Subgroup::lag_bound):
  // the domain file's engine.lag_bound, unless the topic's writers ask otherwise.
  std::chrono::milliseconds lag_bound{100};
  Knobs knobs;
  // A secured domain's permissions (docs/security.md): a member whose certificate subject
  // (Member::subject) has no grant to publish a channel's topic is none of its senders, and
  // one with no grant to subscribe is in none of its subgroups, retained ones included; so
  // its process never receives a byte of the topic. Null: everyone may.
  std::shared_ptr<const security::Permissions> permissions{};
  friend bool operator==(const LayoutSettings&, const LayoutSettings&) = default;
};

// What the DCPS layer needs of one channel: the processes with a writer on it and those
// with a reader of its topic, and what its writers' Engine policies ask for (0: the
// domain's setting). A reader's entry names the writers' partition sets it matches in
// `partitions` (its channel's own partition is not used).
struct ChannelDemand {
  Channel channel;
  std::string name;                       // the topic's name, for the subgroup's name
  std::vector<NodeId> writers;            // any order, duplicates allowed
  std::vector<NodeId> readers;            // any order, duplicates allowed
  std::vector<std::uint64_t> partitions;  // readers: the partition sets they match
  std::uint32_t window_size = 0;          // slots per sender
  std::uint32_t max_payload = 0;          // bytes of a message after the DCPS sample header
  // Writers: the largest sample the writer can write (its type's bound, after the DCPS
  // sample header as max_payload counts), or 0 where its type is unbounded. A subgroup whose
  // writers' samples all fit its slot has no RDMC space (Subgroup::large); otherwise each
  // sender's space holds kLargeInFlight of the largest bound or, for an unbounded type, of
  // the largest `room` its writers asked for (kUnboundedRoom at least), and at most the
  // domain's rdmc_buffer_size.
  std::uint64_t max_sample = 0;
  // Writers of an unbounded type: the largest sample they have written or are writing
  // (discovery::WriterRecord::room); the subgroup's space grows with it, a view at a time.
  std::uint64_t room = 0;
  // Its writers' messages are retained (dcps/retained.hpp): every member keeps them, so
  // every member is in its subgroup, with a reader or not (docs/storage.md).
  bool retained = false;
  // Readers: they ask for less (BEST_EFFORT) and hold no one. A node whose readers of a
  // subgroup are all passive, and that writes nothing there, is a listener of it
  // (Subgroup::listeners, docs/dev/smc.md "Listeners").
  bool passive = false;
  // Readers: RELIABLE and KEEP_ALL. Writers: RELIABLE and KEEP_ALL. Such a reader may hold
  // such a writer for its max_blocking_time, as in every DDS: where a subgroup has a writer
  // that keeps all, the node of a reader that keeps all is never demoted for a lag. A
  // KEEP_LAST writer waits for no reader longer than the lag bound (DDS lets it replace what
  // a reader did not take).
  bool keeps_all = false;
  // Writers: the Engine policy's lag_bound, when the policy is not left at its defaults
  // (0: never demote); nullopt: the domain's setting. The subgroup takes the longest its
  // writers ask for, 0 counting as the longest.
  std::optional<std::chrono::milliseconds> lag_bound{};
  // For a secured domain's permissions (LayoutSettings::permissions): the DCPS topic (empty:
  // `name`) and, for writers, their publisher's PARTITION names.
  std::string topic_name{};
  std::vector<std::string> partition_names{};
};

// Everything the DCPS layer needs laid out, and the version of its endpoint table: every
// change of the table (an endpoint came, went, or its member left) counts one. A view is
// installed for each new generation, even where the layout stays the same, since matches
// take effect at view boundaries (dcps/entities.hpp).
struct Demand {
  std::uint64_t generation = 0;
  std::vector<ChannelDemand> channels;
};

// The first view of a domain whose members are known (epoch 1): the builtin subgroup only.
[[nodiscard]] View first_view(std::vector<Member> members, const LayoutSettings& s);
// The subgroups of a view of `members` (in rank order) for `demand`; nodes of the demand
// that are not members are left out.
[[nodiscard]] std::vector<Subgroup> layout(const std::vector<Member>& members,
                                           const std::vector<ChannelDemand>& demand,
                                           const LayoutSettings& s);
// The subgroup of `v` that carries `c`, if this layout has one.
[[nodiscard]] std::optional<std::uint32_t> subgroup_of(const View& v, Channel c) noexcept;
// Whether `node` may send on `c` in `v` (a sender of its subgroup).
[[nodiscard]] bool sends(const View& v, Channel c, NodeId node) noexcept;
// Whether `node` receives what is sent on `c` in `v` (a member of its subgroup).
[[nodiscard]] bool receives(const View& v, Channel c, NodeId node) noexcept;

}  // namespace spindle::group

// What one participant sees of its running domain, as plain values: the view (its epoch,
// members and leader), the subgroups that carry each topic, the SST counters of every member
// of those subgroups (how far each one's delivery is behind the stream), and this process's
// own per-topic counts of what its engine delivered and sent. `spindle status` takes two of
// these and shows the rates between them (docs/tools.md, "spindle status").
//
// A participant sees the counters of a subgroup only where it is a member (the SST pushes
// them to the members alone): `spindle status` reads every topic BEST_EFFORT, which makes it
// a listener of each (docs/dev/smc.md, "Listeners") that holds nobody back.
//
// Threading: domain_status() may be called from any application thread, concurrently with
// the protocol: it copies the current view under the engine's view lock (a leaf, held for a
// pointer copy), reads SST counters with one acquire load each and the per-topic counts from
// atomics, so it never waits on a protocol thread. Counters read at one moment of the
// protocol may be a step apart from one another.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dds::domain {
class DomainParticipant;
}  // namespace dds::domain

namespace spindle {

struct MemberStatus {
  std::uint32_t node = 0;
  std::string host;  // where its transport listens
  std::uint16_t port = 0;
  std::uint32_t pid = 0;   // 0: unknown (listed in a domain file)
  bool leader = false;     // rank 0 of the view: it leads view changes and admits joiners
  bool self = false;       // the participant that took the status
  bool joining = false;    // joined with this view, not yet connected everywhere
  bool suspected = false;  // some member's SST row suspects it (a view change follows)
};

// One member of a subgroup as the SST counters this participant holds say.
struct SubgroupMemberStatus {
  std::uint32_t node = 0;
  bool sender = false;
  bool listener = false;     // receives and holds nobody; pushes no counters
  bool left_behind = false;  // demoted for a lag until the next view (docs/dev/smc.md)
  // Atomic subgroups: the highest global sequence number received with every lower one,
  // and the highest delivered (-1: none yet). Unordered: messages taken, summed over the
  // senders (both the same). Empty where its counters do not reach this participant (a
  // listener's, or a subgroup this participant is not a member of).
  std::optional<std::int64_t> received;
  std::optional<std::int64_t> delivered;
  // How far its delivery is behind the stream: atomic, the highest `received` of any member
  // minus its `delivered` (sequence numbers, nulls included); unordered, what the senders
  // sent minus what it took (messages). Empty where `delivered` is.
  std::optional<std::uint64_t> lag;
};

struct SubgroupStatus {
  std::uint32_t index = 0;  // in the view; 0 is the builtin subgroup
  std::string name;         // "Square/atomic", "Square/atomic#2" (layout: a partition group)
  std::string topic;        // the topic's name; empty for the builtin subgroup
  std::uint64_t topic_id = 0;
  bool atomic = true;  // total order (atomic) or per-sender FIFO (unordered)
  std::uint32_t window = 0;
  std::uint32_t max_payload = 0;
  bool self_member = false;  // the counters below reach this participant
  std::vector<std::uint32_t> senders;
  std::vector<SubgroupMemberStatus> members;  // in rank order
  std::uint64_t sent = 0;                     // messages its senders sent in this view
};

// One topic: what this participant's engine delivered and sent of it since it joined (all
// views, every subgroup of the topic). Monotonic: a rate is the difference of two snapshots
// over the time between them.
struct TopicStatus {
  std::string name;  // empty where discovery does not name the id (yet)
  std::string type_name;
  std::uint64_t id = 0;
  std::uint64_t delivered = 0;  // messages (samples, disposes, ...) delivered here
  std::uint64_t delivered_bytes = 0;
  std::uint64_t sent = 0;  // messages this participant's writers committed
  std::uint64_t sent_bytes = 0;
};

struct DomainStatus {
  std::uint32_t domain_id = 0;
  std::uint32_t self = 0;  // this participant's node id
  std::string transport;   // "tcp", "shm", "rdma"
  std::uint64_t epoch = 0;
  std::uint64_t identity = 0;  // the domain's identity since it was founded (0: none)
  std::uint32_t leader = 0;
  std::string halted;                 // why this member stopped; empty while it runs
  bool client = false;                // an external client: its relay's view, no SST counters
  std::vector<MemberStatus> members;  // in rank order
  std::vector<SubgroupStatus> subgroups;
  std::vector<TopicStatus> topics;  // every topic discovered or counted, by name
  std::chrono::steady_clock::time_point taken;
};

// The status of `dp`'s domain as `dp` sees it now. Throws dds::core::AlreadyClosedError for a
// closed participant.
[[nodiscard]] DomainStatus domain_status(const dds::domain::DomainParticipant& dp);

}  // namespace spindle

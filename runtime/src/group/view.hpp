// A view of the domain's group (DESIGN §7): its number (epoch), who the members are and
// how they are reached, which subgroups exist (members, senders, ring window, slot
// payload, ordering) and the engine knobs. The view engine (engine.hpp) builds SST, SMC and
// the predicate thread from one View and tears them down at the next. A View is a plain
// value: copy it, compare it, replace it with the next one. A group file (docs/dev/smc.md,
// "Group file") is a View in YAML, for the SST/SMC tests and benchmarks.
//
// Threading: a value type with no shared state; parse/load/validate are pure functions
// safe from any thread. Errors throw GroupError whose message names the file, the line
// and the key ("group.yaml:12: subgroups[0].window_size: must be in 1..65536").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "rdmc/schedule.hpp"
#include "sst/member_set.hpp"

namespace spindle::group {

using transport::NodeId;

// How a subgroup orders deliveries (DESIGN §8): total round-robin order delivered when
// stable, or per-sender FIFO delivered on receipt.
enum class Ordering : std::uint8_t { atomic, unordered };
[[nodiscard]] std::string_view to_string(Ordering o) noexcept;

struct Member {
  NodeId id = 0;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  // The member's process (liveness.hpp): its pid and the id of the host (kernel and pid
  // namespace) it runs on, so that members on the same host can tell its death for
  // certain. 0: unknown (a member listed in a domain file) — the majority rule decides.
  std::uint32_t pid = 0;
  std::uint64_t host_id = 0;
  // Joined with this view (docs/membership.md, "Joining"): it has yet to connect and take
  // part in a view change, so it counts for nothing in the majority rule, and connecting to
  // it is bounded by twice the suspicion timeout. Cleared by the next view change (the
  // leader asks for one once the view is installed).
  bool joining = false;
  // The nonce the join port gave it when it asked to join (docs/membership.md, "Joining"):
  // its transport proves it is that joiner (the tcp HELLO carries it). 0: none (a member
  // listed in a domain file).
  std::uint64_t nonce = 0;
  // In a secured domain (docs/security.md): the subject (RFC 4514, canonical) and serial
  // (hex) of the certificate the member proved at join, or the subject its domain-file
  // entry names. Its streams are authenticated to the subject, the permissions are granted
  // to it, and a revocation list naming the serial removes it. Empty: not secured.
  std::string subject{};
  std::string serial{};
  friend bool operator==(const Member&, const Member&) = default;
};

struct Subgroup {
  std::string name;
  std::vector<NodeId> members;  // in rank order
  std::vector<NodeId> senders;  // subset of members, in sender-rank order
  std::uint32_t window_size = 100;
  std::uint32_t max_payload = 1024;
  Ordering ordering = Ordering::atomic;
  std::uint64_t topic = 0;  // the DCPS topic it carries (layout.hpp); 0: the builtin one
  // The writers' partition sets it carries (layout.hpp: Channel::partition), ascending;
  // empty for the builtin subgroup.
  std::vector<std::uint64_t> partitions{};
  // Members that receive and hold no one (docs/dev/smc.md, "Listeners"): a slot is free and a
  // message stable without them; they take, per sender in order, what is still in the ring
  // when they look, and skip what was overwritten. Never senders; ascending.
  std::vector<NodeId> listeners{};
  // Members that a lag demotes (docs/dev/smc.md, "Lagging members"): one whose counters stood
  // still for `lag_bound` while another member's went on is left out of what holds the ring
  // for the rest of the view. It catches up in the total order, skipping and counting what
  // was overwritten, and asks for the next view, where it holds again. Never senders or
  // listeners; ascending. A zero lag_bound demotes nobody. Unordered: it takes each sender's
  // messages in order, as a listener does, until the next view.
  std::vector<NodeId> demotable{};
  std::chrono::milliseconds lag_bound{0};
  // RDMC buffer space for messages larger than a slot (engine.hpp, docs/dev/rdmc.md): the
  // largest such message each sender may send, which every member of the subgroup reserves
  // per sender. 0: every message fits a slot (the writers' types are bounded and small), so
  // the subgroup has no RDMC group and reserves nothing. kLargeFromKnobs: the view's
  // knobs.rdmc_buffer_size (a group file that does not say). The layout sets it from the
  // writers' sample bounds (layout.hpp); see large_bytes().
  std::uint64_t large = kLargeFromKnobs;
  static constexpr std::uint64_t kLargeFromKnobs = ~std::uint64_t{0};
  friend bool operator==(const Subgroup&, const Subgroup&) = default;
};

// Engine knobs (DESIGN §9). A zero heartbeat interval disables heartbeats.
struct Knobs {
  std::chrono::microseconds idle_spin{1000};       // busy-poll this long before sleeping
  std::chrono::microseconds sleep_slice{100'000};  // longest single sleep on the transport
  std::chrono::milliseconds heartbeat_interval{100};
  std::chrono::milliseconds suspicion_timeout{1000};  // heartbeat silence before suspicion
  // RDMC, for messages larger than their subgroup's slot (engine.hpp, docs/dev/rdmc.md): the
  // block size, each sender's buffer space at every member of its subgroup (the largest
  // message), and the block schedule.
  std::uint32_t rdmc_block_size = 1u << 20;
  std::uint64_t rdmc_buffer_size = std::uint64_t{257} << 20;
  rdmc::Algorithm rdmc_algorithm = rdmc::Algorithm::binomial_pipeline;
  friend bool operator==(const Knobs&, const Knobs&) = default;
};

struct View {
  std::uint64_t epoch = 1;  // view number: SST regions and connections are per epoch
  // The domain's identity since it was founded, the same in every view that follows
  // (beacon.hpp: two domains of one id that meet tell each other apart by it): random for a
  // domain founded by a participant that joined nobody, a hash of the list for members
  // listed in a domain file. 0: none (the simulator, group files).
  std::uint64_t identity = 0;
  std::vector<Member> members;
  std::vector<Subgroup> subgroups;
  Knobs knobs;

  // Rank of a member = its index in `members`; nullopt if not a member.
  [[nodiscard]] std::optional<std::size_t> rank_of(NodeId id) const noexcept;
  // Whether members `a` and `b` run in one process (the same member, or the same pid on the
  // same host: two participants of one program). A member whose process is unknown (pid 0:
  // listed in a domain file, or simulated) shares it with nobody else.
  [[nodiscard]] bool same_process(NodeId a, NodeId b) const noexcept;
  // A secured domain's view: its members carry certificate subjects (docs/security.md).
  [[nodiscard]] bool secured() const noexcept {
    return std::any_of(members.begin(), members.end(),
                       [](const Member& m) { return !m.subject.empty(); });
  }
  friend bool operator==(const View&, const View&) = default;
};

// The RDMC buffer space of subgroup `sg` of `v` per sender (Subgroup::large): 0 for none.
[[nodiscard]] inline std::uint64_t large_bytes(const View& v, const Subgroup& sg) noexcept {
  if (sg.topic == 0) return 0;  // the builtin subgroup: records fit a slot
  return sg.large == Subgroup::kLargeFromKnobs ? v.knobs.rdmc_buffer_size
                                               : std::min(sg.large, v.knobs.rdmc_buffer_size);
}

class GroupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses YAML text; `source` names it in errors (a file name or "<string>").
[[nodiscard]] View parse_group(std::string_view yaml, std::string_view source);
[[nodiscard]] View load_group(const std::filesystem::path& file);
// Throws GroupError (naming `source`) when the description is inconsistent: duplicate
// ids, subgroup members that are not group members, senders outside the subgroup, limits.
void validate(const View& g, std::string_view source);
// Renders YAML that parse_group() reads back to an equal value.
[[nodiscard]] std::string to_yaml(const View& g);

// Limits checked by validate().
inline constexpr std::uint32_t kMaxWindow = 65536;
inline constexpr std::uint32_t kMaxPayload = 1u << 20;
inline constexpr std::size_t kMaxMembers = sst::kMaxMembers;  // member sets' width
inline constexpr std::uint32_t kMinRdmcBlock = 64;  // the domain file asks for 4096 or more
inline constexpr std::uint32_t kMaxRdmcBlock = 64u << 20;
inline constexpr std::uint64_t kMinRdmcBuffer = 64;  // the domain file: 1 MiB or more
inline constexpr std::uint64_t kMaxRdmcBuffer = std::uint64_t{64} << 30;

}  // namespace spindle::group

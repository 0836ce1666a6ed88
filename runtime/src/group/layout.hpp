// The subgroup layout of a view (DESIGN §7): which subgroups exist and which one carries a
// channel — one topic's stream of a given ordering. DCPS names channels, never subgroups.
//
// Today's layout (until per-topic subgroups land): every member is a potential sender of
// two domain-wide subgroups, "atomic" (atomic, volatile, logged) and "unordered";
// null-sends keep silent senders cheap, and a topic's messages are told apart by the topic
// id in DCPS's sample header. first_view() and subgroup_of() are the one place the
// per-topic layout replaces.
//
// Threading: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "group/view.hpp"

namespace spindle::group {

// One topic's stream: topic 0 is the builtin stream (discovery, liveliness, goodbyes).
struct Channel {
  std::uint64_t topic = 0;
  Ordering ordering = Ordering::atomic;
  friend bool operator==(const Channel&, const Channel&) = default;
};

// What sizes a view's rings: the domain file's engine settings.
struct LayoutSettings {
  std::uint32_t window_size = 100;
  std::uint32_t slot_size = 1024;     // bytes of a message after the DCPS sample header
  std::uint32_t header_size = 0;      // bytes of that header, added to every slot
  std::uint32_t min_slot_size = 512;  // a slot always holds a discovery record
  Knobs knobs;
};

// The first view of a domain whose members are known (epoch 1).
[[nodiscard]] View first_view(std::vector<Member> members, const LayoutSettings& s);
// The subgroup of `v` that carries `c`, if this layout has one.
[[nodiscard]] std::optional<std::uint32_t> subgroup_of(const View& v, Channel c) noexcept;

}  // namespace spindle::group

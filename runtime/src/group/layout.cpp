// Per-topic subgroups (see layout.hpp).
#include "group/layout.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace spindle::group {

namespace {

std::uint32_t with_header(std::uint32_t slot, const LayoutSettings& s) {
  return std::min<std::uint32_t>(kMaxPayload, slot + s.header_size);
}

Subgroup builtin(const std::vector<Member>& members, const LayoutSettings& s) {
  Subgroup sg;
  sg.name = "builtin";
  sg.topic = 0;
  for (const auto& m : members)
    sg.members.push_back(m.id);
  sg.senders = sg.members;
  sg.window_size = s.window_size;
  sg.max_payload = with_header(std::max(s.slot_size, s.min_slot_size), s);
  sg.ordering = Ordering::atomic;
  return sg;
}

}  // namespace

View first_view(std::vector<Member> members, const LayoutSettings& s) {
  View v;
  v.epoch = 1;
  v.subgroups.push_back(builtin(members, s));
  v.members = std::move(members);
  v.knobs = s.knobs;
  return v;
}

std::vector<Subgroup> layout(const std::vector<Member>& members,
                             const std::vector<ChannelDemand>& demand, const LayoutSettings& s) {
  std::vector<Subgroup> out{builtin(members, s)};
  const auto member = [&](NodeId id) {
    return std::any_of(members.begin(), members.end(), [&](const Member& m) { return m.id == id; });
  };
  // Readers of a topic belong to each of its channels' subgroups.
  std::map<std::uint64_t, std::set<NodeId>> readers;
  for (const auto& d : demand)
    for (auto id : d.readers)
      if (member(id)) readers[d.channel.topic].insert(id);
  // One entry per channel, in (topic, ordering) order, merging repeated demands.
  struct Merged {
    std::set<NodeId> writers;
    std::string name;
    std::uint32_t window = 0;
    std::uint32_t payload = 0;
  };
  std::map<std::pair<std::uint64_t, Ordering>, Merged> channels;
  for (const auto& d : demand) {
    auto& c = channels[std::pair{d.channel.topic, d.channel.ordering}];
    for (auto id : d.writers)
      if (member(id)) c.writers.insert(id);
    if (c.name.empty()) c.name = d.name;
    c.window = std::max(c.window, d.window_size);
    c.payload = std::max(c.payload, d.max_payload);
  }
  for (const auto& [key, c] : channels) {
    const auto& [topic, ordering] = key;
    if (topic == 0 || c.writers.empty()) continue;
    const auto r = readers.find(topic);
    if (r == readers.end()) continue;
    Subgroup sg;
    sg.name = c.name + "/" + std::string(to_string(ordering));
    sg.topic = topic;
    sg.ordering = ordering;
    // Members and senders in view rank order, so that every member lists them alike.
    for (const auto& m : members) {
      const bool writes = c.writers.contains(m.id);
      if (writes || r->second.contains(m.id)) sg.members.push_back(m.id);
      if (writes) sg.senders.push_back(m.id);
    }
    sg.window_size = std::clamp(std::max(c.window, s.window_size), 1u, kMaxWindow);
    sg.max_payload = with_header(std::max(c.payload, s.slot_size), s);
    out.push_back(std::move(sg));
  }
  return out;
}

std::optional<std::uint32_t> subgroup_of(const View& v, Channel c) noexcept {
  for (std::uint32_t i = 0; i < v.subgroups.size(); ++i) {
    const auto& sg = v.subgroups[i];
    // The builtin subgroup carries topic 0 of either ordering.
    if (sg.topic == c.topic && (c.topic == 0 || sg.ordering == c.ordering)) return i;
  }
  return std::nullopt;
}

namespace {
bool listed(const View& v, Channel c, NodeId node, std::vector<NodeId> Subgroup::*list) noexcept {
  const auto sg = subgroup_of(v, c);
  if (!sg) return false;
  const auto& ids = v.subgroups[*sg].*list;
  return std::find(ids.begin(), ids.end(), node) != ids.end();
}
}  // namespace

bool sends(const View& v, Channel c, NodeId node) noexcept {
  return listed(v, c, node, &Subgroup::senders);
}

bool receives(const View& v, Channel c, NodeId node) noexcept {
  return listed(v, c, node, &Subgroup::members);
}

}  // namespace spindle::group

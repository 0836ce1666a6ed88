// Per-topic subgroups (see layout.hpp).
#include "group/layout.hpp"

#include "security/permissions.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
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
  // What the permissions let member `id` do with a topic in these partitions (LayoutSettings).
  const auto may = [&](NodeId id, security::Action action, const std::string& topic,
                       const std::vector<std::string>& partitions) {
    if (!s.permissions) return true;
    const auto m =
        std::find_if(members.begin(), members.end(), [&](const Member& x) { return x.id == id; });
    return m != members.end() && !m->subject.empty() &&
           s.permissions->allows(m->subject, action, topic, partitions);
  };
  // Per topic: each reader's node, the partition sets it matches, and whether it is passive.
  struct Reading {
    NodeId node;
    std::set<std::uint64_t> partitions;
    bool passive;
    bool keeps_all;
    std::string topic;  // for permissions
  };
  std::map<std::uint64_t, std::vector<Reading>> readers;
  // One entry per writers' channel, in (topic, ordering, partition) order, merging repeats.
  struct Merged {
    std::set<NodeId> writers;
    std::string name;
    std::string topic;                    // for permissions
    std::vector<std::string> partitions;  // its writers' PARTITION names, for permissions
    std::uint32_t window = 0;
    std::uint32_t payload = 0;
    std::uint64_t sample = 0;  // the largest of the writers' sample bounds
    bool unbounded = false;    // a writer's type has none
    std::uint64_t room = 0;    // the largest sample its unbounded writers asked room for
    bool retained = false;
    bool keeps_all = false;                              // a RELIABLE KEEP_ALL writer writes here
    std::optional<std::chrono::milliseconds> lag_bound;  // the longest asked for; 0 longest
  };
  const auto longest = [](std::optional<std::chrono::milliseconds> a,
                          std::optional<std::chrono::milliseconds> b) {
    if (!a || !b) return a ? a : b;
    if (a->count() == 0 || b->count() == 0) return std::optional(std::chrono::milliseconds(0));
    return std::optional(std::max(*a, *b));
  };
  using Key = std::tuple<std::uint64_t, Ordering, std::uint64_t>;
  std::map<Key, Merged> channels;
  for (const auto& d : demand) {
    if (d.channel.topic == 0) continue;
    const std::string& topic = d.topic_name.empty() ? d.name : d.topic_name;
    for (auto id : d.readers)
      if (member(id))
        readers[d.channel.topic].push_back(
            Reading{id, std::set<std::uint64_t>(d.partitions.begin(), d.partitions.end()),
                    d.passive, d.keeps_all, topic});
    if (d.writers.empty()) continue;
    auto& c = channels[Key{d.channel.topic, d.channel.ordering, d.channel.partition}];
    for (auto id : d.writers)
      if (member(id) && may(id, security::Action::publish, topic, d.partition_names))
        c.writers.insert(id);
    if (c.name.empty()) {
      c.name = d.name;
      c.topic = topic;
      c.partitions = d.partition_names;
    }
    c.window = std::max(c.window, d.window_size);
    c.payload = std::max(c.payload, d.max_payload);
    c.sample = std::max(c.sample, d.max_sample);
    c.unbounded = c.unbounded || d.max_sample == 0;
    if (d.max_sample == 0) c.room = std::max(c.room, d.room);
    c.retained = c.retained || d.retained;
    c.keeps_all = c.keeps_all || d.keeps_all;
    c.lag_bound = longest(c.lag_bound, d.lag_bound);
  }
  // A retained channel: every member reads it (its own partition set only).
  for (const auto& [key, c] : channels) {
    if (!c.retained || c.writers.empty()) continue;
    for (const auto& m : members)
      readers[std::get<0>(key)].push_back(
          Reading{m.id, std::set<std::uint64_t>{std::get<2>(key)}, false, false, c.topic});
  }
  // Each topic and ordering: its partition sets with a live writer, grouped by the readers
  // that match several (union-find over their indices), one subgroup per group with a reader.
  for (auto first = channels.begin(); first != channels.end();) {
    const auto [topic, ordering, unused] = first->first;
    auto last = first;
    std::vector<std::pair<std::uint64_t, const Merged*>> sets;  // ascending partition keys
    for (; last != channels.end() && std::get<0>(last->first) == topic &&
           std::get<1>(last->first) == ordering;
         ++last)
      if (!last->second.writers.empty()) sets.emplace_back(std::get<2>(last->first), &last->second);
    first = last;
    const auto r = readers.find(topic);
    if (sets.empty() || r == readers.end()) continue;
    std::vector<std::size_t> parent(sets.size());
    for (std::size_t i = 0; i < sets.size(); ++i)
      parent[i] = i;
    const auto root = [&](std::size_t i) {
      while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
      return i;
    };
    const auto index = [&](std::uint64_t key) -> std::optional<std::size_t> {
      const auto it = std::lower_bound(sets.begin(), sets.end(), key,
                                       [](const auto& e, std::uint64_t k) { return e.first < k; });
      if (it == sets.end() || it->first != key) return std::nullopt;
      return static_cast<std::size_t>(it - sets.begin());
    };
    for (const auto& reading : r->second) {
      std::optional<std::size_t> joined;
      for (auto key : reading.partitions) {
        const auto i = index(key);
        if (!i) continue;
        if (joined) parent[root(*i)] = root(*joined);
        joined = i;
      }
    }
    // Groups in order of their smallest partition key (the first index of each root).
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < sets.size(); ++i)
      if (std::find_if(order.begin(), order.end(),
                       [&](std::size_t o) { return root(o) == root(i); }) == order.end())
        order.push_back(i);
    std::size_t made = 0;
    for (auto head : order) {
      Subgroup sg;
      std::set<NodeId> writers, readers_here, holders_here, keepers;
      std::uint32_t window = 0, payload = 0;
      std::uint64_t sample = 0, room = 0;
      bool unbounded = false, writer_keeps_all = false;
      std::optional<std::chrono::milliseconds> lag_bound;
      for (std::size_t i = 0; i < sets.size(); ++i) {
        if (root(i) != root(head)) continue;
        sg.partitions.push_back(sets[i].first);
        writers.insert(sets[i].second->writers.begin(), sets[i].second->writers.end());
        window = std::max(window, sets[i].second->window);
        payload = std::max(payload, sets[i].second->payload);
        sample = std::max(sample, sets[i].second->sample);
        unbounded = unbounded || sets[i].second->unbounded;
        room = std::max(room, sets[i].second->room);
        writer_keeps_all = writer_keeps_all || sets[i].second->keeps_all;
        lag_bound = longest(lag_bound, sets[i].second->lag_bound);
      }
      for (const auto& reader : r->second) {
        const auto& wants = reader.partitions;
        // A reader takes a set of this group only with a grant to subscribe to the topic in
        // that set's partitions.
        bool granted = false;
        for (std::size_t i = 0; i < sets.size() && !granted; ++i) {
          granted = root(i) == root(head) && wants.contains(sets[i].first) &&
                    may(reader.node, security::Action::subscribe, reader.topic,
                        sets[i].second->partitions);
        }
        if (granted) {
          readers_here.insert(reader.node);
          if (!reader.passive) holders_here.insert(reader.node);
          if (reader.keeps_all) keepers.insert(reader.node);
        }
      }
      if (readers_here.empty()) continue;  // nobody reads it: no subgroup
      sg.name = sets[head].second->name + "/" + std::string(to_string(ordering)) +
                (made > 0 ? "#" + std::to_string(made + 1) : "");
      ++made;
      sg.topic = topic;
      sg.ordering = ordering;
      // Members and senders in view rank order, so that every member lists them alike.
      for (const auto& m : members) {
        const bool writes = writers.contains(m.id);
        if (writes || readers_here.contains(m.id)) sg.members.push_back(m.id);
        if (writes) sg.senders.push_back(m.id);
        if (!writes && readers_here.contains(m.id) && !holders_here.contains(m.id))
          sg.listeners.push_back(m.id);
      }
      std::sort(sg.listeners.begin(), sg.listeners.end());
      // Lagging members (docs/dev/smc.md): a holder that does not write is left behind when it
      // lags, unless its readers keep all and a writer keeps all too (that writer may wait
      // for them up to its max_blocking_time, as in every DDS). In a retained subgroup, one
      // left behind that missed messages has its history sent again (docs/storage.md,
      // "Refresh").
      sg.lag_bound = lag_bound.value_or(s.lag_bound);
      if (sg.lag_bound.count() > 0) {
        for (auto id : holders_here)
          if (!writers.contains(id) && !(writer_keeps_all && keepers.contains(id)))
            sg.demotable.push_back(id);
      }
      if (sg.demotable.empty()) sg.lag_bound = std::chrono::milliseconds(0);
      sg.window_size = std::clamp(std::max(window, s.window_size), 1u, kMaxWindow);
      sg.max_payload = with_header(std::max(payload, s.slot_size), s);
      // RDMC space only where a sample can be larger than the slot: room for as many of the
      // largest (with its header, in whole lines) as a group has in flight. For an unbounded
      // type, the largest is what its writers asked for so far (at least kUnboundedRoom):
      // the space grows, a view at a time, as larger samples come.
      const std::uint64_t message =
          (unbounded ? std::max({sample, room, kUnboundedRoom}) : sample) + s.header_size;
      if (!unbounded && message <= sg.max_payload)
        sg.large = 0;
      else
        sg.large = std::min((message + 63) / 64 * 64 * kLargeInFlight, s.knobs.rdmc_buffer_size);
      out.push_back(std::move(sg));
    }
  }
  return out;
}

std::optional<std::uint32_t> subgroup_of(const View& v, Channel c) noexcept {
  for (std::uint32_t i = 0; i < v.subgroups.size(); ++i) {
    const auto& sg = v.subgroups[i];
    if (sg.topic != c.topic) continue;
    // The builtin subgroup carries topic 0 of either ordering; a subgroup that lists no
    // partition sets (a hand-written group file) carries all of its topic's.
    if (c.topic == 0) return i;
    if (sg.ordering == c.ordering &&
        (sg.partitions.empty() ||
         std::binary_search(sg.partitions.begin(), sg.partitions.end(), c.partition)))
      return i;
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

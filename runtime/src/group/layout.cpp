// Today's subgroup layout (see layout.hpp).
#include "group/layout.hpp"

#include <algorithm>
#include <utility>

namespace spindle::group {

View first_view(std::vector<Member> members, const LayoutSettings& s) {
  View v;
  v.epoch = 1;
  std::vector<NodeId> ids;
  for (const auto& m : members)
    ids.push_back(m.id);
  v.members = std::move(members);
  const std::uint32_t slot = std::max(s.slot_size, s.min_slot_size);
  const std::uint32_t payload = std::min<std::uint32_t>(kMaxPayload, slot + s.header_size);
  for (auto [name, ordering] :
       {std::pair{"atomic", Ordering::atomic}, std::pair{"unordered", Ordering::unordered}}) {
    Subgroup sg;
    sg.name = name;
    sg.members = ids;
    sg.senders = ids;
    sg.window_size = s.window_size;
    sg.max_payload = payload;
    sg.ordering = ordering;
    v.subgroups.push_back(std::move(sg));
  }
  v.knobs = s.knobs;
  return v;
}

std::optional<std::uint32_t> subgroup_of(const View& v, Channel c) noexcept {
  for (std::uint32_t i = 0; i < v.subgroups.size(); ++i)
    if (v.subgroups[i].ordering == c.ordering) return i;
  return std::nullopt;
}

}  // namespace spindle::group

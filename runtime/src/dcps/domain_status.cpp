// spindle::domain_status (<spindle/domain_status.hpp>): the group's own status (the view, the
// SST counters, the per-topic counts: group::Bus::status) with the topics named from
// discovery.
#include <spindle/domain_status.hpp>

#include <algorithm>
#include <map>

#include <dds/domain/DomainParticipant.hpp>

#include "dcps/entities.hpp"
#include "dcps/wire.hpp"

namespace spindle {

DomainStatus domain_status(const dds::domain::DomainParticipant& dp) {
  const auto& p = dynamic_cast<const dcps::Participant&>(dp.core());
  p.check_open();
  DomainStatus out;
  out.domain_id = p.domain_id();
  p.bus().status(out);
  out.taken = std::chrono::steady_clock::now();
  // Names: every topic discovery knows, counted here or not; counted ids discovery does not
  // name (a topic whose records went with its last endpoint) keep an empty name.
  std::map<std::uint64_t, TopicStatus> by_id;
  for (auto& t : out.topics)
    if (t.id != 0) by_id.emplace(t.id, std::move(t));
  for (const auto& d : p.discovered_topics()) {
    auto& t = by_id[dcps::topic_id(d.name)];
    t.id = dcps::topic_id(d.name);
    t.name = d.name;
    t.type_name = d.type_name;
  }
  for (auto& sg : out.subgroups)
    if (const auto it = by_id.find(sg.topic_id); it != by_id.end()) sg.topic = it->second.name;
  out.topics.clear();
  for (auto& [id, t] : by_id)
    out.topics.push_back(std::move(t));
  std::ranges::stable_sort(out.topics, {}, &TopicStatus::name);
  return out;
}

}  // namespace spindle

// What a participant knows of its domain, for tools (<spindle/inspect.hpp>).
#include <spindle/inspect.hpp>

#include <algorithm>
#include <string_view>

#include <dds/domain/DomainParticipant.hpp>
#include <spindle/policy/Consistency.hpp>

#include "core/yaml_schema.hpp"
#include "qos/checks.hpp"
#include "qos/schema.hpp"

namespace spindle::inspect {

namespace pol = dds::core::policy;

namespace {

// The values of `keys` (profile schema keys, "reliability.kind") in `q`, as a profile file
// writes them; several are joined as "key: value" pairs.
template <class Q>
std::string render(const Q& q, std::initializer_list<std::string_view> keys) {
  std::string out;
  for (const auto key : keys) {
    const auto& fields = qos::section_fields<Q>();
    const auto f = std::find_if(fields.begin(), fields.end(),
                                [&](const auto& field) { return field.key == key; });
    if (f == fields.end()) continue;  // not a policy of Q: nothing to say
    if (!out.empty()) out += ", ";
    if (keys.size() > 1) out += std::string(key.substr(key.find('.') + 1)) + ": ";
    out += core::render_value(*f, f->get(q));
  }
  return out;
}

std::string names(const dds::core::StringSeq& list) {
  if (list.empty()) return "[\"\"] (the default partition)";
  std::string out = "[";
  for (const auto& n : list)
    out += (out.size() > 1 ? ", \"" : "\"") + n + "\"";
  return out + "]";
}

template <class Q>
Fields all_fields(const Q& q) {
  Fields out;
  for (const auto& f : qos::section_fields<Q>())
    out.emplace_back(f.key, core::render_value(f, f.get(q)));
  return out;
}

}  // namespace

Fields fields(const dds::domain::qos::DomainParticipantQos& q) {
  return all_fields(q);
}
Fields fields(const dds::topic::qos::TopicQos& q) {
  return all_fields(q);
}
Fields fields(const dds::pub::qos::PublisherQos& q) {
  return all_fields(q);
}
Fields fields(const dds::sub::qos::SubscriberQos& q) {
  return all_fields(q);
}
Fields fields(const dds::pub::qos::DataWriterQos& q) {
  return all_fields(q);
}
Fields fields(const dds::sub::qos::DataReaderQos& q) {
  return all_fields(q);
}

Snapshot snapshot(const dds::domain::DomainParticipant& participant) {
  return participant.core().inspect();
}

Explanation explain(const Writer& w, const Reader& r) {
  Explanation out;
  out.checks.push_back({"type", w.type_name, r.type_name, w.type_name == r.type_name});
  const auto& wp = w.publisher_qos.policy<pol::Partition>();
  const auto& rp = r.subscriber_qos.policy<pol::Partition>();
  out.checks.push_back(
      {"partition", names(wp.name()), names(rp.name()), qos::partitions_match(wp, rp)});
  const auto broken = qos::incompatible_policies(w.publisher_qos, w.qos, r.subscriber_qos, r.qos);
  const auto rule = [&]<class P>(std::type_identity<P>, std::string name,
                                 std::initializer_list<std::string_view> keys) {
    const bool ok =
        std::find(broken.begin(), broken.end(), pol::policy_id<P>::value) == broken.end();
    out.checks.push_back({std::move(name), render(w.qos, keys), render(r.qos, keys), ok});
  };
  rule(std::type_identity<pol::Durability>{}, "durability", {"durability.kind"});
  rule(std::type_identity<pol::Deadline>{}, "deadline", {"deadline.period"});
  rule(std::type_identity<pol::LatencyBudget>{}, "latency_budget", {"latency_budget.duration"});
  rule(std::type_identity<pol::Ownership>{}, "ownership", {"ownership.kind"});
  rule(std::type_identity<pol::Liveliness>{}, "liveliness",
       {"liveliness.kind", "liveliness.lease_duration"});
  rule(std::type_identity<pol::Reliability>{}, "reliability", {"reliability.kind"});
  rule(std::type_identity<pol::DestinationOrder>{}, "destination_order",
       {"destination_order.kind"});
  {
    const std::initializer_list<std::string_view> keys{
        "presentation.access_scope", "presentation.coherent_access", "presentation.ordered_access"};
    const bool ok = std::find(broken.begin(), broken.end(),
                              pol::policy_id<pol::Presentation>::value) == broken.end();
    out.checks.push_back(
        {"presentation", render(w.publisher_qos, keys), render(r.subscriber_qos, keys), ok});
  }
  rule(std::type_identity<pol::DataRepresentation>{}, "data_representation",
       {"data_representation.value"});
  rule(std::type_identity<spindle::policy::Consistency>{}, "consistency", {"consistency.kind"});
  out.matched =
      std::all_of(out.checks.begin(), out.checks.end(), [](const Check& c) { return c.ok; });
  return out;
}

}  // namespace spindle::inspect

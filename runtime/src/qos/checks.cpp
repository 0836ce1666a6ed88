// QoS consistency, request/offered compatibility, partition matching, changeability.
#include "qos/checks.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <tuple>
#include <type_traits>

#include <dds/core/Exception.hpp>

#include "core/yaml_reader.hpp"

namespace spindle::qos {

namespace {

namespace pol = dds::core::policy;
namespace sp = spindle::policy;
using dds::core::Duration;

std::string text(const Duration& d) {
  return core::format_duration(d);
}
std::string text(std::int64_t n) {
  return n == dds::core::LENGTH_UNLIMITED ? "LENGTH_UNLIMITED" : std::to_string(n);
}

// Collects the first contradiction; later checks are skipped once one is found.
class Finder {
 public:
  void report(std::vector<std::string> keys, std::string message) {
    if (!found_) found_ = Inconsistency{std::move(keys), std::move(message)};
  }
  [[nodiscard]] std::optional<Inconsistency> result() && { return std::move(found_); }

 private:
  std::optional<Inconsistency> found_;
};

// A set of limits as ResourceLimits and DurabilityService both carry them.
struct Limits {
  std::string_view policy;  // "ResourceLimits"
  std::string_view key;     // "resource_limits"
  std::int32_t max_samples;
  std::int32_t max_instances;
  std::int32_t max_samples_per_instance;
};

std::string name(const Limits& l, std::string_view field) {
  return std::string(l.policy) + "." + std::string(field);
}
std::string key(std::string_view section, std::string_view field) {
  return std::string(section) + "." + std::string(field);
}

void check_limits(Finder& f, const Limits& l) {
  const std::pair<std::string_view, std::int32_t> values[] = {
      {"max_samples", l.max_samples},
      {"max_instances", l.max_instances},
      {"max_samples_per_instance", l.max_samples_per_instance}};
  for (const auto& [field, v] : values) {
    if (v <= 0 && v != dds::core::LENGTH_UNLIMITED)
      f.report({key(l.key, field)},
               name(l, field) + " must be > 0 or LENGTH_UNLIMITED, got " + std::to_string(v));
  }
  if (l.max_samples > 0 && l.max_samples_per_instance > 0 &&
      l.max_samples < l.max_samples_per_instance)
    f.report({key(l.key, "max_samples"), key(l.key, "max_samples_per_instance")},
             name(l, "max_samples") + " (" + text(l.max_samples) + ") < " +
                 name(l, "max_samples_per_instance") + " (" + text(l.max_samples_per_instance) +
                 ")");
}

// KEEP_LAST depth: at least 1 and within the per-instance limit.
void check_depth(Finder& f, std::string_view depth_name, std::string_view depth_key,
                 pol::HistoryKind kind, std::int32_t depth, const Limits& l) {
  if (kind != pol::HistoryKind::KEEP_LAST) return;
  if (depth < 1)
    f.report(
        {std::string(depth_key)},
        std::string(depth_name) + " must be >= 1 with KEEP_LAST, got " + std::to_string(depth));
  if (l.max_samples_per_instance > 0 && depth > l.max_samples_per_instance)
    f.report({std::string(depth_key), key(l.key, "max_samples_per_instance")},
             std::string(depth_name) + " (" + std::to_string(depth) + ") > " +
                 name(l, "max_samples_per_instance") + " (" + text(l.max_samples_per_instance) +
                 ")");
}

template <class Q>
std::optional<Inconsistency> check(const Q& q) {
  Finder f;
  if constexpr (Q::template holds<pol::ResourceLimits>) {
    const auto& rl = q.template policy<pol::ResourceLimits>();
    const Limits limits{"ResourceLimits", "resource_limits", rl.max_samples(), rl.max_instances(),
                        rl.max_samples_per_instance()};
    check_limits(f, limits);
    const auto& h = q.template policy<pol::History>();
    check_depth(f, "History.depth", "history.depth", h.kind(), h.depth(), limits);
    const auto& c = q.template policy<sp::Consistency>();
    if (h.kind() == pol::HistoryKind::KEEP_ALL && c.kind() == sp::ConsistencyKind::VOLATILE &&
        rl.max_samples_per_instance() == dds::core::LENGTH_UNLIMITED)
      f.report({"history.kind", "consistency.kind", "resource_limits.max_samples_per_instance"},
               "History KEEP_ALL with Consistency VOLATILE needs a finite "
               "ResourceLimits.max_samples_per_instance (the retained history is kept in "
               "memory)");
  }
  if constexpr (Q::template holds<pol::DurabilityService>) {
    const auto& ds = q.template policy<pol::DurabilityService>();
    const Limits limits{"DurabilityService", "durability_service", ds.max_samples(),
                        ds.max_instances(), ds.max_samples_per_instance()};
    check_limits(f, limits);
    check_depth(f, "DurabilityService.history_depth", "durability_service.history_depth",
                ds.history_kind(), ds.history_depth(), limits);
  }
  if constexpr (Q::template holds<pol::Deadline>) {
    const auto& period = q.template policy<pol::Deadline>().period();
    if (period == Duration::zero())
      f.report({"deadline.period"}, "Deadline.period must be > 0 (use infinite for no deadline)");
    if constexpr (Q::template holds<pol::TimeBasedFilter>) {
      const auto& sep = q.template policy<pol::TimeBasedFilter>().minimum_separation();
      if (period < sep)
        f.report({"deadline.period", "time_based_filter.minimum_separation"},
                 "Deadline.period (" + text(period) + ") < TimeBasedFilter.minimum_separation (" +
                     text(sep) + ")");
    }
  }
  if constexpr (Q::template holds<pol::Liveliness>) {
    if (q.template policy<pol::Liveliness>().lease_duration() == Duration::zero())
      f.report({"liveliness.lease_duration"},
               "Liveliness.lease_duration must be > 0 (use infinite for no lease)");
  }
  if constexpr (Q::template holds<sp::Consistency>) {
    const auto& c = q.template policy<sp::Consistency>();
    const auto& period = c.fsync_period();
    if (c.kind() == sp::ConsistencyKind::LOGGED && c.fsync() == sp::FsyncKind::PERIODIC &&
        (period == Duration::zero() || period.is_infinite()))
      f.report({"consistency.fsync_period", "consistency.fsync"},
               "Consistency.fsync_period must be finite and > 0 with fsync PERIODIC, got " +
                   text(period));
  }
  if constexpr (Q::template holds<sp::Engine>) {
    const auto& e = q.template policy<sp::Engine>();
    auto range = [&](std::string_view field, std::uint32_t v, std::uint32_t lo, std::uint32_t hi) {
      if (v < lo || v > hi)
        f.report({key("engine", field)}, "Engine." + std::string(field) + " must be in " +
                                             std::to_string(lo) + ".." + std::to_string(hi) +
                                             ", got " + std::to_string(v));
    };
    range("window_size", e.window_size(), 1, sp::Engine::kMaxWindowSize);
    range("max_payload", e.max_payload(), 1, sp::Engine::kMaxPayload);
    range("rdmc_block_size", e.rdmc_block_size(), sp::Engine::kMinRdmcBlockSize,
          sp::Engine::kMaxRdmcBlockSize);
    const auto ring = std::uint64_t{e.window_size()} * e.max_payload();
    if (ring > sp::Engine::kMaxRingBytes)
      f.report({"engine.window_size", "engine.max_payload"},
               "Engine.window_size (" + std::to_string(e.window_size()) +
                   ") x Engine.max_payload (" + std::to_string(e.max_payload()) + ") = " +
                   std::to_string(ring) + " bytes per sender ring, more than the limit of " +
                   std::to_string(sp::Engine::kMaxRingBytes));
  }
  return std::move(f).result();
}

}  // namespace

std::optional<Inconsistency> find_inconsistency(const dds::domain::qos::DomainParticipantQos& q) {
  return check(q);
}
std::optional<Inconsistency> find_inconsistency(const dds::topic::qos::TopicQos& q) {
  return check(q);
}
std::optional<Inconsistency> find_inconsistency(const dds::pub::qos::PublisherQos& q) {
  return check(q);
}
std::optional<Inconsistency> find_inconsistency(const dds::sub::qos::SubscriberQos& q) {
  return check(q);
}
std::optional<Inconsistency> find_inconsistency(const dds::pub::qos::DataWriterQos& q) {
  return check(q);
}
std::optional<Inconsistency> find_inconsistency(const dds::sub::qos::DataReaderQos& q) {
  return check(q);
}

void throw_inconsistent(const Inconsistency& bad) {
  throw dds::core::InconsistentPolicyError(bad.message);
}

std::vector<pol::QosPolicyId> incompatible_policies(const dds::pub::qos::DataWriterQos& o,
                                                    const dds::sub::qos::DataReaderQos& r) {
  std::vector<pol::QosPolicyId> out;
  auto rule = [&]<class P>(std::type_identity<P>, bool broken) {
    if (broken) out.push_back(pol::policy_id<P>::value);
  };
  const auto& ol = o.policy<pol::Liveliness>();
  const auto& rl = r.policy<pol::Liveliness>();
  rule(std::type_identity<pol::Durability>{},
       o.policy<pol::Durability>().kind() < r.policy<pol::Durability>().kind());
  rule(std::type_identity<pol::Deadline>{},
       o.policy<pol::Deadline>().period() > r.policy<pol::Deadline>().period());
  rule(std::type_identity<pol::LatencyBudget>{},
       o.policy<pol::LatencyBudget>().duration() > r.policy<pol::LatencyBudget>().duration());
  rule(std::type_identity<pol::Ownership>{},
       o.policy<pol::Ownership>().kind() != r.policy<pol::Ownership>().kind());
  rule(std::type_identity<pol::Liveliness>{},
       ol.kind() < rl.kind() || ol.lease_duration() > rl.lease_duration());
  rule(std::type_identity<pol::Reliability>{},
       o.policy<pol::Reliability>().kind() < r.policy<pol::Reliability>().kind());
  rule(std::type_identity<pol::DestinationOrder>{},
       o.policy<pol::DestinationOrder>().kind() < r.policy<pol::DestinationOrder>().kind());
  rule(std::type_identity<sp::Consistency>{},
       o.policy<sp::Consistency>().kind() < r.policy<sp::Consistency>().kind());
  // The writer's encoding (its first; XCDR1 when empty) must be one the reader takes (XCDR1
  // when empty): DDS-XTypes 1.3, 7.6.3.1.2. Entities resolve an empty list from their type
  // before announcing it (docs/cdr.md, "Which encoding").
  const auto& ow = o.policy<pol::DataRepresentation>().value();
  const auto& rr = r.policy<pol::DataRepresentation>().value();
  const auto offered = ow.empty() ? pol::DataRepresentationId::XCDR1 : ow.front();
  rule(std::type_identity<pol::DataRepresentation>{},
       rr.empty() ? offered != pol::DataRepresentationId::XCDR1
                  : std::find(rr.begin(), rr.end(), offered) == rr.end());
  return out;
}

std::vector<pol::QosPolicyId> incompatible_policies(const dds::pub::qos::PublisherQos& pub,
                                                    const dds::pub::qos::DataWriterQos& offered,
                                                    const dds::sub::qos::SubscriberQos& sub,
                                                    const dds::sub::qos::DataReaderQos& requested) {
  auto out = incompatible_policies(offered, requested);
  const auto& o = pub.policy<pol::Presentation>();
  const auto& r = sub.policy<pol::Presentation>();
  if (o.access_scope() < r.access_scope() || (r.coherent_access() && !o.coherent_access()) ||
      (r.ordered_access() && !o.ordered_access())) {
    out.push_back(pol::policy_id<pol::Presentation>::value);
    std::sort(out.begin(), out.end());
  }
  return out;
}

namespace {

bool has_wildcard(std::string_view name) noexcept {
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '\\') {
      ++i;  // an escaped character is literal
    } else if (name[i] == '*' || name[i] == '?' || name[i] == '[') {
      return true;
    }
  }
  return false;
}

}  // namespace

bool partition_names_match(std::string_view a, std::string_view b) noexcept {
  const bool wild_a = has_wildcard(a);
  const bool wild_b = has_wildcard(b);
  if (wild_a && wild_b) return false;
  if (!wild_a && !wild_b) return a == b;
  // fnmatch needs NUL-terminated strings; names with an embedded NUL cannot match a pattern.
  const std::string pattern(wild_a ? a : b);
  const std::string name(wild_a ? b : a);
  if (pattern.find('\0') != std::string::npos || name.find('\0') != std::string::npos) return false;
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

bool partitions_match(const pol::Partition& publisher, const pol::Partition& subscriber) {
  static const dds::core::StringSeq kDefault{""};
  const auto& pubs = publisher.name().empty() ? kDefault : publisher.name();
  const auto& subs = subscriber.name().empty() ? kDefault : subscriber.name();
  for (const auto& p : pubs)
    for (const auto& s : subs)
      if (partition_names_match(p, s)) return true;
  return false;
}

sp::ConsistencyKind effective_consistency(const pol::Durability& durability,
                                          const sp::Consistency& consistency) noexcept {
  sp::ConsistencyKind implied = sp::ConsistencyKind::UNORDERED;
  switch (durability.kind().underlying()) {
    case pol::DurabilityKind::VOLATILE:
      break;
    case pol::DurabilityKind::TRANSIENT_LOCAL:
      implied = sp::ConsistencyKind::VOLATILE;
      break;
    case pol::DurabilityKind::TRANSIENT:
    case pol::DurabilityKind::PERSISTENT:
      implied = sp::ConsistencyKind::LOGGED;
      break;
  }
  return std::max(implied, consistency.kind());
}

namespace {

template <class P>
inline constexpr bool kChangeable =
    std::is_same_v<P, pol::Deadline> || std::is_same_v<P, pol::LatencyBudget> ||
    std::is_same_v<P, pol::TransportPriority> || std::is_same_v<P, pol::Lifespan> ||
    std::is_same_v<P, pol::UserData> || std::is_same_v<P, pol::TopicData> ||
    std::is_same_v<P, pol::GroupData> || std::is_same_v<P, pol::Partition> ||
    std::is_same_v<P, pol::OwnershipStrength> || std::is_same_v<P, pol::EntityFactory> ||
    std::is_same_v<P, pol::WriterDataLifecycle> || std::is_same_v<P, pol::ReaderDataLifecycle> ||
    std::is_same_v<P, pol::TimeBasedFilter>;

struct Change {
  pol::QosPolicyId id;
  std::string name;
};

template <class Q, class... P>
std::optional<Change> first_immutable_change(const Q& a, const Q& b, std::tuple<P...>*) {
  std::optional<Change> out;
  auto one = [&]<class T>(std::type_identity<T>) {
    if constexpr (!kChangeable<T>) {
      if (!out && !(a.template policy<T>() == b.template policy<T>()))
        out = Change{pol::policy_id<T>::value, pol::policy_name<T>::name()};
    }
  };
  (one(std::type_identity<P>{}), ...);
  return out;
}

template <class Q>
std::optional<Change> first_change(const Q& a, const Q& b) {
  return first_immutable_change(a, b, static_cast<typename Q::policy_types*>(nullptr));
}

}  // namespace

template <class Q>
std::optional<pol::QosPolicyId> immutable_change(const Q& current, const Q& next) {
  if (auto c = first_change(current, next)) return c->id;
  return std::nullopt;
}

template <class Q>
void check_changeable(const Q& current, const Q& next) {
  if (auto c = first_change(current, next))
    throw dds::core::ImmutablePolicyError(c->name + " cannot change once the entity is enabled");
}

#define SPINDLE_QOS_INSTANTIATE(Q)                                                  \
  template std::optional<pol::QosPolicyId> immutable_change<Q>(const Q&, const Q&); \
  template void check_changeable<Q>(const Q&, const Q&)

SPINDLE_QOS_INSTANTIATE(dds::domain::qos::DomainParticipantQos);
SPINDLE_QOS_INSTANTIATE(dds::topic::qos::TopicQos);
SPINDLE_QOS_INSTANTIATE(dds::pub::qos::PublisherQos);
SPINDLE_QOS_INSTANTIATE(dds::sub::qos::SubscriberQos);
SPINDLE_QOS_INSTANTIATE(dds::pub::qos::DataWriterQos);
SPINDLE_QOS_INSTANTIATE(dds::sub::qos::DataReaderQos);

#undef SPINDLE_QOS_INSTANTIATE

}  // namespace spindle::qos

// The QoS profile schema: one field table per policy (see schema.hpp).
#include "qos/schema.hpp"

#include <tuple>
#include <utility>

namespace spindle::qos {

namespace {

namespace pol = dds::core::policy;
namespace sp = spindle::policy;
using core::Field;
using core::Value;
using core::ValueType;
using dds::core::Duration;

template <class P>
struct PolicyDef {
  std::string_view name;  // the YAML key
  std::string_view doc;
  std::vector<Field<P>> fields;
};

template <class P>
Field<P> duration(std::string key, std::string_view doc, const Duration& (P::*get)() const,
                  P& (P::*set)(const Duration&)) {
  auto f = core::make_field<P>(std::move(key), ValueType::duration, 0, core::kNoUpperBound, doc);
  f.get = [get](const P& p) -> Value { return (p.*get)(); };
  f.set = [set](P& p, const Value& v) { (p.*set)(std::get<Duration>(v)); };
  return f;
}

template <class P, class Int>
Field<P> number(std::string key, ValueType type, std::int64_t lo, std::int64_t hi,
                std::string_view doc, Int (P::*get)() const, P& (P::*set)(Int)) {
  auto f = core::make_field<P>(std::move(key), type, lo, hi, doc);
  f.get = [get](const P& p) -> Value { return static_cast<std::int64_t>((p.*get)()); };
  f.set = [set](P& p, const Value& v) { (p.*set)(static_cast<Int>(std::get<std::int64_t>(v))); };
  return f;
}

template <class P>
Field<P> count(std::string key, std::string_view doc, std::int32_t (P::*get)() const,
               P& (P::*set)(std::int32_t)) {
  return number<P, std::int32_t>(std::move(key), ValueType::count, 1, INT32_MAX, doc, get, set);
}

template <class P>
Field<P> flag(std::string key, std::string_view doc, bool (P::*get)() const, P& (P::*set)(bool)) {
  auto f = core::make_field<P>(std::move(key), ValueType::boolean, 0, 0, doc);
  f.get = [get](const P& p) -> Value { return (p.*get)(); };
  f.set = [set](P& p, const Value& v) { (p.*set)(std::get<bool>(v)); };
  return f;
}

// `choices` are the enumeration's values in declaration order.
template <class P, class Kind>
Field<P> kind(std::string key, std::string_view doc, std::vector<std::string_view> choices,
              Kind (P::*get)() const, P& (P::*set)(typename Kind::type)) {
  auto f = core::make_field<P>(std::move(key), ValueType::choice, 0, 0, doc);
  f.choices = std::move(choices);
  f.get = [get](const P& p) -> Value { return static_cast<std::int64_t>((p.*get)().underlying()); };
  f.set = [set](P& p, const Value& v) {
    (p.*set)(static_cast<typename Kind::type>(std::get<std::int64_t>(v)));
  };
  return f;
}

template <class P>
Field<P> bytes(std::string_view doc) {
  auto f = core::make_field<P>("value", ValueType::text, 0, 0, doc);
  f.get = [](const P& p) -> Value { return std::string(p.begin(), p.end()); };
  f.set = [](P& p, const Value& v) {
    const auto& s = std::get<std::string>(v);
    p.value(s.begin(), s.end());
  };
  return f;
}

template <class P>
PolicyDef<P> define();

constexpr std::string_view kBytesDoc =
    "Opaque application data, as text (UTF-8 bytes); visible to matched entities.";

template <>
PolicyDef<pol::UserData> define() {
  return {"user_data",
          "Bytes attached to a participant, writer or reader.",
          {bytes<pol::UserData>(kBytesDoc)}};
}
template <>
PolicyDef<pol::TopicData> define() {
  return {"topic_data", "Bytes attached to a topic.", {bytes<pol::TopicData>(kBytesDoc)}};
}
template <>
PolicyDef<pol::GroupData> define() {
  return {"group_data",
          "Bytes attached to a publisher or subscriber.",
          {bytes<pol::GroupData>(kBytesDoc)}};
}
template <>
PolicyDef<pol::EntityFactory> define() {
  using P = pol::EntityFactory;
  return {"entity_factory",
          "Whether entities created by this one are enabled at creation.",
          {flag<P>("autoenable_created_entities",
                   "false: the application calls enable() on each child itself.",
                   &P::autoenable_created_entities, &P::autoenable_created_entities)}};
}
template <>
PolicyDef<pol::TransportPriority> define() {
  using P = pol::TransportPriority;
  return {"transport_priority",
          "Importance of a writer's data to the transport.",
          {number<P, std::int32_t>("value", ValueType::integer, INT32_MIN, INT32_MAX,
                                   "Higher is more important.", &P::value, &P::value)}};
}
template <>
PolicyDef<pol::Lifespan> define() {
  using P = pol::Lifespan;
  return {"lifespan",
          "How long a written sample stays valid.",
          {duration<P>("duration", "Older samples are dropped from histories.", &P::duration,
                       &P::duration)}};
}
template <>
PolicyDef<pol::Durability> define() {
  using P = pol::Durability;
  return {"durability",
          "Whether samples outlive their delivery (request/offered).",
          {kind<P, pol::DurabilityKind>(
              "kind",
              "volatile: no; transient_local: kept for late joiners while the writer lives; "
              "transient, persistent: kept by the service / on disk.",
              {"volatile", "transient_local", "transient", "persistent"}, &P::kind, &P::kind)}};
}
template <>
PolicyDef<pol::DurabilityService> define() {
  using P = pol::DurabilityService;
  return {"durability_service",
          "The history kept for transient and persistent durability.",
          {duration<P>("service_cleanup_delay",
                       "How long the service keeps an instance after it is disposed and has no "
                       "writer.",
                       &P::service_cleanup_delay, &P::service_cleanup_delay),
           kind<P, pol::HistoryKind>("history_kind", "As history.kind, for the kept samples.",
                                     {"keep_last", "keep_all"}, &P::history_kind, &P::history_kind),
           number<P, std::int32_t>("history_depth", ValueType::integer, 1, INT32_MAX,
                                   "As history.depth, for the kept samples.", &P::history_depth,
                                   &P::history_depth),
           count<P>("max_samples", "Samples kept in all.", &P::max_samples, &P::max_samples),
           count<P>("max_instances", "Instances kept.", &P::max_instances, &P::max_instances),
           count<P>("max_samples_per_instance", "Samples kept per instance.",
                    &P::max_samples_per_instance, &P::max_samples_per_instance)}};
}
template <>
PolicyDef<pol::Presentation> define() {
  using P = pol::Presentation;
  return {"presentation",
          "Scope of ordered and coherent presentation (request/offered).",
          {kind<P, pol::PresentationAccessScopeKind>(
               "access_scope", "The scope over which order and coherent sets are kept.",
               {"instance", "topic", "group"}, &P::access_scope, &P::access_scope),
           flag<P>("coherent_access", "Changes made in a coherent set are delivered together.",
                   &P::coherent_access, &P::coherent_access),
           flag<P>("ordered_access", "Changes are delivered in the order they were made.",
                   &P::ordered_access, &P::ordered_access)}};
}
template <>
PolicyDef<pol::Deadline> define() {
  using P = pol::Deadline;
  return {"deadline",
          "Longest gap between two samples of an instance (request/offered).",
          {duration<P>("period", "The writer promises, the reader expects, a sample this often.",
                       &P::period, &P::period)}};
}
template <>
PolicyDef<pol::LatencyBudget> define() {
  using P = pol::LatencyBudget;
  return {"latency_budget",
          "Acceptable delay from write to delivery (request/offered).",
          {duration<P>("duration", "A hint; Spindle never delays to batch.", &P::duration,
                       &P::duration)}};
}
template <>
PolicyDef<pol::Ownership> define() {
  using P = pol::Ownership;
  return {
      "ownership",
      "Whether several writers may update one instance (must be equal on both sides).",
      {kind<P, pol::OwnershipKind>("kind", "shared: all writers; exclusive: the strongest only.",
                                   {"shared", "exclusive"}, &P::kind, &P::kind)}};
}
template <>
PolicyDef<pol::OwnershipStrength> define() {
  using P = pol::OwnershipStrength;
  return {"ownership_strength",
          "A writer's strength under exclusive ownership.",
          {number<P, std::int32_t>("value", ValueType::integer, INT32_MIN, INT32_MAX,
                                   "The strongest live writer owns the instance.", &P::value,
                                   &P::value)}};
}
template <>
PolicyDef<pol::Liveliness> define() {
  using P = pol::Liveliness;
  return {"liveliness",
          "How a writer shows it is alive (request/offered).",
          {kind<P, pol::LivelinessKind>(
               "kind",
               "automatic: while its process runs; manual_by_participant / manual_by_topic: the "
               "application asserts it.",
               {"automatic", "manual_by_participant", "manual_by_topic"}, &P::kind, &P::kind),
           duration<P>("lease_duration", "Silence longer than this means the writer is not alive.",
                       &P::lease_duration, &P::lease_duration)}};
}
template <>
PolicyDef<pol::TimeBasedFilter> define() {
  using P = pol::TimeBasedFilter;
  return {"time_based_filter",
          "Shortest interval between two samples of an instance a reader wants.",
          {duration<P>("minimum_separation", "Samples closer than this are filtered out.",
                       &P::minimum_separation, &P::minimum_separation)}};
}
template <>
PolicyDef<pol::Partition> define() {
  using P = pol::Partition;
  auto f = core::make_field<P>(
      "names", ValueType::text_list, 0, 0,
      "Partition names; fnmatch wildcards (*, ?, [..]) allowed; [] is the default "
      "partition \"\".");
  f.get = [](const P& p) -> Value { return p.name(); };
  f.set = [](P& p, const Value& v) { p.name(std::get<std::vector<std::string>>(v)); };
  return {"partition", "The logical partitions of a publisher or subscriber.", {f}};
}
template <>
PolicyDef<pol::Reliability> define() {
  using P = pol::Reliability;
  return {"reliability",
          "Whether every sample must arrive (request/offered).",
          {kind<P, pol::ReliabilityKind>("kind", "best_effort or reliable.",
                                         {"best_effort", "reliable"}, &P::kind, &P::kind),
           duration<P>("max_blocking_time",
                       "How long write() may block while the writer's ring is full.",
                       &P::max_blocking_time, &P::max_blocking_time)}};
}
template <>
PolicyDef<pol::DestinationOrder> define() {
  using P = pol::DestinationOrder;
  return {"destination_order",
          "Which timestamp orders an instance's samples from several writers "
          "(request/offered).",
          {kind<P, pol::DestinationOrderKind>(
              "kind", "by_reception_timestamp or by_source_timestamp.",
              {"by_reception_timestamp", "by_source_timestamp"}, &P::kind, &P::kind)}};
}
template <>
PolicyDef<pol::History> define() {
  using P = pol::History;
  return {
      "history",
      "How many samples per instance are kept.",
      {kind<P, pol::HistoryKind>("kind",
                                 "keep_last: the last depth; keep_all: all, up to "
                                 "resource_limits.",
                                 {"keep_last", "keep_all"}, &P::kind, &P::kind),
       number<P, std::int32_t>("depth", ValueType::integer, 1, INT32_MAX,
                               "Samples kept per instance with keep_last.", &P::depth, &P::depth)}};
}
template <>
PolicyDef<pol::ResourceLimits> define() {
  using P = pol::ResourceLimits;
  return {"resource_limits",
          "Upper bounds on a history cache.",
          {count<P>("max_samples", "Samples in all.", &P::max_samples, &P::max_samples),
           count<P>("max_instances", "Instances.", &P::max_instances, &P::max_instances),
           count<P>("max_samples_per_instance", "Samples per instance.",
                    &P::max_samples_per_instance, &P::max_samples_per_instance)}};
}
template <>
PolicyDef<pol::WriterDataLifecycle> define() {
  using P = pol::WriterDataLifecycle;
  return {
      "writer_data_lifecycle",
      "What unregistering an instance does.",
      {flag<P>("autodispose_unregistered_instances", "true: unregister also disposes.",
               &P::autodispose_unregistered_instances, &P::autodispose_unregistered_instances)}};
}
template <>
PolicyDef<pol::ReaderDataLifecycle> define() {
  using P = pol::ReaderDataLifecycle;
  return {
      "reader_data_lifecycle",
      "When a reader purges instances without writers or disposed.",
      {duration<P>("autopurge_nowriter_samples_delay",
                   "Purge an instance this long after its last writer went away.",
                   &P::autopurge_nowriter_samples_delay, &P::autopurge_nowriter_samples_delay),
       duration<P>("autopurge_disposed_samples_delay",
                   "Purge a disposed instance's samples after this long.",
                   &P::autopurge_disposed_samples_delay, &P::autopurge_disposed_samples_delay)}};
}
template <>
PolicyDef<sp::Consistency> define() {
  using P = sp::Consistency;
  return {"consistency",
          "Spindle: the consistency level of the data path (request/offered: offered >= "
          "requested in the order unordered < atomic < volatile < logged).",
          {kind<P, sp::ConsistencyKind>(
               "kind",
               "unordered: per-sender FIFO on receipt; atomic: one total order, delivered when "
               "stable; volatile: atomic + kept in memory for late joiners; logged: atomic + "
               "durable log, replayed on restart (docs/storage.md).",
               {"unordered", "atomic", "volatile", "logged"}, &P::kind, &P::kind),
           kind<P, sp::FsyncKind>("fsync",
                                  "logged only: every_sample (sync before each delivery), "
                                  "periodic (every fsync_period), never (the OS decides).",
                                  {"every_sample", "periodic", "never"}, &P::fsync, &P::fsync),
           duration<P>("fsync_period",
                       "logged with periodic fsync: the longest time between two syncs.",
                       &P::fsync_period, &P::fsync_period)}};
}
template <>
PolicyDef<sp::Engine> define() {
  using P = sp::Engine;
  return {
      "engine",
      "Spindle: multicast engine knobs of the topic's subgroup (a writer's values size its "
      "own ring).",
      {number<P, std::uint32_t>("window_size", ValueType::integer, 1, P::kMaxWindowSize,
                                "SMC ring slots per sender: samples in flight before "
                                "write() blocks.",
                                &P::window_size, &P::window_size),
       number<P, std::uint32_t>("max_payload", ValueType::integer, 1, P::kMaxPayload,
                                "Bytes of serialized sample per slot; larger samples go by "
                                "RDMC.",
                                &P::max_payload, &P::max_payload),
       number<P, std::uint32_t>("rdmc_block_size", ValueType::integer, P::kMinRdmcBlockSize,
                                P::kMaxRdmcBlockSize, "Bytes per RDMC block for large samples.",
                                &P::rdmc_block_size, &P::rdmc_block_size),
       kind<P, sp::RdmcAlgorithm>("rdmc_algorithm", "How RDMC spreads blocks over the subgroup.",
                                  {"sequential", "chain", "binomial_tree", "binomial_pipeline"},
                                  &P::rdmc_algorithm, &P::rdmc_algorithm),
       duration<P>("lag_bound",
                   "How long a reader's process may stop taking samples before "
                   "the others go on without it (it catches up, counting SAMPLE_LOST); 0 or "
                   "infinite: never.",
                   &P::lag_bound, &P::lag_bound)}};
}

template <>
PolicyDef<pol::DataRepresentation> define() {
  using P = pol::DataRepresentation;
  auto f = core::make_field<P>(
      "value", ValueType::text_list, 0, 0,
      "Encodings: a writer writes the first, a reader takes those listed and matches a "
      "writer whose first it lists. [] (the default): the type's choice (docs/cdr.md, "
      "\"Which encoding\").");
  f.choices = {"XCDR1", "XML", "XCDR2"};
  f.get = [](const P& p) -> Value {
    std::vector<std::string> names;
    for (const auto id : p.value())
      names.emplace_back(id == pol::DataRepresentationId::XCDR1 ? "XCDR1"
                         : id == pol::DataRepresentationId::XML ? "XML"
                                                                : "XCDR2");
    return names;
  };
  f.set = [](P& p, const Value& v) {
    pol::DataRepresentationIdSeq ids;
    for (const auto& n : std::get<std::vector<std::string>>(v))
      ids.push_back(n == "XCDR1" ? pol::DataRepresentationId::XCDR1
                    : n == "XML" ? pol::DataRepresentationId::XML
                                 : pol::DataRepresentationId::XCDR2);
    p.value(ids);
  };
  return {"data_representation", "The sample encodings (DDS-XTypes 1.3).", {f}};
}

template <class Q, class P>
void append_policy(std::vector<Field<Q>>& out) {
  const auto def = define<P>();
  for (const auto& f : def.fields)
    out.push_back(core::lift<Q>(
        f, std::string(def.name), [](auto& q) -> auto& { return q.template policy<P>(); }));
}

template <class Q, class... P>
std::vector<Field<Q>> build_section(std::tuple<P...>*) {
  std::vector<Field<Q>> out;
  (append_policy<Q, P>(out), ...);
  return out;
}

}  // namespace

template <class Q>
const std::vector<core::Field<Q>>& section_fields() {
  static const std::vector<Field<Q>> fields =
      build_section<Q>(static_cast<typename Q::policy_types*>(nullptr));
  return fields;
}

template const std::vector<Field<dds::domain::qos::DomainParticipantQos>>&
section_fields<dds::domain::qos::DomainParticipantQos>();
template const std::vector<Field<dds::topic::qos::TopicQos>>&
section_fields<dds::topic::qos::TopicQos>();
template const std::vector<Field<dds::pub::qos::PublisherQos>>&
section_fields<dds::pub::qos::PublisherQos>();
template const std::vector<Field<dds::sub::qos::SubscriberQos>>&
section_fields<dds::sub::qos::SubscriberQos>();
template const std::vector<Field<dds::pub::qos::DataWriterQos>>&
section_fields<dds::pub::qos::DataWriterQos>();
template const std::vector<Field<dds::sub::qos::DataReaderQos>>&
section_fields<dds::sub::qos::DataReaderQos>();

const std::vector<KeyDoc>& file_keys() {
  static const std::vector<KeyDoc> keys = {
      {"version", "integer", "Required; the format version. This loader reads version 1."},
      {"include", "list of strings",
       "Other profile files whose profiles this file may name as `base`. A relative name is "
       "looked up next to this file, then in each folder of SPINDLE_QOS_PATH, then in the "
       "installed profile folder."},
      {"profiles", "mapping",
       "Profile name (letters, digits, `_`, `-`, `.`) to profile. Names are unique across a "
       "file and everything it includes."},
  };
  return keys;
}

const std::vector<KeyDoc>& profile_keys() {
  static const std::vector<KeyDoc> keys = {
      {"base", "string",
       "A profile (in this file or an included one) this profile starts from; its settings "
       "apply first, this profile's override them key by key."},
      {"description", "string", "Free text for readers of the file."},
      {"participant", "mapping", "Policies of DomainParticipantQos."},
      {"topic", "mapping", "Policies of TopicQos."},
      {"publisher", "mapping", "Policies of PublisherQos."},
      {"subscriber", "mapping", "Policies of SubscriberQos."},
      {"writer", "mapping", "Policies of DataWriterQos."},
      {"reader", "mapping", "Policies of DataReaderQos."},
  };
  return keys;
}

namespace {

using AllQos = std::tuple<dds::domain::qos::DomainParticipantQos, dds::topic::qos::TopicQos,
                          dds::pub::qos::PublisherQos, dds::sub::qos::SubscriberQos,
                          dds::pub::qos::DataWriterQos, dds::sub::qos::DataReaderQos>;

// The default of field `f` of policy P in every section that holds P, grouped by value:
// "best_effort (topic, reader); reliable (writer)", or just the value when all agree.
template <class P, class... Q>
std::string defaults_of(const Field<P>& f, std::tuple<Q...>*) {
  std::vector<std::pair<std::string, std::string>> by_value;  // value, sections
  auto one = [&](auto q) {
    using QT = decltype(q);
    if constexpr (QT::template holds<P>) {
      const auto v = core::render_value(f, f.get(q.template policy<P>()));
      for (auto& [value, sections] : by_value) {
        if (value == v) {
          sections += ", " + std::string(section_name<QT>);
          return;
        }
      }
      by_value.emplace_back(v, std::string(section_name<QT>));
    }
  };
  (one(Q{}), ...);
  if (by_value.size() == 1) return "`" + by_value.front().first + "`";
  std::string out;
  for (const auto& [value, sections] : by_value)
    out += (out.empty() ? "" : "; ") + ("`" + value + "` (" + sections + ")");
  return out;
}

template <class P, class... Q>
std::string sections_of(std::tuple<Q...>*) {
  std::string out;
  auto one = [&](auto q) {
    using QT = decltype(q);
    if constexpr (QT::template holds<P>)
      out += (out.empty() ? "" : ", ") + ("`" + std::string(section_name<QT>) + "`");
  };
  (one(Q{}), ...);
  return out;
}

template <class P>
std::string policy_id_text() {
  constexpr auto id = dds::core::policy::policy_id<P>::value;
  if (id < 0x8000) return std::to_string(id);
  constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (auto v = id; v != 0; v /= 16)
    hex.insert(hex.begin(), kHex[v % 16]);
  return "0x" + hex;
}

template <class P>
void document_policy(std::string& out) {
  const auto def = define<P>();
  auto* all = static_cast<AllQos*>(nullptr);
  out += "### `" + std::string(def.name) + "`\n\n" + std::string(def.doc) +
         "\n\nSections: " + sections_of<P>(all) + ". Policy id " + policy_id_text<P>() + " (" +
         dds::core::policy::policy_name<P>::name() +
         ").\n\n| key | accepts | default | meaning |\n|---|---|---|---|\n";
  for (const auto& f : def.fields) {
    out += "| `" + std::string(def.name) + "." + f.key + "` | " +
           core::markdown_cell(core::describe_type(f)) + " | " + defaults_of(f, all) + " | " +
           core::markdown_cell(f.doc) + " |\n";
  }
  out += "\n";
}

template <class... P>
void document_policies(std::string& out) {
  (document_policy<P>(out), ...);
}

void document_keys(std::string& out, const std::vector<KeyDoc>& keys) {
  out += "| key | accepts | meaning |\n|---|---|---|\n";
  for (const auto& k : keys)
    out += "| `" + std::string(k.key) + "` | " + std::string(k.type) + " | " +
           core::markdown_cell(k.doc) + " |\n";
  out += "\n";
}

}  // namespace

std::string schema_markdown() {
  std::string out =
      "# QoS profile file schema (version 1)\n\n"
      "<!-- Generated from runtime/src/qos/schema.cpp by `qos_schema_doc`; do not edit. "
      "The test qos.schema_doc fails when this file and the code differ. -->\n\n"
      "Durations are an integer with a unit (`ns`, `us`, `ms`, `s`, `min`), `0`, or "
      "`infinite`. Counts are a positive integer or `unlimited`. Unknown keys, repeated "
      "keys, wrong types and out-of-range values are errors naming the file, the line and "
      "the key. A key a profile does not set keeps its value from the base profile, or the "
      "default below.\n\n"
      "## File\n\n";
  document_keys(out, file_keys());
  out += "## Profile\n\n";
  document_keys(out, profile_keys());
  out +=
      "## Policies\n\nA section holds `<policy>: {<key>: <value>, ...}` for the policies "
      "the DDS specification gives its entity, plus the Spindle policies `consistency` and "
      "`engine` in `topic`, `writer` and `reader`.\n\n";
  document_policies<pol::UserData, pol::TopicData, pol::GroupData, pol::EntityFactory,
                    pol::Durability, pol::DurabilityService, pol::Presentation, pol::Deadline,
                    pol::LatencyBudget, pol::Ownership, pol::OwnershipStrength, pol::Liveliness,
                    pol::TimeBasedFilter, pol::Partition, pol::Reliability, pol::DestinationOrder,
                    pol::History, pol::ResourceLimits, pol::TransportPriority, pol::Lifespan,
                    pol::WriterDataLifecycle, pol::ReaderDataLifecycle, sp::Consistency, sp::Engine,
                    pol::DataRepresentation>(out);
  return out;
}

}  // namespace spindle::qos

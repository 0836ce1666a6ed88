// Discovery record encoding and decoding (format in records.hpp and docs/dcps-wire.md).
//
// The layout is written once: one function per policy lists its fields in wire order and is
// run by both an encoder (Put) and a decoder (Get). Each field call takes the current value
// and returns the value to store: Put appends it and hands it back, Get reads, validates and
// returns what the bytes say. Encoding runs on a copy of the record so that both directions
// can store through the policies' setters. Get stops at the first error (later calls return
// defaults and read nothing), so the message names the first bad field.
//
// Threading: pure functions.
#include "discovery/records.hpp"

#include <algorithm>
#include <concepts>
#include <limits>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <dds/core/Exception.hpp>

#include "qos/checks.hpp"

namespace spindle::discovery {

namespace {

namespace pol = dds::core::policy;
namespace sp = spindle::policy;
using dds::core::Duration;

enum class RecordKind : std::uint8_t {
  writer = 1,
  reader = 2,
  participant = 3,
  topic = 4,
  type = 5
};

constexpr std::string_view kind_name(std::uint8_t kind) noexcept {
  switch (kind) {
    case static_cast<std::uint8_t>(RecordKind::writer):
      return "a writer record";
    case static_cast<std::uint8_t>(RecordKind::reader):
      return "a reader record";
    case static_cast<std::uint8_t>(RecordKind::participant):
      return "a participant record";
    case static_cast<std::uint8_t>(RecordKind::topic):
      return "a topic record";
    case static_cast<std::uint8_t>(RecordKind::type):
      return "a type record";
    default:
      return "not a record kind (1 writer, 2 reader, 3 participant, 4 topic, 5 type)";
  }
}

// Message building by appending pieces (GCC 12 -O3 reports a false -Wrestrict for
// `"literal" + std::to_string(n)`).
void append(std::string& s, std::string_view piece) {
  s += piece;
}
template <std::integral I>
void append(std::string& s, I n) {
  s += std::to_string(n);
}
template <class... Pieces>
std::string cat(const Pieces&... pieces) {
  std::string s;
  (append(s, pieces), ...);
  return s;
}

// What Put and Get share: the name of the field being coded, for messages.
class FieldNames {
 public:
  explicit FieldNames(std::string_view record) : record_(record) {}
  // The prefix of the following fields: "qos", "publisher_qos", or "" for the top level.
  void section(std::string_view s) { section_ = s; }

 protected:
  // "writer record: qos.history.depth: " (no field: "writer record: ").
  [[nodiscard]] std::string where(std::string_view field) const {
    std::string s = cat(record_, " record: ");
    if (field.empty()) return s;
    if (!section_.empty()) s += cat(section_, ".");
    s += cat(field, ": ");
    return s;
  }

 private:
  std::string_view record_;
  std::string_view section_;
};

// The encoder: appends each field little-endian.
class Put : public FieldNames {
 public:
  using FieldNames::FieldNames;

  template <std::integral T>
  T integer(std::string_view, T v, T = std::numeric_limits<T>::lowest(), std::string_view = {}) {
    const auto u = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
    for (std::size_t i = 0; i < sizeof(T); ++i)
      out_.push_back(static_cast<std::byte>((u >> (8 * i)) & 0xffu));
    return v;
  }
  bool boolean(std::string_view field, bool v) {
    integer<std::uint8_t>(field, v ? 1 : 0);
    return v;
  }
  template <class E>
  typename E::type enumeration(std::string_view field, E v, typename E::type) {
    integer(field, static_cast<std::uint8_t>(v.underlying()));
    return v.underlying();
  }
  Duration duration(std::string_view field, const Duration& d) {
    integer(field, d.sec());
    integer(field, d.nanosec());
    return d;
  }
  // A string or byte sequence: u32 length, then the bytes.
  template <class Seq>
  Seq sequence(std::string_view field, const Seq& s, std::size_t max) {
    if (s.size() > max)
      throw dds::core::InvalidArgumentError(
          cat(where(field), s.size(), " bytes, more than the limit of ", max));
    integer(field, static_cast<std::uint32_t>(s.size()));
    for (const auto c : s)
      out_.push_back(static_cast<std::byte>(c));
    return s;
  }
  dds::core::StringSeq names(std::string_view field, const dds::core::StringSeq& list) {
    if (list.size() > kMaxPartitions)
      throw dds::core::InvalidArgumentError(
          cat(where(field), list.size(), " names, more than the limit of ", kMaxPartitions));
    integer(field, static_cast<std::uint32_t>(list.size()));
    for (std::size_t i = 0; i < list.size(); ++i)
      sequence(cat(field, "[", i, "]"), list[i], kMaxNameBytes);
    return list;
  }

  [[noreturn]] void fail(std::string_view field, std::string_view message) {
    throw dds::core::InvalidArgumentError(cat(where(field), message));
  }
  [[nodiscard]] static std::uint8_t version() noexcept { return kDiscoveryVersion; }

  [[nodiscard]] std::vector<std::byte> bytes() && { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

// The decoder: reads each field from the front of the input and checks it.
class Get : public FieldNames {
 public:
  Get(std::string_view record, std::span<const std::byte> in) : FieldNames(record), in_(in) {}

  // The format version the record says it is in (kDiscoveryVersion or kOldestDiscoveryVersion).
  [[nodiscard]] std::uint8_t version() const noexcept { return version_; }
  void version(std::uint8_t v) noexcept { version_ = v; }
  [[nodiscard]] bool failed() const noexcept { return !error_.empty(); }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] std::size_t offset() const noexcept { return pos_; }
  [[nodiscard]] std::size_t left() const noexcept { return in_.size() - pos_; }
  // Records the first error only.
  void fail(std::string_view field, std::string_view message) {
    if (!failed()) error_ = cat(where(field), message);
  }

  // A value below `min` is an error; `note` follows the minimum in the message.
  template <std::integral T>
  T integer(std::string_view field, T, T min = std::numeric_limits<T>::lowest(),
            std::string_view note = {}) {
    const auto at = pos_;
    const auto bytes = take(field, sizeof(T));
    if (failed()) return T{};
    std::uint64_t u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      u |= std::to_integer<std::uint64_t>(bytes[i]) << (8 * i);
    const auto v = static_cast<T>(static_cast<std::make_unsigned_t<T>>(u));
    if (v < min) {
      fail(field, cat(v, " at offset ", at, " is below ", min, note));
      return T{};
    }
    return v;
  }
  bool boolean(std::string_view field, bool) {
    const auto at = pos_;
    const auto raw = integer<std::uint8_t>(field, 0);
    if (raw > 1) fail(field, cat(raw, " at offset ", at, " is not a boolean (0 or 1)"));
    return raw == 1;
  }
  // Enumerators are 0..last.
  template <class E>
  typename E::type enumeration(std::string_view field, E, typename E::type last) {
    const auto at = pos_;
    const auto raw = integer<std::uint8_t>(field, 0);
    if (raw > static_cast<std::uint8_t>(last)) {
      fail(field, cat(raw, " at offset ", at, " is out of range 0..", static_cast<int>(last)));
      return typename E::type{};
    }
    return static_cast<typename E::type>(raw);
  }
  Duration duration(std::string_view field, const Duration&) {
    const auto at = pos_;
    const auto sec = integer<std::int32_t>(field, 0);
    const auto nsec = integer<std::uint32_t>(field, 0);
    if (failed()) return Duration::zero();
    if (sec == Duration::kInfiniteSec && nsec == Duration::kInfiniteNsec)
      return Duration::infinite();
    if (sec < 0) {
      fail(field, cat("sec ", sec, " at offset ", at, " is negative"));
      return Duration::zero();
    }
    if (nsec >= 1'000'000'000u) {
      fail(field, cat("nanosec ", nsec, " at offset ", at + 4, " is not below 1e9"));
      return Duration::zero();
    }
    return {sec, nsec};
  }
  template <class Seq>
  Seq sequence(std::string_view field, const Seq&, std::size_t max) {
    const auto at = pos_;
    const auto n = integer<std::uint32_t>(field, 0);
    if (n > max) fail(field, cat("length ", n, " at offset ", at, " is above the limit of ", max));
    const auto bytes = take(field, n);
    Seq s;
    if (failed()) return s;
    s.reserve(bytes.size());
    for (const std::byte b : bytes)
      s.push_back(std::to_integer<typename Seq::value_type>(b));
    return s;
  }
  dds::core::StringSeq names(std::string_view field, const dds::core::StringSeq&) {
    const auto at = pos_;
    const auto n = integer<std::uint32_t>(field, 0);
    if (n > kMaxPartitions)
      fail(field, cat(n, " names at offset ", at, " are more than the limit of ", kMaxPartitions));
    dds::core::StringSeq list;
    for (std::uint32_t i = 0; i < n && !failed(); ++i)
      list.push_back(sequence(cat(field, "[", i, "]"), std::string(), kMaxNameBytes));
    return list;
  }

 private:
  std::uint8_t version_ = kDiscoveryVersion;
  // The next n bytes, or an empty span and a "truncated" error naming `field`.
  std::span<const std::byte> take(std::string_view field, std::size_t n) {
    if (failed()) return {};
    if (n > left()) {
      fail(field, cat("truncated at offset ", pos_, " (", n, n == 1 ? " byte" : " bytes",
                      " needed, ", left(), " left)"));
      return {};
    }
    const auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::string error_;
};

// ---- The fields of each policy, in wire order (the table in records.hpp) ----

template <class Io>
std::int32_t limit(Io& io, std::string_view field, std::int32_t v) {
  return io.integer(field, v, dds::core::LENGTH_UNLIMITED, std::string_view(" (LENGTH_UNLIMITED)"));
}
// max_samples, max_instances, max_samples_per_instance: the same three in ResourceLimits
// and DurabilityService.
template <class Io, class P>
void limits(Io& io, std::string_view policy, P& p) {
  p.max_samples(limit(io, cat(policy, ".max_samples"), p.max_samples()));
  p.max_instances(limit(io, cat(policy, ".max_instances"), p.max_instances()));
  p.max_samples_per_instance(
      limit(io, cat(policy, ".max_samples_per_instance"), p.max_samples_per_instance()));
}
// The least history depth `kind` allows.
constexpr std::int32_t least_depth(pol::HistoryKind kind) noexcept {
  return kind == pol::HistoryKind::KEEP_LAST ? 1 : std::numeric_limits<std::int32_t>::lowest();
}

template <class Io>
void fields(Io& io, pol::UserData& p) {
  p.value(io.sequence("user_data.value", p.value(), kMaxDataBytes));
}
template <class Io>
void fields(Io& io, pol::GroupData& p) {
  p.value(io.sequence("group_data.value", p.value(), kMaxDataBytes));
}
template <class Io>
void fields(Io& io, pol::TopicData& p) {
  p.value(io.sequence("topic_data.value", p.value(), kMaxDataBytes));
}
template <class Io>
void fields(Io& io, pol::Durability& p) {
  p.kind(io.enumeration("durability.kind", p.kind(), pol::DurabilityKind::PERSISTENT));
}
template <class Io>
void fields(Io& io, pol::DurabilityService& p) {
  p.service_cleanup_delay(
      io.duration("durability_service.service_cleanup_delay", p.service_cleanup_delay()));
  p.history_kind(io.enumeration("durability_service.history_kind", p.history_kind(),
                                pol::HistoryKind::KEEP_ALL));
  p.history_depth(io.integer("durability_service.history_depth", p.history_depth(),
                             least_depth(p.history_kind())));
  limits(io, "durability_service", p);
}
template <class Io>
void fields(Io& io, pol::Deadline& p) {
  p.period(io.duration("deadline.period", p.period()));
}
template <class Io>
void fields(Io& io, pol::LatencyBudget& p) {
  p.duration(io.duration("latency_budget.duration", p.duration()));
}
template <class Io>
void fields(Io& io, pol::Liveliness& p) {
  p.kind(io.enumeration("liveliness.kind", p.kind(), pol::LivelinessKind::MANUAL_BY_TOPIC));
  p.lease_duration(io.duration("liveliness.lease_duration", p.lease_duration()));
}
template <class Io>
void fields(Io& io, pol::Reliability& p) {
  p.kind(io.enumeration("reliability.kind", p.kind(), pol::ReliabilityKind::RELIABLE));
  p.max_blocking_time(io.duration("reliability.max_blocking_time", p.max_blocking_time()));
}
template <class Io>
void fields(Io& io, pol::DestinationOrder& p) {
  p.kind(io.enumeration("destination_order.kind", p.kind(),
                        pol::DestinationOrderKind::BY_SOURCE_TIMESTAMP));
}
template <class Io>
void fields(Io& io, pol::History& p) {
  p.kind(io.enumeration("history.kind", p.kind(), pol::HistoryKind::KEEP_ALL));
  p.depth(io.integer("history.depth", p.depth(), least_depth(p.kind())));
}
template <class Io>
void fields(Io& io, pol::ResourceLimits& p) {
  limits(io, "resource_limits", p);
}
template <class Io>
void fields(Io& io, pol::TransportPriority& p) {
  p.value(io.integer("transport_priority.value", p.value()));
}
template <class Io>
void fields(Io& io, pol::Lifespan& p) {
  p.duration(io.duration("lifespan.duration", p.duration()));
}
template <class Io>
void fields(Io& io, pol::Ownership& p) {
  p.kind(io.enumeration("ownership.kind", p.kind(), pol::OwnershipKind::EXCLUSIVE));
}
template <class Io>
void fields(Io& io, pol::OwnershipStrength& p) {
  p.value(io.integer("ownership_strength.value", p.value()));
}
template <class Io>
void fields(Io& io, pol::WriterDataLifecycle& p) {
  p.autodispose_unregistered_instances(
      io.boolean("writer_data_lifecycle.autodispose_unregistered_instances",
                 p.autodispose_unregistered_instances()));
}
template <class Io>
void fields(Io& io, pol::TimeBasedFilter& p) {
  p.minimum_separation(io.duration("time_based_filter.minimum_separation", p.minimum_separation()));
}
template <class Io>
void fields(Io& io, pol::ReaderDataLifecycle& p) {
  p.autopurge_nowriter_samples_delay(
      io.duration("reader_data_lifecycle.autopurge_nowriter_samples_delay",
                  p.autopurge_nowriter_samples_delay()));
  p.autopurge_disposed_samples_delay(
      io.duration("reader_data_lifecycle.autopurge_disposed_samples_delay",
                  p.autopurge_disposed_samples_delay()));
}
template <class Io>
void fields(Io& io, sp::Consistency& p) {
  p.kind(io.enumeration("consistency.kind", p.kind(), sp::ConsistencyKind::LOGGED));
  p.fsync(io.enumeration("consistency.fsync", p.fsync(), sp::FsyncKind::NEVER));
  p.fsync_period(io.duration("consistency.fsync_period", p.fsync_period()));
}
template <class Io>
void fields(Io& io, sp::Engine& p) {
  p.window_size(io.integer("engine.window_size", p.window_size()));
  p.max_payload(io.integer("engine.max_payload", p.max_payload()));
  p.rdmc_block_size(io.integer("engine.rdmc_block_size", p.rdmc_block_size()));
  p.rdmc_algorithm(io.enumeration("engine.rdmc_algorithm", p.rdmc_algorithm(),
                                  sp::RdmcAlgorithm::BINOMIAL_PIPELINE));
  p.lag_bound(io.duration("engine.lag_bound", p.lag_bound()));
}
template <class Io>
void fields(Io& io, pol::Presentation& p) {
  p.access_scope(io.enumeration("presentation.access_scope", p.access_scope(),
                                pol::PresentationAccessScopeKind::GROUP));
  p.coherent_access(io.boolean("presentation.coherent_access", p.coherent_access()));
  p.ordered_access(io.boolean("presentation.ordered_access", p.ordered_access()));
}
template <class Io>
void fields(Io& io, pol::Partition& p) {
  p.name(io.names("partition.names", p.name()));
}
// Each id a u8 (0 XCDR1, 1 XML, 2 XCDR2), after a u32 count of at most kMaxRepresentations.
template <class Io>
void fields(Io& io, pol::DataRepresentation& p) {
  if (io.version() < 3) return;  // version 2 (logs written before it): empty, the type's
  std::vector<std::uint8_t> raw;
  for (const auto id : p.value())
    raw.push_back(static_cast<std::uint8_t>(id));
  raw = io.sequence("data_representation.value", raw, kMaxRepresentations);
  pol::DataRepresentationIdSeq ids;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] > 2) {
      io.fail("data_representation.value",
              cat("id ", static_cast<int>(raw[i]), " at index ", i, " is none of 0..2"));
      return;
    }
    ids.push_back(static_cast<pol::DataRepresentationId>(raw[i]));
  }
  p.value(ids);
}
template <class Io>
void fields(Io& io, pol::EntityFactory& p) {
  p.autoenable_created_entities(
      io.boolean("entity_factory.autoenable_created_entities", p.autoenable_created_entities()));
}

// Every policy of an entity QoS, in the QoS class's order. A policy added to the class
// without a fields() overload above does not compile; one added with it changes the
// format (the golden encodings in tests/dcps/discovery_test.cpp fail): bump
// kDiscoveryVersion and update the layout in records.hpp and docs/dcps-wire.md.
template <class Io, class Qos>
void qos_fields(Io& io, std::string_view section, Qos& q) {
  io.section(section);
  [&]<class... P>(std::type_identity<std::tuple<P...>>) {
    (fields(io, q.template policy<P>()), ...);
  }(std::type_identity<typename Qos::policy_types>{});
}

template <class Record>
struct RecordTraits;
template <>
struct RecordTraits<WriterRecord> {
  static constexpr RecordKind kind = RecordKind::writer;
  static constexpr std::string_view name = "writer";
  static constexpr std::string_view group_section = "publisher_qos";
  static dds::pub::qos::PublisherQos& group(WriterRecord& r) { return r.publisher_qos; }
};
template <>
struct RecordTraits<ReaderRecord> {
  static constexpr RecordKind kind = RecordKind::reader;
  static constexpr std::string_view name = "reader";
  static constexpr std::string_view group_section = "subscriber_qos";
  static dds::sub::qos::SubscriberQos& group(ReaderRecord& r) { return r.subscriber_qos; }
};
template <>
struct RecordTraits<ParticipantRecord> {
  static constexpr RecordKind kind = RecordKind::participant;
  static constexpr std::string_view name = "participant";
};
template <>
struct RecordTraits<TopicRecord> {
  static constexpr RecordKind kind = RecordKind::topic;
  static constexpr std::string_view name = "topic";
};

template <>
struct RecordTraits<TypeRecord> {
  static constexpr RecordKind kind = RecordKind::type;
  static constexpr std::string_view name = "type";
};

// Everything after the version and kind bytes.
template <class Io, class Record>
requires std::same_as<Record, WriterRecord> || std::same_as<Record, ReaderRecord>
void record_fields(Io& io, Record& r) {
  using Traits = RecordTraits<Record>;
  io.section({});
  r.guid = io.integer("guid", r.guid);
  r.topic_name = io.sequence("topic_name", r.topic_name, kMaxNameBytes);
  r.type_name = io.sequence("type_name", r.type_name, kMaxNameBytes);
  qos_fields(io, "qos", r.qos);
  qos_fields(io, Traits::group_section, Traits::group(r));
  io.section({});
  fields(io, r.topic_data);
  if constexpr (std::same_as<Record, WriterRecord>) {
    if (io.version() >= 5) r.max_sample = io.integer("max_sample", r.max_sample);
    if (io.version() >= 6) r.room = io.integer("room", r.room);
  }
}
// ParticipantRole as Put and Get code enumerations.
struct ParticipantRoleEnum {
  using type = std::uint8_t;
  std::uint8_t value;
  [[nodiscard]] std::uint8_t underlying() const noexcept { return value; }
};

template <class Io>
void record_fields(Io& io, ParticipantRecord& r) {
  io.section({});
  r.guid = io.integer("guid", r.guid);
  qos_fields(io, "qos", r.qos);
  if (io.version() < 4) return;  // version 3: where it runs is unknown
  io.section("process");
  auto& p = r.process;
  p.host = io.sequence("host", p.host, kMaxNameBytes);
  p.pid = io.integer("pid", p.pid);
  p.name = io.sequence("name", p.name, kMaxNameBytes);
  p.role = static_cast<ParticipantRole>(
      io.enumeration("role", ParticipantRoleEnum{static_cast<std::uint8_t>(p.role)},
                     static_cast<std::uint8_t>(ParticipantRole::client)));
}
template <class Io>
void record_fields(Io& io, TopicRecord& r) {
  io.section({});
  r.guid = io.integer("guid", r.guid);
  r.topic_name = io.sequence("topic_name", r.topic_name, kMaxNameBytes);
  r.type_name = io.sequence("type_name", r.type_name, kMaxNameBytes);
  qos_fields(io, "qos", r.qos);
}

template <class Io>
void record_fields(Io& io, TypeRecord& r) {
  io.section({});
  r.guid = io.integer("guid", r.guid);
  r.type_information = io.sequence("type_information", r.type_information, kMaxTypeInfoBytes);
  r.type_mapping = io.sequence("type_mapping", r.type_mapping, kMaxTypeInfoBytes);
  if (r.type_information.empty() || r.type_mapping.empty())
    io.fail(r.type_information.empty() ? "type_information" : "type_mapping", "empty");
}

// The first inconsistent QoS of a decoded record: its section and what is wrong.
std::optional<std::pair<std::string_view, std::string>> inconsistency(TypeRecord&) {
  return std::nullopt;
}
template <class Record>
std::optional<std::pair<std::string_view, std::string>> inconsistency(Record& r) {
  if (const auto bad = qos::find_inconsistency(r.qos))
    return std::pair<std::string_view, std::string>{"qos", bad->message};
  if constexpr (requires { RecordTraits<Record>::group(r); }) {
    using Traits = RecordTraits<Record>;
    if (const auto bad = qos::find_inconsistency(Traits::group(r)))
      return std::pair<std::string_view, std::string>{Traits::group_section, bad->message};
  }
  return std::nullopt;
}

template <class Record>
std::vector<std::byte> encode_record(const Record& r) {
  using Traits = RecordTraits<Record>;
  Record copy = r;  // record_fields() stores every field back through the setters
  Put put(Traits::name);
  put.integer("version", kDiscoveryVersion);
  put.integer("kind", static_cast<std::uint8_t>(Traits::kind));
  record_fields(put, copy);
  return std::move(put).bytes();
}

template <class Record>
std::optional<Record> decode_record(std::span<const std::byte> bytes, std::string& error) {
  using Traits = RecordTraits<Record>;
  Get get(Traits::name, bytes);
  const auto version = get.integer<std::uint8_t>("version", 0);
  if (!get.failed() && (version < kOldestDiscoveryVersion || version > kDiscoveryVersion))
    get.fail("version", cat(version, " at offset 0, this node reads ", kOldestDiscoveryVersion,
                            " to ", kDiscoveryVersion));
  get.version(version);
  const auto kind = get.integer<std::uint8_t>("kind", 0);
  if (!get.failed() && kind != static_cast<std::uint8_t>(Traits::kind))
    get.fail("kind", cat(kind, " at offset 1 is ", kind_name(kind)));
  Record r;
  record_fields(get, r);
  get.section({});
  if (!get.failed() && get.left() > 0)
    get.fail({}, cat(get.left(), " trailing bytes at offset ", get.offset()));
  if (!get.failed()) {
    if (const auto bad = inconsistency(r)) get.fail(bad->first, cat("inconsistent: ", bad->second));
  }
  if (get.failed()) {
    error = get.error();
    return std::nullopt;
  }
  return r;
}

}  // namespace

std::vector<std::byte> encode(const WriterRecord& r) {
  return encode_record(r);
}
std::vector<std::byte> encode(const ReaderRecord& r) {
  return encode_record(r);
}

std::optional<WriterRecord> decode_writer(std::span<const std::byte> bytes, std::string& error) {
  return decode_record<WriterRecord>(bytes, error);
}
std::optional<ReaderRecord> decode_reader(std::span<const std::byte> bytes, std::string& error) {
  return decode_record<ReaderRecord>(bytes, error);
}
std::vector<std::byte> encode(const ParticipantRecord& r) {
  return encode_record(r);
}
std::vector<std::byte> encode(const TopicRecord& r) {
  return encode_record(r);
}
std::optional<ParticipantRecord> decode_participant(std::span<const std::byte> bytes,
                                                    std::string& error) {
  return decode_record<ParticipantRecord>(bytes, error);
}
std::optional<TopicRecord> decode_topic(std::span<const std::byte> bytes, std::string& error) {
  return decode_record<TopicRecord>(bytes, error);
}
std::vector<std::byte> encode(const TypeRecord& r) {
  return encode_record(r);
}
std::optional<TypeRecord> decode_type(std::span<const std::byte> bytes, std::string& error) {
  return decode_record<TypeRecord>(bytes, error);
}

namespace {
constexpr std::size_t kPieceHeader = 8;
void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<std::byte>(v >> (8 * i)));
}
std::uint32_t get_u32(std::span<const std::byte> in, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i)
    v |= std::to_integer<std::uint32_t>(in[at + i]) << (8 * i);
  return v;
}
}  // namespace

std::vector<std::vector<std::byte>> split_pieces(std::span<const std::byte> record,
                                                 std::size_t max_payload) {
  if (max_payload <= kPieceHeader)
    throw dds::core::InvalidArgumentError(
        cat("a piece of at most ", max_payload, " bytes has no room beyond its 8-byte header"));
  const std::size_t room = max_payload - kPieceHeader;
  const std::size_t n = record.empty() ? 1 : (record.size() + room - 1) / room;
  std::vector<std::vector<std::byte>> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto part = record.subspan(i * room, std::min(room, record.size() - i * room));
    auto& piece = out.emplace_back();
    piece.reserve(kPieceHeader + part.size());
    put_u32(piece, static_cast<std::uint32_t>(i));
    put_u32(piece, static_cast<std::uint32_t>(n));
    piece.insert(piece.end(), part.begin(), part.end());
  }
  return out;
}

std::optional<std::vector<std::byte>> Pieces::add(std::span<const std::byte> piece,
                                                  std::size_t max_bytes, std::string& error) {
  auto fail = [&](std::string what) -> std::optional<std::vector<std::byte>> {
    error = std::move(what);
    pieces_ = next_ = 0;
    bytes_.clear();
    return std::nullopt;
  };
  if (piece.size() < kPieceHeader)
    return fail(cat("piece of ", piece.size(), " bytes, shorter than its 8-byte header"));
  const auto index = get_u32(piece, 0);
  const auto count = get_u32(piece, 4);
  if (count == 0 || index >= count) return fail(cat("piece ", index, " of ", count));
  if (index == 0) {
    pieces_ = count;
    next_ = 0;
    bytes_.clear();
  } else if (index != next_ || count != pieces_) {
    return fail(
        cat("piece ", index, " of ", count, " where piece ", next_, " of ", pieces_, " was due"));
  }
  if (bytes_.size() + piece.size() - kPieceHeader > max_bytes)
    return fail(cat("record larger than ", max_bytes, " bytes"));
  bytes_.insert(bytes_.end(), piece.begin() + kPieceHeader, piece.end());
  if (++next_ < pieces_) return std::nullopt;
  auto whole = std::move(bytes_);
  pieces_ = next_ = 0;
  bytes_.clear();
  return whole;
}

}  // namespace spindle::discovery

// Discovery records (discovery/records.hpp): the bytes follow the documented layout, every
// policy survives a round trip, every kind of bad input is rejected with its exact message,
// and mutated encodings are either decoded (and then re-encode to the same bytes) or
// rejected. Also keeps the fuzzer's seed corpus (tests/fuzz/corpus/discovery_record/) equal
// to the current encodings; SPINDLE_WRITE_CORPUS=1 rewrites it.
//
// Threading: single-threaded.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/core/Exception.hpp>

#include "dcps/wire.hpp"
#include "discovery/records.hpp"
#include "qos/checks.hpp"
#include "qos/schema.hpp"

namespace {

namespace pol = dds::core::policy;
namespace sp = spindle::policy;
using dds::core::Duration;
using spindle::discovery::ParticipantRecord;
using spindle::discovery::ReaderRecord;
using spindle::discovery::TopicRecord;
using spindle::discovery::WriterRecord;
using Bytes = std::vector<std::byte>;

// The layout as discovery/records.hpp and docs/dcps-wire.md state it, written independently of
// the codec: little-endian, packed.
class Layout {
 public:
  Layout& u8(std::uint8_t v) {
    bytes_.push_back(std::byte{v});
    return *this;
  }
  Layout& u32(std::uint32_t v) { return le(v, 4); }
  Layout& i32(std::int32_t v) { return u32(static_cast<std::uint32_t>(v)); }
  Layout& u64(std::uint64_t v) { return le(v, 8); }
  Layout& dur(std::int32_t sec, std::uint32_t nanosec) { return i32(sec).u32(nanosec); }
  Layout& infinite() { return dur(0x7fffffff, 0x7fffffff); }
  Layout& str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    for (const char c : s)
      u8(static_cast<std::uint8_t>(c));
    return *this;
  }
  Layout& data(std::initializer_list<std::uint8_t> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    for (const auto v : b)
      u8(v);
    return *this;
  }
  [[nodiscard]] const Bytes& bytes() const { return bytes_; }

 private:
  Layout& le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      u8(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  Bytes bytes_;
};

// A writer with every field of every policy away from its default (infinite where the
// default is finite), consistent as a whole.
WriterRecord full_writer() {
  WriterRecord r;
  r.guid = spindle::dcps::make_guid(7, 3);
  r.topic_name = "Telemetry";
  r.type_name = "avionics::AirData";
  const std::vector<std::uint8_t> user{1, 2, 3, 0, 255};
  r.qos << pol::UserData(user.begin(), user.end()) << pol::Durability::Persistent()
        << pol::DurabilityService(Duration(2, 5), pol::HistoryKind::KEEP_ALL, 7, 100, 10, 20)
        << pol::Deadline(Duration(1, 500)) << pol::LatencyBudget(Duration::infinite())
        << pol::Liveliness::ManualByTopic(Duration(3, 0))
        << pol::Reliability::BestEffort(Duration(0, 250'000'000))
        << pol::DestinationOrder::SourceTimestamp() << pol::History(pol::HistoryKind::KEEP_ALL, 4)
        << pol::ResourceLimits(1000, 50, 20) << pol::TransportPriority(-7)
        << pol::Lifespan(Duration(60, 0)) << pol::Ownership::Exclusive()
        << pol::OwnershipStrength(42)
        << pol::WriterDataLifecycle::ManuallyDisposeUnregisteredInstances()
        << sp::Consistency::LoggedPeriodicFsync(Duration(0, 5'000'000))
        << sp::Engine(64, 4096, 65536, sp::RdmcAlgorithm::CHAIN).lag_bound(Duration(0, 250'000'000))
        << pol::DataRepresentation(
               {pol::DataRepresentationId::XCDR2, pol::DataRepresentationId::XCDR1});
  const std::vector<std::uint8_t> group{9, 8};
  r.publisher_qos << pol::Presentation::GroupAccessScope(true, true)
                  << pol::Partition(dds::core::StringSeq{"a", "sensors/*", ""})
                  << pol::GroupData(group.begin(), group.end())
                  << pol::EntityFactory::ManuallyEnable();
  const std::vector<std::uint8_t> topic{4, 0, 4};
  r.topic_data = pol::TopicData(topic.begin(), topic.end());
  r.max_sample = 0x0102'0304'0506'0708;
  r.room = 0x1112'1314'1516'1718;  // where max_sample is 0, in practice
  return r;
}

// The policies full_writer() and full_topic() give the same values, in wire order:
// durability to liveliness, history to ownership, and consistency, engine and
// data_representation.
Layout& durability_to_liveliness(Layout& l) {
  return l
      .u8(3)  // durability
      .dur(2, 5)
      .u8(1)
      .i32(7)
      .i32(100)
      .i32(10)
      .i32(20)      // durability_service
      .dur(1, 500)  // deadline
      .infinite()   // latency_budget
      .u8(2)
      .dur(3, 0);  // liveliness
}
Layout& history_to_ownership(Layout& l) {
  return l.u8(1)
      .i32(4)  // history
      .i32(1000)
      .i32(50)
      .i32(20)     // resource_limits
      .i32(-7)     // transport_priority
      .dur(60, 0)  // lifespan
      .u8(1);      // ownership
}
Layout& consistency_and_engine(Layout& l) {
  return l.u8(3)
      .u8(1)
      .dur(0, 5'000'000)  // consistency
      .u32(64)
      .u32(4096)
      .u32(65536)
      .u8(1)
      .dur(0, 250'000'000)  // engine
      .data({2, 0});        // data_representation
}

Bytes full_writer_layout() {
  Layout l;
  l.u8(6).u8(1).u64(0x0000'0007'0000'0003).str("Telemetry").str("avionics::AirData");
  l.data({1, 2, 3, 0, 255});  // user_data
  durability_to_liveliness(l)
      .u8(0)
      .dur(0, 250'000'000)  // reliability
      .u8(1);               // destination_order
  history_to_ownership(l)
      .i32(42)  // ownership_strength
      .u8(0);   // writer_data_lifecycle
  consistency_and_engine(l);
  l.u8(2)
      .u8(1)
      .u8(1)  // presentation
      .u32(3)
      .str("a")
      .str("sensors/*")
      .str("")                      // partition
      .data({9, 8})                 // group_data
      .u8(0)                        // entity_factory
      .data({4, 0, 4})              // topic_data
      .u64(0x0102'0304'0506'0708)   // max_sample
      .u64(0x1112'1314'1516'1718);  // room
  return l.bytes();
}

ReaderRecord full_reader() {
  ReaderRecord r;
  r.guid = spindle::dcps::make_guid(0xfffffffe, 0x80000001);
  r.topic_name = "Telemetry";
  r.type_name = "avionics::AirData";
  const std::vector<std::uint8_t> user{7};
  r.qos << pol::UserData(user.begin(), user.end()) << pol::Durability::Transient()
        << pol::Deadline(Duration(2, 0)) << pol::LatencyBudget(Duration(0, 1))
        << pol::Liveliness::ManualByParticipant(Duration(10, 0))
        << pol::Reliability::Reliable(Duration::infinite())
        << pol::DestinationOrder::SourceTimestamp() << pol::History(pol::HistoryKind::KEEP_ALL, 3)
        << pol::ResourceLimits(500, 5, 100) << pol::Ownership::Exclusive()
        << pol::TimeBasedFilter(Duration(0, 100'000'000))
        << pol::ReaderDataLifecycle(Duration(5, 0), Duration(6, 0))
        << sp::Consistency(sp::ConsistencyKind::VOLATILE, sp::FsyncKind::NEVER, Duration(1, 0))
        << sp::Engine(10, 512, 4096, sp::RdmcAlgorithm::SEQUENTIAL).lag_bound(Duration::infinite())
        << pol::DataRepresentation({pol::DataRepresentationId::XCDR2});
  const std::vector<std::uint8_t> group{0};
  r.subscriber_qos << pol::Presentation::TopicAccessScope(true, true)
                   << pol::Partition(std::string("x")) << pol::GroupData(group.begin(), group.end())
                   << pol::EntityFactory::ManuallyEnable();
  const std::vector<std::uint8_t> topic{1};
  r.topic_data = pol::TopicData(topic.begin(), topic.end());
  return r;
}

Bytes full_reader_layout() {
  Layout l;
  l.u8(6).u8(2).u64(0xffff'fffe'8000'0001).str("Telemetry").str("avionics::AirData");
  l.data({7})     // user_data
      .u8(2)      // durability
      .dur(2, 0)  // deadline
      .dur(0, 1)  // latency_budget
      .u8(1)
      .dur(10, 0)  // liveliness
      .u8(1)
      .infinite()  // reliability
      .u8(1)       // destination_order
      .u8(1)
      .i32(3)  // history
      .i32(500)
      .i32(5)
      .i32(100)             // resource_limits
      .u8(1)                // ownership
      .dur(0, 100'000'000)  // time_based_filter
      .dur(5, 0)
      .dur(6, 0)  // reader_data_lifecycle
      .u8(2)
      .u8(2)
      .dur(1, 0)  // consistency
      .u32(10)
      .u32(512)
      .u32(4096)
      .u8(0)
      .infinite()  // engine
      .data({2});  // data_representation
  l.u8(1)
      .u8(1)
      .u8(1)  // presentation
      .u32(1)
      .str("x")    // partition
      .data({0})   // group_data
      .u8(0)       // entity_factory
      .data({1});  // topic_data
  return l.bytes();
}

ParticipantRecord full_participant() {
  ParticipantRecord r;
  r.guid = spindle::dcps::make_guid(9, 1);
  const std::vector<std::uint8_t> user{0xca, 0xfe};
  r.qos << pol::UserData(user.begin(), user.end()) << pol::EntityFactory::ManuallyEnable();
  r.process = {"ground-7", 4242, "fcs", spindle::discovery::ParticipantRole::client};
  return r;
}

Bytes full_participant_layout() {
  return Layout()
      .u8(6)
      .u8(3)
      .u64(0x0000'0009'0000'0001)
      .data({0xca, 0xfe})
      .u8(0)
      .str("ground-7")  // process
      .u32(4242)
      .str("fcs")
      .u8(1)
      .bytes();
}

TopicRecord full_topic() {
  TopicRecord r;
  r.guid = spindle::dcps::make_guid(9, 4);
  r.topic_name = "Telemetry";
  r.type_name = "avionics::AirData";
  const std::vector<std::uint8_t> topic{4, 0, 4};
  r.qos << pol::TopicData(topic.begin(), topic.end()) << pol::Durability::Persistent()
        << pol::DurabilityService(Duration(2, 5), pol::HistoryKind::KEEP_ALL, 7, 100, 10, 20)
        << pol::Deadline(Duration(1, 500)) << pol::LatencyBudget(Duration::infinite())
        << pol::Liveliness::ManualByTopic(Duration(3, 0))
        << pol::Reliability::Reliable(Duration(0, 250'000'000))
        << pol::DestinationOrder::SourceTimestamp() << pol::History(pol::HistoryKind::KEEP_ALL, 4)
        << pol::ResourceLimits(1000, 50, 20) << pol::TransportPriority(-7)
        << pol::Lifespan(Duration(60, 0)) << pol::Ownership::Exclusive()
        << sp::Consistency::LoggedPeriodicFsync(Duration(0, 5'000'000))
        << sp::Engine(64, 4096, 65536, sp::RdmcAlgorithm::CHAIN).lag_bound(Duration(0, 250'000'000))
        << pol::DataRepresentation(
               {pol::DataRepresentationId::XCDR2, pol::DataRepresentationId::XCDR1});
  return r;
}

Bytes full_topic_layout() {
  Layout l;
  l.u8(6).u8(4).u64(0x0000'0009'0000'0004).str("Telemetry").str("avionics::AirData");
  l.data({4, 0, 4});  // topic_data
  durability_to_liveliness(l)
      .u8(1)
      .dur(0, 250'000'000)  // reliability
      .u8(1);               // destination_order
  history_to_ownership(l);
  consistency_and_engine(l);
  return l.bytes();
}

template <class Record>
Record named(std::string topic, std::string type) {
  Record r;
  r.guid = spindle::dcps::make_guid(1, 2);
  r.topic_name = std::move(topic);
  r.type_name = std::move(type);
  return r;
}

// The decode function of a record type.
std::optional<WriterRecord> decode(const WriterRecord&, std::span<const std::byte> b,
                                   std::string& e) {
  return spindle::discovery::decode_writer(b, e);
}
std::optional<ReaderRecord> decode(const ReaderRecord&, std::span<const std::byte> b,
                                   std::string& e) {
  return spindle::discovery::decode_reader(b, e);
}
std::optional<ParticipantRecord> decode(const ParticipantRecord&, std::span<const std::byte> b,
                                        std::string& e) {
  return spindle::discovery::decode_participant(b, e);
}
std::optional<TopicRecord> decode(const TopicRecord&, std::span<const std::byte> b,
                                  std::string& e) {
  return spindle::discovery::decode_topic(b, e);
}

// Every field of every policy of `q` differs from the default QoS, by the profile schema
// (which lists each policy's fields once, qos/schema.hpp).
template <class Qos>
void check_every_field_differs_from_default(const Qos& q) {
  const Qos defaults;
  for (const auto& f : spindle::qos::section_fields<Qos>()) {
    INFO(f.key);
    CHECK(f.get(q) != f.get(defaults));
  }
}

// Each policy of the decoded QoS equals the original's.
template <class Qos>
void check_policies_equal(const Qos& got, const Qos& want) {
  [&]<class... P>(std::type_identity<std::tuple<P...>>) {
    (
        [&] {
          INFO(pol::policy_name<P>::name());
          CHECK(got.template policy<P>() == want.template policy<P>());
        }(),
        ...);
  }(std::type_identity<typename Qos::policy_types>{});
}

template <class Record>
Record round_trip(const Record& r) {
  std::string error;
  const auto got = decode(r, spindle::discovery::encode(r), error);
  INFO(error);
  REQUIRE(got);
  CHECK(error.empty());
  return *got;
}

// The error decoding `bytes` as a Record gives; "" when it decodes.
template <class Record>
std::string error_of(const Bytes& bytes) {
  std::string error;
  if (decode(Record{}, bytes, error)) return "";
  return error;
}

void put_u32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i)
    b.at(at + i) = static_cast<std::byte>((v >> (8 * i)) & 0xffu);
}
Bytes truncated(Bytes b, std::size_t size) {
  b.resize(size);
  return b;
}
Bytes with_byte(Bytes b, std::size_t at, std::uint8_t v) {
  b.at(at) = std::byte{v};
  return b;
}
Bytes with_u32(Bytes b, std::size_t at, std::uint32_t v) {
  put_u32(b, at, v);
  return b;
}

}  // namespace

TEST_CASE("discovery: default-QoS records are laid out as documented and round-trip",
          "[dcps][discovery]") {
  const auto w = named<WriterRecord>("T", "X");
  const auto wb = spindle::discovery::encode(w);
  CHECK(wb.size() == 169 + 2 + 8 + 8);
  CHECK(std::vector(wb.begin(), wb.begin() + 20) ==
        Layout().u8(6).u8(1).u64(0x0000'0001'0000'0002).str("T").str("X").bytes());
  const auto wd = round_trip(w);
  CHECK(wd == w);
  check_policies_equal(wd.qos, w.qos);
  check_policies_equal(wd.publisher_qos, w.publisher_qos);

  const auto r = named<ReaderRecord>("", "");
  CHECK(spindle::discovery::encode(r).size() == 151);
  const auto rd = round_trip(r);
  CHECK(rd == r);
  check_policies_equal(rd.qos, r.qos);
  check_policies_equal(rd.subscriber_qos, r.subscriber_qos);
}

TEST_CASE("discovery: a writer record with every policy set is laid out as documented",
          "[dcps][discovery]") {
  const auto w = full_writer();
  check_every_field_differs_from_default(w.qos);
  check_every_field_differs_from_default(w.publisher_qos);
  CHECK(spindle::discovery::encode(w) == full_writer_layout());
  const auto got = round_trip(w);
  check_policies_equal(got.qos, w.qos);
  check_policies_equal(got.publisher_qos, w.publisher_qos);
  CHECK(got == w);
}

TEST_CASE("discovery: a reader record with every policy set is laid out as documented",
          "[dcps][discovery]") {
  const auto r = full_reader();
  check_every_field_differs_from_default(r.qos);
  check_every_field_differs_from_default(r.subscriber_qos);
  CHECK(spindle::discovery::encode(r) == full_reader_layout());
  const auto got = round_trip(r);
  check_policies_equal(got.qos, r.qos);
  check_policies_equal(got.subscriber_qos, r.subscriber_qos);
  CHECK(got == r);
}

TEST_CASE("discovery: values at the limits round-trip", "[dcps][discovery]") {
  auto w = named<WriterRecord>(std::string(256, 't'), std::string(256, 'y'));
  dds::core::StringSeq names;
  for (int i = 0; i < 64; ++i)
    names.push_back(std::string(256, static_cast<char>('a' + i % 26)));
  const std::vector<std::uint8_t> data(64 * 1024, 0xab);
  w.guid = ~std::uint64_t{0};
  w.qos << pol::UserData(data.begin(), data.end()) << pol::TransportPriority(INT32_MIN)
        << pol::OwnershipStrength(INT32_MAX)
        << pol::Deadline(Duration(Duration::kInfiniteSec, 999'999'999))
        << pol::Lifespan(Duration(0, 999'999'999))
        << sp::Engine(sp::Engine::kMaxWindowSize, 4096, sp::Engine::kMaxRdmcBlockSize,
                      sp::RdmcAlgorithm::BINOMIAL_TREE);
  w.publisher_qos << pol::Partition(names) << pol::GroupData(data.begin(), data.end());
  CHECK(round_trip(w) == w);

  auto r = named<ReaderRecord>("t", "y");
  r.qos << pol::History::KeepLast(INT32_MAX) << pol::Durability::Persistent()
        << pol::Liveliness(pol::LivelinessKind::MANUAL_BY_TOPIC, Duration(0, 1))
        << pol::TimeBasedFilter(Duration::infinite())
        << sp::Consistency(sp::ConsistencyKind::LOGGED, sp::FsyncKind::PERIODIC,
                           Duration(Duration::kInfiniteSec, 0));
  r.subscriber_qos << pol::Partition(names);
  CHECK(round_trip(r) == r);
}

TEST_CASE("discovery: encode refuses what no peer would accept", "[dcps][discovery]") {
  using E = dds::core::InvalidArgumentError;
  auto w = named<WriterRecord>(std::string(257, 't'), "X");
  CHECK_THROWS_WITH(spindle::discovery::encode(w),
                    "writer record: topic_name: 257 bytes, more than the limit of 256");
  CHECK_THROWS_AS(spindle::discovery::encode(w), E);

  auto r = named<ReaderRecord>("T", "X");
  const std::vector<std::uint8_t> big(64 * 1024 + 1);
  r.qos << pol::UserData(big.begin(), big.end());
  CHECK_THROWS_WITH(
      spindle::discovery::encode(r),
      "reader record: qos.user_data.value: 65537 bytes, more than the limit of 65536");

  r = named<ReaderRecord>("T", "X");
  r.subscriber_qos << pol::Partition(dds::core::StringSeq(65, "p"));
  CHECK_THROWS_WITH(spindle::discovery::encode(r),
                    "reader record: subscriber_qos.partition.names: 65 names, more than the limit "
                    "of 64");
  r.subscriber_qos << pol::Partition(dds::core::StringSeq{"a", std::string(300, 'p')});
  CHECK_THROWS_WITH(spindle::discovery::encode(r),
                    "reader record: subscriber_qos.partition.names[1]: 300 bytes, more than the "
                    "limit of 256");
}

// Offsets below are those of a default-QoS record with topic "T" and type "X": the QoS
// starts at 20 (version, kind, guid, two 5-byte strings); see the table in discovery/records.hpp.
TEST_CASE("discovery: truncated records name the field and the offset", "[dcps][discovery]") {
  const auto w = spindle::discovery::encode(named<WriterRecord>("T", "X"));
  REQUIRE(w.size() == 187);
  const std::pair<std::size_t, std::string> cases[] = {
      {0, "writer record: version: truncated at offset 0 (1 byte needed, 0 left)"},
      {1, "writer record: kind: truncated at offset 1 (1 byte needed, 0 left)"},
      {5, "writer record: guid: truncated at offset 2 (8 bytes needed, 3 left)"},
      {12, "writer record: topic_name: truncated at offset 10 (4 bytes needed, 2 left)"},
      {14, "writer record: topic_name: truncated at offset 14 (1 byte needed, 0 left)"},
      {22, "writer record: qos.user_data.value: truncated at offset 20 (4 bytes needed, 2 left)"},
      {54, "writer record: qos.deadline.period: truncated at offset 54 (4 bytes needed, 0 left)"},
      {88, "writer record: qos.history.depth: truncated at offset 86 (4 bytes needed, 2 left)"},
      {142,
       "writer record: qos.engine.rdmc_algorithm: truncated at offset 142 (1 byte needed, 0 "
       "left)"},
      {145,
       "writer record: qos.engine.lag_bound: truncated at offset 143 (4 bytes needed, 2 left)"},
      {153,
       "writer record: qos.data_representation.value: truncated at offset 151 (4 bytes needed, "
       "2 left)"},
      {160,
       "writer record: publisher_qos.partition.names: truncated at offset 158 (4 bytes needed, 2 "
       "left)"},
      {166,
       "writer record: publisher_qos.entity_factory.autoenable_created_entities: truncated at "
       "offset 166 (1 byte needed, 0 left)"},
      {169, "writer record: topic_data.value: truncated at offset 167 (4 bytes needed, 2 left)"},
      {175, "writer record: max_sample: truncated at offset 171 (8 bytes needed, 4 left)"},
      {183, "writer record: room: truncated at offset 179 (8 bytes needed, 4 left)"},
  };
  for (const auto& [size, message] : cases) {
    INFO(size);
    CHECK(error_of<WriterRecord>(truncated(w, size)) == message);
  }

  auto with_partitions = named<ReaderRecord>("T", "X");
  with_partitions.subscriber_qos << pol::Partition(dds::core::StringSeq{"ab", "cdef"});
  const auto r = spindle::discovery::encode(with_partitions);
  // The partition count is at 140, "ab" at 144, "cdef" at 150 (its bytes at 154).
  CHECK(error_of<ReaderRecord>(truncated(r, 156)) ==
        "reader record: subscriber_qos.partition.names[1]: truncated at offset 154 (4 bytes "
        "needed, 2 left)");
  CHECK(error_of<ReaderRecord>(truncated(r, r.size() - 5)) ==
        "reader record: subscriber_qos.entity_factory.autoenable_created_entities: truncated at "
        "offset 162 (1 byte needed, 0 left)");
  CHECK(error_of<ReaderRecord>(truncated(r, r.size() - 1)) ==
        "reader record: topic_data.value: truncated at offset 163 (4 bytes needed, 3 left)");
}

// Durable logs keep writer records: one written before data_representation (version 2: no
// such field) is read with an empty DataRepresentation, the type's choice.
TEST_CASE("discovery: version-2 records are still read", "[dcps][discovery]") {
  auto w = named<WriterRecord>("T", "X");
  auto v6 = spindle::discovery::encode(w);
  REQUIRE(v6.at(151) == std::byte{0});  // the empty DataRepresentation's count, 4 bytes
  // Version 2 has neither that count nor the max_sample and room at the end (16 bytes).
  Bytes v2(v6.begin(), v6.begin() + 151);
  v2.insert(v2.end(), v6.begin() + 155, v6.end() - 16);
  v2[0] = std::byte{2};
  std::string error;
  const auto got = spindle::discovery::decode_writer(v2, error);
  INFO(error);
  REQUIRE(got);
  CHECK(*got == w);
  CHECK(spindle::discovery::encode(*got) == v6);
}

TEST_CASE("discovery: a version-4 writer record is read with no sample bound",
          "[dcps][discovery]") {
  auto w = named<WriterRecord>("T", "X");
  w.max_sample = 300;
  const auto v6 = spindle::discovery::encode(w);
  Bytes v4(v6.begin(), v6.end() - 16);
  v4[0] = std::byte{4};
  std::string error;
  const auto got = spindle::discovery::decode_writer(v4, error);
  INFO(error);
  REQUIRE(got);
  CHECK(got->max_sample == 0);
  w.max_sample = 0;
  CHECK(*got == w);
  // Version 6 carries it.
  CHECK(spindle::discovery::decode_writer(v6, error)->max_sample == 300);
}

TEST_CASE("discovery: a version-5 writer record is read as having asked for no room",
          "[dcps][discovery]") {
  auto w = named<WriterRecord>("T", "X");
  w.room = std::uint64_t{4} << 20;
  const auto v6 = spindle::discovery::encode(w);
  Bytes v5(v6.begin(), v6.end() - 8);
  v5[0] = std::byte{5};
  std::string error;
  const auto got = spindle::discovery::decode_writer(v5, error);
  INFO(error);
  REQUIRE(got);
  CHECK(got->room == 0);
  w.room = 0;
  CHECK(*got == w);
  // Version 6 carries it; a version-5 record re-encodes as version 6.
  CHECK(spindle::discovery::decode_writer(v6, error)->room == (std::uint64_t{4} << 20));
  CHECK(spindle::discovery::encode(*got).size() == v6.size());
}

TEST_CASE("discovery: bad fields are rejected with field, value and offset", "[dcps][discovery]") {
  const auto w = spindle::discovery::encode(named<WriterRecord>("T", "X"));
  const auto r = spindle::discovery::encode(named<ReaderRecord>("T", "X"));
  Bytes trailing = w;
  trailing.insert(trailing.end(), 3, std::byte{0});
  const std::tuple<std::string_view, Bytes, std::string> writer_cases[] = {
      {"version", with_byte(w, 0, 1),
       "writer record: version: 1 at offset 0, this node reads 2 to 6"},
      {"kind of the other record", r, "writer record: kind: 2 at offset 1 is a reader record"},
      {"unknown kind", with_byte(w, 1, 9),
       "writer record: kind: 9 at offset 1 is not a record kind (1 writer, 2 reader, 3 "
       "participant, 4 topic, 5 type)"},
      {"name length", with_u32(w, 10, 257),
       "writer record: topic_name: length 257 at offset 10 is above the limit of 256"},
      {"name length beyond the input", with_u32(w, 15, 200),
       "writer record: type_name: truncated at offset 19 (200 bytes needed, 168 left)"},
      {"user data length", with_u32(w, 20, 65537),
       "writer record: qos.user_data.value: length 65537 at offset 20 is above the limit of "
       "65536"},
      {"topic data length", with_u32(w, 167, 65537),
       "writer record: topic_data.value: length 65537 at offset 167 is above the limit of "
       "65536"},
      {"partition count", with_u32(w, 158, 65),
       "writer record: publisher_qos.partition.names: 65 names at offset 158 are more than the "
       "limit of 64"},
      {"huge partition count", with_u32(w, 158, 0xffffffff),
       "writer record: publisher_qos.partition.names: 4294967295 names at offset 158 are more "
       "than the limit of 64"},
      {"representation count", with_u32(w, 151, 9),
       "writer record: qos.data_representation.value: length 9 at offset 151 is above the limit "
       "of 8"},
      {"enum", with_byte(w, 24, 4),
       "writer record: qos.durability.kind: 4 at offset 24 is out of range 0..3"},
      {"enum", with_byte(w, 75, 2),
       "writer record: qos.reliability.kind: 2 at offset 75 is out of range 0..1"},
      {"vendor enum", with_byte(w, 121, 3),
       "writer record: qos.consistency.fsync: 3 at offset 121 is out of range 0..2"},
      {"vendor enum", with_byte(w, 142, 0xff),
       "writer record: qos.engine.rdmc_algorithm: 255 at offset 142 is out of range 0..3"},
      {"group enum", with_byte(w, 155, 3),
       "writer record: publisher_qos.presentation.access_scope: 3 at offset 155 is out of range "
       "0..2"},
      {"vendor duration", with_u32(w, 147, 1'000'000'000),
       "writer record: qos.engine.lag_bound: nanosec 1000000000 at offset 147 is not below 1e9"},
      {"boolean", with_byte(w, 119, 2),
       "writer record: qos.writer_data_lifecycle.autodispose_unregistered_instances: 2 at offset "
       "119 is not a boolean (0 or 1)"},
      {"boolean", with_byte(w, 157, 0x80),
       "writer record: publisher_qos.presentation.ordered_access: 128 at offset 157 is not a "
       "boolean (0 or 1)"},
      {"nanosec", with_u32(w, 54, 1'000'000'000),
       "writer record: qos.deadline.period: nanosec 1000000000 at offset 54 is not below 1e9"},
      {"nanosec of the infinite sec", with_u32(w, 54, 0x7ffffffe),
       "writer record: qos.deadline.period: nanosec 2147483646 at offset 54 is not below 1e9"},
      {"negative sec", with_u32(w, 58, 0xffffffff),
       "writer record: qos.latency_budget.duration: sec -1 at offset 58 is negative"},
      {"history depth", with_u32(w, 86, 0),
       "writer record: qos.history.depth: 0 at offset 86 is below 1"},
      {"durability service depth", with_u32(w, 34, 0xfffffff6),
       "writer record: qos.durability_service.history_depth: -10 at offset 34 is below 1"},
      {"resource limit", with_u32(w, 90, 0xfffffffe),
       "writer record: qos.resource_limits.max_samples: -2 at offset 90 is below -1 "
       "(LENGTH_UNLIMITED)"},
      {"durability service limit", with_u32(w, 46, 0x80000000),
       "writer record: qos.durability_service.max_samples_per_instance: -2147483648 at offset 46 "
       "is below -1 (LENGTH_UNLIMITED)"},
      {"trailing bytes", trailing, "writer record: 3 trailing bytes at offset 187"},
  };
  for (const auto& [what, bytes, message] : writer_cases) {
    INFO(what);
    CHECK(error_of<WriterRecord>(bytes) == message);
  }

  CHECK(error_of<ReaderRecord>(w) == "reader record: kind: 1 at offset 1 is a writer record");
  // A representation id none of XCDR1, XML, XCDR2 (the one id of this writer is at 155).
  auto xcdr2 = named<WriterRecord>("T", "X");
  xcdr2.qos << pol::DataRepresentation({pol::DataRepresentationId::XCDR2});
  const auto xb = spindle::discovery::encode(xcdr2);
  REQUIRE(xb.at(155) == std::byte{2});
  CHECK(error_of<WriterRecord>(with_byte(xb, 155, 7)) ==
        "writer record: qos.data_representation.value: id 7 at index 0 is none of 0..2");
  CHECK(error_of<ReaderRecord>(with_u32(r, 61, 0xffffffff)) ==
        "reader record: qos.history.depth: -1 at offset 61 is below 1");
  CHECK(error_of<ReaderRecord>(with_byte(r, 77, 2)) ==
        "reader record: qos.ownership.kind: 2 at offset 77 is out of range 0..1");
  CHECK(error_of<ReaderRecord>(with_u32(r, 90, 1'500'000'000)) ==
        "reader record: qos.reader_data_lifecycle.autopurge_nowriter_samples_delay: nanosec "
        "1500000000 at offset 90 is not below 1e9");
}

TEST_CASE("discovery: participant and topic records are laid out as documented and round-trip",
          "[dcps][discovery]") {
  const auto p = full_participant();
  check_every_field_differs_from_default(p.qos);
  CHECK(spindle::discovery::encode(p) == full_participant_layout());
  CHECK(round_trip(p) == p);
  CHECK(spindle::discovery::encode(ParticipantRecord{}).size() == 10 + 4 + 1 + 4 + 4 + 4 + 1);
  CHECK(round_trip(ParticipantRecord{}) == ParticipantRecord{});

  const auto t = full_topic();
  check_every_field_differs_from_default(t.qos);
  CHECK(spindle::discovery::encode(t) == full_topic_layout());
  const auto got = round_trip(t);
  check_policies_equal(got.qos, t.qos);
  CHECK(got == t);
  CHECK(round_trip(named<TopicRecord>("T", "X")) == named<TopicRecord>("T", "X"));
}

TEST_CASE("discovery: bad participant and topic records are rejected with what is wrong",
          "[dcps][discovery]") {
  const auto p = spindle::discovery::encode(full_participant());
  const auto t = spindle::discovery::encode(full_topic());
  CHECK(error_of<ParticipantRecord>(t) ==
        "participant record: kind: 4 at offset 1 is a topic record");
  CHECK(error_of<TopicRecord>(p) == "topic record: kind: 3 at offset 1 is a participant record");
  CHECK(error_of<WriterRecord>(t) == "writer record: kind: 4 at offset 1 is a topic record");
  CHECK(error_of<ParticipantRecord>(truncated(p, 15)) ==
        "participant record: qos.user_data.value: truncated at offset 14 (2 bytes needed, 1 "
        "left)");
  CHECK(error_of<ParticipantRecord>(with_byte(p, 16, 2)) ==
        "participant record: qos.entity_factory.autoenable_created_entities: 2 at offset 16 is "
        "not a boolean (0 or 1)");
  CHECK(error_of<ParticipantRecord>(with_byte(p, 0, 1)) ==
        "participant record: version: 1 at offset 0, this node reads 2 to 6");
  auto trailing = p;
  trailing.push_back(std::byte{0});
  CHECK(error_of<ParticipantRecord>(trailing) ==
        "participant record: 1 trailing bytes at offset 41");
  CHECK(error_of<ParticipantRecord>(with_byte(p, 40, 2)) ==
        "participant record: process.role: 2 at offset 40 is out of range 0..1");
  CHECK(error_of<ParticipantRecord>(with_u32(p, 17, 257)) ==
        "participant record: process.host: length 257 at offset 17 is above the limit of 256");
  CHECK(error_of<ParticipantRecord>(truncated(p, 38)) ==
        "participant record: process.name: truncated at offset 37 (3 bytes needed, 1 left)");
  // A version-3 record has no process section: where it runs is unknown.
  Bytes v3(p.begin(), p.begin() + 17);
  v3[0] = std::byte{3};
  std::string error;
  const auto old = spindle::discovery::decode_participant(v3, error);
  INFO(error);
  REQUIRE(old);
  CHECK(old->process == spindle::discovery::ProcessInfo{});
  CHECK(old->qos == full_participant().qos);
  CHECK(error_of<TopicRecord>(with_u32(t, 10, 300)) ==
        "topic record: topic_name: length 300 at offset 10 is above the limit of 256");
  auto bad = named<TopicRecord>("T", "X");
  bad.qos << pol::History::KeepLast(8) << pol::ResourceLimits(100, 10, 4);
  CHECK(error_of<TopicRecord>(spindle::discovery::encode(bad)) ==
        "topic record: qos: inconsistent: History.depth (8) > "
        "ResourceLimits.max_samples_per_instance (4)");
}

TEST_CASE("discovery: values the checks allow are accepted", "[dcps][discovery]") {
  const auto w = spindle::discovery::encode(named<WriterRecord>("T", "X"));
  std::string error;
  // KEEP_ALL ignores the depth; the largest finite duration is not infinite.
  const auto keep_all =
      spindle::discovery::decode_writer(with_u32(with_byte(w, 85, 1), 86, 0), error);
  INFO(error);
  REQUIRE(keep_all);
  CHECK(keep_all->qos.policy<pol::History>() == pol::History(pol::HistoryKind::KEEP_ALL, 0));
  auto longest = with_u32(w, 50, 0x7fffffff);
  put_u32(longest, 54, 999'999'999);
  const auto got = spindle::discovery::decode_writer(longest, error);
  REQUIRE(got);
  CHECK(got->qos.policy<pol::Deadline>().period() == Duration(Duration::kInfiniteSec, 999'999'999));
  CHECK_FALSE(got->qos.policy<pol::Deadline>().period().is_infinite());
}

TEST_CASE("discovery: a record with inconsistent QoS is rejected with the inconsistency",
          "[dcps][discovery]") {
  auto w = named<WriterRecord>("T", "X");
  w.qos << pol::History::KeepLast(8) << pol::ResourceLimits(100, 10, 4);
  CHECK(error_of<WriterRecord>(spindle::discovery::encode(w)) ==
        "writer record: qos: inconsistent: History.depth (8) > "
        "ResourceLimits.max_samples_per_instance (4)");

  w = named<WriterRecord>("T", "X");
  w.qos << pol::ResourceLimits(0, -1, -1);
  CHECK(error_of<WriterRecord>(spindle::discovery::encode(w)) ==
        "writer record: qos: inconsistent: ResourceLimits.max_samples must be > 0 or "
        "LENGTH_UNLIMITED, got 0");

  auto r = named<ReaderRecord>("T", "X");
  r.qos << sp::Engine(0, 1024, 1u << 20, sp::RdmcAlgorithm::CHAIN);
  CHECK(error_of<ReaderRecord>(spindle::discovery::encode(r)) ==
        "reader record: qos: inconsistent: Engine.window_size must be in 1..65536, got 0");

  r = named<ReaderRecord>("T", "X");
  r.qos << pol::Deadline(Duration(1, 0)) << pol::TimeBasedFilter(Duration(2, 0));
  CHECK(error_of<ReaderRecord>(spindle::discovery::encode(r)) ==
        "reader record: qos: inconsistent: Deadline.period (1s) < "
        "TimeBasedFilter.minimum_separation (2s)");
}

template <class Record>
std::optional<Record> decode_as(const Record& r, const Bytes& b, std::string& e) {
  return decode(r, b, e);
}

// Flips, overwrites, truncates, inserts and removes bytes of valid encodings. Every result
// must be decoded or rejected with a message; a decoded one must be consistent and be the
// only encoding of its record (the format is canonical). ASan/UBSan (the sanitize preset)
// catch any read out of bounds on the way.
TEST_CASE("discovery: mutated records are decoded or rejected, never misread",
          "[dcps][discovery]") {
  auto partitions = named<ReaderRecord>("T", "X");
  partitions.subscriber_qos << pol::Partition(dds::core::StringSeq{"a", "bb", "ccc"});
  const std::vector<Bytes> seeds = {spindle::discovery::encode(named<WriterRecord>("T", "X")),
                                    spindle::discovery::encode(named<ReaderRecord>("", "")),
                                    spindle::discovery::encode(full_writer()),
                                    spindle::discovery::encode(full_reader()),
                                    spindle::discovery::encode(partitions),
                                    spindle::discovery::encode(full_participant()),
                                    spindle::discovery::encode(full_topic())};
  std::mt19937_64 rng(0x5d15c0);
  auto below = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  constexpr std::uint8_t kInteresting[] = {0, 1, 2, 3, 4, 0x7f, 0x80, 0xfe, 0xff};
  int accepted = 0;
  int rejected = 0;
  int misread = 0;
  for (int i = 0; i < 5000; ++i) {
    Bytes b = seeds[below(seeds.size())];
    const auto mutations = 1 + below(3);
    for (std::size_t m = 0; m < mutations && !b.empty(); ++m) {
      const auto at = below(b.size());
      switch (below(6)) {
        case 0:
          b[at] ^= std::byte{static_cast<std::uint8_t>(1u << below(8))};
          break;
        case 1:
          b[at] = std::byte{kInteresting[below(std::size(kInteresting))]};
          break;
        case 2:
          b[at] = static_cast<std::byte>(below(256));
          break;
        case 3:
          b.resize(at);
          break;
        case 4:
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::byte>(below(256)));
          break;
        default:
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
          break;
      }
    }
    auto tally = [&](const auto& decoded, const std::string& error, std::string_view prefix) {
      if (decoded) {
        ++accepted;
        // Canonical among version-6 records; an older one re-encodes to the same record.
        const auto again = spindle::discovery::encode(*decoded);
        std::string e2;
        const bool same = b.at(0) == std::byte{spindle::discovery::kDiscoveryVersion}
                              ? again == b
                              : decode_as(*decoded, again, e2) == decoded;
        if (!error.empty() || !same || spindle::qos::find_inconsistency(decoded->qos)) ++misread;
      } else {
        ++rejected;
        if (!error.starts_with(prefix)) ++misread;
      }
    };
    std::string werror;
    std::string rerror;
    std::string perror;
    std::string terror;
    tally(spindle::discovery::decode_writer(b, werror), werror, "writer record: ");
    tally(spindle::discovery::decode_reader(b, rerror), rerror, "reader record: ");
    tally(spindle::discovery::decode_participant(b, perror), perror, "participant record: ");
    tally(spindle::discovery::decode_topic(b, terror), terror, "topic record: ");
  }
  CHECK(misread == 0);
  CHECK(accepted > 100);
  CHECK(rejected > 1000);
}

// The fuzzer's seed corpus is the encoding of these records; a change of format shows here
// first. SPINDLE_WRITE_CORPUS=1 rewrites the files (after a deliberate format change).
TEST_CASE("discovery: the fuzz seed corpus holds current encodings", "[dcps][discovery]") {
  auto partitions = named<WriterRecord>("Flight/State", "avionics::FlightState");
  partitions.publisher_qos << pol::Partition(dds::core::StringSeq{"cockpit", "*"});
  const std::pair<std::string, Bytes> seeds[] = {
      {"writer_default", spindle::discovery::encode(named<WriterRecord>("T", "X"))},
      {"reader_default", spindle::discovery::encode(named<ReaderRecord>("T", "X"))},
      {"writer_full", spindle::discovery::encode(full_writer())},
      {"reader_full", spindle::discovery::encode(full_reader())},
      {"writer_partitions", spindle::discovery::encode(partitions)},
      {"participant_full", spindle::discovery::encode(full_participant())},
      {"topic_full", spindle::discovery::encode(full_topic())},
  };
  const auto dir = std::filesystem::path(SPINDLE_SOURCE_DIR) / "tests/fuzz/corpus/discovery_record";
  const bool write = std::getenv("SPINDLE_WRITE_CORPUS") != nullptr;
  for (const auto& [name, bytes] : seeds) {
    INFO(name);
    const auto path = dir / name;
    if (write) {
      std::filesystem::create_directories(dir);
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()),  // NOLINT
                 static_cast<std::streamsize>(bytes.size()));
    }
    // read() with the file's size: GCC 12 at -O3 reports a false null dereference inside
    // <streambuf> for istreambuf_iterator.
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    REQUIRE_FALSE(ec);
    Bytes file(static_cast<std::size_t>(size));
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(file.data()),  // NOLINT
            static_cast<std::streamsize>(file.size()));
    CHECK(in.gcount() == static_cast<std::streamsize>(file.size()));
    CHECK(file == bytes);
  }
}

// A topic's type information: its record, and the pieces it travels in.
TEST_CASE("discovery: a type record round-trips and is cut into pieces that fit a slot",
          "[dcps][discovery]") {
  using spindle::discovery::TypeRecord;
  TypeRecord t{spindle::dcps::make_guid(9, 4), std::vector<std::uint8_t>(300, 7),
               std::vector<std::uint8_t>(2000, 9)};
  const auto bytes = spindle::discovery::encode(t);
  CHECK(bytes.size() == 10 + 4 + 300 + 4 + 2000);
  CHECK(bytes.at(0) == std::byte{spindle::discovery::kDiscoveryVersion});
  CHECK(bytes.at(1) == std::byte{5});
  std::string error;
  const auto back = spindle::discovery::decode_type(bytes, error);
  INFO(error);
  REQUIRE(back);
  CHECK(*back == t);

  const auto pieces = spindle::discovery::split_pieces(bytes, 1024);
  REQUIRE(pieces.size() == 3);  // 1016 bytes each at most
  for (const auto& p : pieces)
    CHECK(p.size() <= 1024);
  spindle::discovery::Pieces gather;
  CHECK_FALSE(gather.add(pieces[0], 1 << 20, error));
  CHECK_FALSE(gather.add(pieces[1], 1 << 20, error));
  const auto whole = gather.add(pieces[2], 1 << 20, error);
  REQUIRE(whole);
  CHECK(*whole == bytes);
  CHECK(error.empty());

  // Out of order, malformed, too large: dropped with what is wrong; piece 0 starts afresh.
  CHECK_FALSE(gather.add(pieces[1], 1 << 20, error));
  CHECK(error == "piece 1 of 3 where piece 0 of 0 was due");
  error.clear();
  CHECK_FALSE(gather.add(std::span(pieces[0]).first(5), 1 << 20, error));
  CHECK(error == "piece of 5 bytes, shorter than its 8-byte header");
  error.clear();
  CHECK_FALSE(gather.add(pieces[0], 100, error));
  CHECK(error == "record larger than 100 bytes");
  error.clear();
  CHECK_FALSE(gather.add(pieces[0], 1 << 20, error));
  CHECK_FALSE(gather.add(pieces[1], 1 << 20, error));
  CHECK(gather.add(pieces[2], 1 << 20, error));
  CHECK(error.empty());

  CHECK_THROWS_AS(spindle::discovery::encode(TypeRecord{1, {}, {1}}),
                  dds::core::InvalidArgumentError);
  auto empty_mapping = bytes;
  empty_mapping.resize(10 + 4 + 300 + 4);
  empty_mapping[10 + 4 + 300] = std::byte{0};
  empty_mapping[10 + 4 + 300 + 1] = std::byte{0};
  empty_mapping[10 + 4 + 300 + 2] = std::byte{0};
  empty_mapping[10 + 4 + 300 + 3] = std::byte{0};
  error.clear();
  CHECK_FALSE(spindle::discovery::decode_type(empty_mapping, error));
  CHECK(error == "type record: type_mapping: empty");
}

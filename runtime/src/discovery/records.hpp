// Discovery records: how a participant announces itself, its Topics and its DataWriters and
// DataReaders to every member of the domain. The record is the payload of an SMC slot whose
// SampleHeader (wire.hpp) has kind announce_participant, announce_topic, announce_writer or
// announce_reader. An endpoint's record carries everything a remote
// participant needs to match the entity and run its side of the protocol: topic and type
// names, and every policy of the entity's QoS and of its publisher's or subscriber's QoS,
// so the receiver can call spindle::qos::incompatible_policies() and partitions_match() and
// use the remote writer's lifespan, ownership strength, liveliness lease, and so on.
//
// Every participant decodes every record, and another process wrote the bytes, so decoding
// trusts nothing: it never reads out of bounds, allocates at most what the limits below
// allow, and on bad input returns nullopt with one message naming the field, the value and
// its offset ("reader record: qos.history.depth: 0 at offset 84 is below 1"). A record that
// decodes is also consistent (spindle::qos::find_inconsistency finds nothing), and the
// format is canonical: encode(decode(b)) == b for every accepted b.
//
// Format (version 4: version 2 plus data_representation, then the participant's process):
// little-endian, packed (no alignment, no
// padding); spec with the rationale in docs/dcps-wire.md, "Discovery records".
//
//    0         1         2                                       10
//   +---------+---------+---------------------------------------+
//   | version | kind    | guid (u64): node id << 32 | serial    |
//   | u8 = 2  | u8      |                                       |
//   +---------+---------+---------------------------------------+
//   10: topic_name str | type_name str | qos | group qos | topic_data | end (no trailing
//       bytes)
//
//   kind        1 writer record, 2 reader record (3 and 4: below)
//   qos         DataWriterQos (writer) or DataReaderQos (reader): the policies below, in
//               the order the QoS class lists them
//   group qos   PublisherQos (writer) or SubscriberQos (reader), likewise
//   topic_data  the TopicData policy of the endpoint's topic: value: bytes (version 2; the
//               built-in topics show it, DCPSPublication and DCPSSubscription)
//
//   str   u32 length | length bytes, no terminator    names: length <= 256
//   bytes u32 length | length bytes                    length <= 65536
//   dur   i32 sec | u32 nanosec                        sec >= 0 and nanosec < 1e9, or
//                                                      infinite: 0x7fffffff, 0x7fffffff
//   enum  u8, the enumerator's position in its PSM enumeration (VOLATILE = 0, ...)
//   bool  u8, 0 or 1
//   limit i32 >= -1 (-1 = LENGTH_UNLIMITED)
//
//   policy                 fields                                           writer reader group
//   user_data              value: bytes                                       1      1
//   durability             kind: enum 0..3                                    2      2
//   durability_service     service_cleanup_delay: dur, history_kind: enum     3
//                          0..1, history_depth: i32 (>= 1 with KEEP_LAST),
//                          max_samples, max_instances,
//                          max_samples_per_instance: limit
//   deadline               period: dur                                        4      3
//   latency_budget         duration: dur                                      5      4
//   liveliness             kind: enum 0..2, lease_duration: dur               6      5
//   reliability            kind: enum 0..1, max_blocking_time: dur            7      6
//   destination_order      kind: enum 0..1                                    8      7
//   history                kind: enum 0..1, depth: i32 (>= 1 with KEEP_LAST)  9      8
//   resource_limits        max_samples, max_instances,                       10      9
//                          max_samples_per_instance: limit
//   transport_priority     value: i32                                        11
//   lifespan               duration: dur                                     12
//   ownership              kind: enum 0..1                                   13     10
//   ownership_strength     value: i32                                        14
//   writer_data_lifecycle  autodispose_unregistered_instances: bool          15
//   time_based_filter      minimum_separation: dur                                  11
//   reader_data_lifecycle  autopurge_nowriter_samples_delay: dur,                   12
//                          autopurge_disposed_samples_delay: dur
//   consistency            kind: enum 0..3, fsync: enum 0..2,                16     13
//                          fsync_period: dur
//   engine                 window_size, max_payload, rdmc_block_size: u32,   17     14
//                          rdmc_algorithm: enum 0..3
//   data_representation    value: u32 count (<= 8), count x u8 (0 XCDR1,     18     15
//                          1 XML, 2 XCDR2); as the entity resolved it
//                          (writer: its encoding; reader: those it takes)
//   presentation           access_scope: enum 0..2, coherent_access: bool,                1
//                          ordered_access: bool
//   partition              names: u32 count (<= 64), count x str (<= 256)                 2
//   group_data             value: bytes                                                   3
//   entity_factory         autoenable_created_entities: bool                              4
//
// Participant and topic records (kinds 3 and 4) share the version, kind and guid bytes:
//
//   participant (3): guid = make_guid(node, 1) | qos: DomainParticipantQos = user_data,
//                    entity_factory | process: host str | pid u32 | name str | role u8
//                    (0 member, 1 client); the process section from version 4 on
//   topic (4):       guid = make_guid(node, serial) | topic_name str | type_name str |
//                    qos: TopicQos = topic_data, durability, durability_service, deadline,
//                    latency_budget, liveliness, reliability, destination_order, history,
//                    resource_limits, transport_priority, lifespan, ownership,
//                    consistency, engine, data_representation
//   type (5):        guid = the topic's | type_information bytes | type_mapping bytes
//                    (each 1 to kMaxTypeInfoBytes), sent in pieces (Pieces below)
//
// With default QoS (an empty DataRepresentation), a writer record is 169 bytes plus its two
// names, a reader record 151; as announced (naming its encodings) 1 byte more per id.
// Field paths in error messages are "<section>.<policy>.<field>" with the profile schema's
// keys (qos.history.depth, publisher_qos.partition.names[2], topic_name).
//
// Threading: plain data and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>

namespace spindle::discovery {

inline constexpr std::uint8_t kDiscoveryVersion = 6;
// Version 2 (before data_representation) is still read: durable logs keep writer records
// (an empty DataRepresentation: the type's choice); so are version 3 (before the participant
// record's process section: unknown host, pid and process), version 4 (before the writer
// record's max_sample: no bound) and version 5 (before its room: none asked). Records are
// written in version 6 only, and the format is canonical among them.
inline constexpr std::uint8_t kOldestDiscoveryVersion = 2;
// Record limits; a decoder rejects larger values before allocating anything for them.
inline constexpr std::size_t kMaxNameBytes = 256;              // topic, type and partition names
inline constexpr std::size_t kMaxPartitions = 64;              // names in one Partition policy
inline constexpr std::size_t kMaxDataBytes = 64 * 1024;        // UserData, GroupData, TopicData
inline constexpr std::size_t kMaxRepresentations = 8;          // ids in one DataRepresentation
inline constexpr std::size_t kMaxTypeInfoBytes = 1024 * 1024;  // TypeInformation, TypeMapping
// The largest type record: version, kind, guid, then the two byte sequences at their limit.
inline constexpr std::size_t kMaxTypeRecordBytes = 10 + 2 * (4 + kMaxTypeInfoBytes);

struct WriterRecord {
  std::uint64_t guid = 0;  // make_guid(node, serial), wire.hpp
  std::string topic_name;
  std::string type_name;
  dds::pub::qos::DataWriterQos qos;
  dds::pub::qos::PublisherQos publisher_qos;
  dds::core::policy::TopicData topic_data;  // its topic's
  // The largest sample it can write, encapsulated (its type's bound in its encoding, or the
  // native size of a loaned sample where larger); 0: no bound (an unbounded string or
  // sequence, a type known only at run time, or a publisher with coherent access, whose sets
  // travel as one message). Version 5; earlier records read as 0.
  std::uint64_t max_sample = 0;
  // Where max_sample is 0: the largest sample it has written or is writing, rounded up to a
  // power of two (0: none yet); the layout sizes the topic's RDMC space from it, so the space
  // grows as larger samples come (docs/dev/rdmc.md, "Under DCPS"). Version 6; earlier records
  // read as 0.
  std::uint64_t room = 0;
  friend bool operator==(const WriterRecord&, const WriterRecord&) = default;
};

struct ReaderRecord {
  std::uint64_t guid = 0;
  std::string topic_name;
  std::string type_name;
  dds::sub::qos::DataReaderQos qos;
  dds::sub::qos::SubscriberQos subscriber_qos;
  dds::core::policy::TopicData topic_data;  // its topic's
  friend bool operator==(const ReaderRecord&, const ReaderRecord&) = default;
};

// A DomainParticipant: what DCPSParticipant shows of a remote one.
// Where a participant runs, as `spindle ps` shows it (Cyclone DDS announces the same as
// __Hostname, __Pid and __ProcessName).
enum class ParticipantRole : std::uint8_t { member = 0, client = 1 };
struct ProcessInfo {
  std::string host;  // gethostname(); empty when unknown (a version-3 record)
  std::uint32_t pid = 0;
  std::string name;  // the executable's name (/proc/self/comm)
  ParticipantRole role = ParticipantRole::member;
  friend bool operator==(const ProcessInfo&, const ProcessInfo&) = default;
};

struct ParticipantRecord {
  std::uint64_t guid = 0;  // make_guid(node, 1): the participant's handle
  dds::domain::qos::DomainParticipantQos qos;
  ProcessInfo process;
  friend bool operator==(const ParticipantRecord&, const ParticipantRecord&) = default;
};

// A Topic: what DCPSTopic and dds::topic::discover show of a remote one.
struct TopicRecord {
  std::uint64_t guid = 0;  // make_guid(node, serial)
  std::string topic_name;
  std::string type_name;
  dds::topic::qos::TopicQos qos;
  friend bool operator==(const TopicRecord&, const TopicRecord&) = default;
};

// A Topic's type: its XTypes 1.3 TypeInformation and TypeMapping (XCDR2 little-endian, as
// <spindle/types/type_object.hpp> writes them), what a peer needs to read the topic without
// its generated code. Announced after the topic record; larger than a slot for most types,
// so it travels in pieces.
struct TypeRecord {
  std::uint64_t guid = 0;  // the topic's
  std::vector<std::uint8_t> type_information;
  std::vector<std::uint8_t> type_mapping;
  friend bool operator==(const TypeRecord&, const TypeRecord&) = default;
};

// A record split into pieces that fit `max_payload` bytes each (more than 8), and put back
// together on the other side: each piece is `u32 piece | u32 pieces | bytes` (little-endian),
// sent in order by one member, so a receiver sees them in order (atomic delivery).
[[nodiscard]] std::vector<std::vector<std::byte>> split_pieces(std::span<const std::byte> record,
                                                               std::size_t max_payload);
class Pieces {
 public:
  // Adds the next piece. Returns the whole record after its last piece; nullopt before, or
  // with `error` set when the piece is malformed, out of order or makes the record larger
  // than `max_bytes` (what was gathered is dropped; a later piece 0 starts afresh).
  std::optional<std::vector<std::byte>> add(std::span<const std::byte> piece, std::size_t max_bytes,
                                            std::string& error);

 private:
  std::uint32_t pieces_ = 0;
  std::uint32_t next_ = 0;
  std::vector<std::byte> bytes_;
};

// The record's bytes. The QoS should be consistent (the entity layer checks it before an
// entity exists); a name, partition list or byte sequence beyond the limits above throws
// dds::core::InvalidArgumentError naming the field, since no peer would accept the record.
[[nodiscard]] std::vector<std::byte> encode(const WriterRecord& r);
[[nodiscard]] std::vector<std::byte> encode(const ReaderRecord& r);
[[nodiscard]] std::vector<std::byte> encode(const ParticipantRecord& r);
[[nodiscard]] std::vector<std::byte> encode(const TopicRecord& r);
[[nodiscard]] std::vector<std::byte> encode(const TypeRecord& r);

// The record in `bytes`, or nullopt with `error` saying what is wrong (see above). `error`
// is left alone on success.
[[nodiscard]] std::optional<WriterRecord> decode_writer(std::span<const std::byte> bytes,
                                                        std::string& error);
[[nodiscard]] std::optional<ReaderRecord> decode_reader(std::span<const std::byte> bytes,
                                                        std::string& error);
[[nodiscard]] std::optional<ParticipantRecord> decode_participant(std::span<const std::byte> bytes,
                                                                  std::string& error);
[[nodiscard]] std::optional<TopicRecord> decode_topic(std::span<const std::byte> bytes,
                                                      std::string& error);
[[nodiscard]] std::optional<TypeRecord> decode_type(std::span<const std::byte> bytes,
                                                    std::string& error);

}  // namespace spindle::discovery

// What a participant knows of its domain, for tools (`spindle ls`, `ps`, `why`: docs/tools.md):
// every participant with where it runs, every Topic, DataWriter and DataReader with its whole
// QoS as discovery announced it, and why a writer and a reader do or do not match.
//
// The built-in topics (DCPSParticipant, DCPSPublication, ...) carry what the DDS
// specification lists; this adds what they leave out: the host, pid and process of each
// participant and its role, and the policies a built-in sample has no field for (history,
// resource limits, data representation, consistency, ...).
//
//   auto domain = spindle::inspect::snapshot(participant);
//   for (const auto& w : domain.writers)
//     for (const auto& r : domain.readers)
//       if (w.topic_name == r.topic_name && !spindle::inspect::explain(w, r).matched) ...
//
// Threading: snapshot() may be called from any thread; it copies under the participant's
// lock and never waits on the domain.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>

namespace dds::domain {
class DomainParticipant;
}

namespace spindle::inspect {

// A member of the domain's group, or an external client served through a relay
// (docs/membership.md).
enum class Role : std::uint8_t { member, client };

struct Participant {
  std::uint64_t handle = 0;  // its InstanceHandle's value: node id << 32 | 1
  std::uint32_t node_id = 0;
  std::string host;       // empty when its record did not say (an older version)
  std::uint32_t pid = 0;  // 0 when unknown
  std::string process;    // the executable's name
  Role role = Role::member;
  bool local = false;  // the participant snapshot() was called on
  dds::domain::qos::DomainParticipantQos qos;
};

struct Topic {
  std::uint64_t handle = 0;
  std::uint32_t node_id = 0;  // of the participant that created it
  std::string name;
  std::string type_name;
  bool has_type_information = false;  // whether its type travels with it (docs/types.md)
  dds::topic::qos::TopicQos qos;
};

struct Writer {
  std::uint64_t handle = 0;
  std::uint32_t node_id = 0;
  std::string topic_name;
  std::string type_name;
  dds::pub::qos::DataWriterQos qos;
  dds::pub::qos::PublisherQos publisher_qos;  // partitions, presentation
};

struct Reader {
  std::uint64_t handle = 0;
  std::uint32_t node_id = 0;
  std::string topic_name;
  std::string type_name;
  dds::sub::qos::DataReaderQos qos;
  dds::sub::qos::SubscriberQos subscriber_qos;
};

struct Snapshot {
  std::uint32_t domain_id = 0;
  std::vector<Participant> participants;  // by node id
  std::vector<Topic> topics;              // by handle
  std::vector<Writer> writers;            // by handle
  std::vector<Reader> readers;            // by handle
};

// Every policy field of a QoS as a QoS profile file writes it, in the schema's order
// (qos-profiles/schema.md): {"reliability.kind", "reliable"}, {"deadline.period", "inf"}.
using Fields = std::vector<std::pair<std::string, std::string>>;
[[nodiscard]] Fields fields(const dds::domain::qos::DomainParticipantQos& q);
[[nodiscard]] Fields fields(const dds::topic::qos::TopicQos& q);
[[nodiscard]] Fields fields(const dds::pub::qos::PublisherQos& q);
[[nodiscard]] Fields fields(const dds::sub::qos::SubscriberQos& q);
[[nodiscard]] Fields fields(const dds::pub::qos::DataWriterQos& q);
[[nodiscard]] Fields fields(const dds::sub::qos::DataReaderQos& q);

// What `participant` knows of its domain now. Participants, Topics and endpoints of every
// member, this participant's own included (its built-in readers are not endpoints).
[[nodiscard]] Snapshot snapshot(const dds::domain::DomainParticipant& participant);

// One rule of the match between a writer and a reader: what the writer offers, what the
// reader requests (as the QoS profile schema writes values: "RELIABLE", "1.5 s"), and whether
// the rule holds.
struct Check {
  std::string rule;  // "type", "partition", "reliability", ..., "consistency"
  std::string offered;
  std::string requested;
  bool ok = true;
};

struct Explanation {
  bool matched = false;  // every check holds: the runtime matches the pair
  std::vector<Check> checks;
};

// Why `w` and `r` (of one topic name) match or not: the type name, the partitions, then
// each requested/offered policy (durability, deadline, latency budget, ownership, liveliness,
// reliability, destination order, presentation, data representation, consistency). The
// verdict is the rule the runtime matches endpoints by.
[[nodiscard]] Explanation explain(const Writer& w, const Reader& r);

}  // namespace spindle::inspect

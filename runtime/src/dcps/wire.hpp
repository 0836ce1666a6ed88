// What a DCPS sample looks like inside an SMC slot (docs/dcps-wire.md): a fixed header,
// then the sample's encapsulated CDR (data, dispose, unregister) or a builtin message
// (discovery, liveliness). Topics that map to the same subgroup are multiplexed by the
// header's topic id; a reader keeps what its topic id and matched writers select.
//
//   SampleHeader (56 bytes, host byte order: every member of a domain shares it)
//   +--------+-----+------+----------+---------------------+---------------------+
//   | magic  | ver | kind | flags    | topic (u64)         | writer (u64 guid)   |
//   | u16    | u8  | u8   | u32      |                     |                     |
//   +--------+-----+------+----------+---------------------+---------------------+
//   | source timestamp (i64 ns)      | seq (u64)           | key hash (16 bytes) |
//   +--------------------------------+---------------------+---------------------+
//   then `payload` bytes up to the message's size (its slot's, or its record's where several
//   share a slot: group/packed.hpp).
//
// `seq` numbers a writer's messages (data, dispose, unregister; each message of a coherent
// set): 1 for its first, one more for each it sent. A reader that sees a writer's seq jump
// counts the messages between as lost (SAMPLE_LOST); 0 on builtin messages.
//
// Everything read from a slot is untrusted (another process wrote it): parse() checks the
// size, magic, version and kind and says what is wrong.
//
// Threading: plain data and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/cdr/serialize.hpp>

#include "group/message.hpp"

namespace spindle::dcps {

inline constexpr std::uint16_t kWireMagic = 0x5344;  // "SD"
inline constexpr std::uint8_t kWireVersion = 2;

enum class SampleKind : std::uint8_t {
  nothing = 0,  // a slot whose writer failed after reserving it; skipped
  data = 1,
  dispose = 2,
  unregister = 3,
  // A coherent set (Presentation coherent_access): the payload is the set's messages, each
  // `u32 length (host byte order) | SampleHeader | payload` of kind data, dispose or
  // unregister, back to back. Delivered as one message, so every member delivers all of it
  // or none, at one place of the order. TOPIC scope: topic and writer are the set's writer's.
  coherent_set = 4,
  // Builtin messages (topic = 0): the payload is a discovery record (discovery/records.hpp).
  announce_writer = 16,
  announce_reader = 17,
  retire_writer = 18,
  retire_reader = 19,
  liveliness = 20,            // a writer's manual liveliness assertion (no payload)
  participant_left = 21,      // the sending participant is closing (no payload)
  announce_participant = 22,  // the sending participant's record (its QoS)
  announce_topic = 23,        // a Topic's record (names and TopicQos)
  retire_topic = 24,          // a Topic closed (writer = its guid; no payload)
  // An external client's relay (docs/membership.md, "External clients"): from here on the
  // sender relays for the client whose node id is the payload (u32, little-endian), or no
  // longer does. writer = make_guid(sender, 0).
  client_attached = 25,
  client_detached = 26,
  // A retained topic's history sent again to members that missed some of its messages
  // (docs/storage.md, "Refresh"). writer = make_guid(sender, 0).
  //  refresh_request: the sender's history of these topics has a hole; payload u64 topic ids
  //    (little-endian). From the next view boundary on, one member sends it theirs.
  //  refresh_state: one piece of a history as it stood at the boundary into view `epoch`;
  //    payload u64 epoch | u64 topic | u32 piece | u32 pieces | u32 n | u32 target node × n |
  //    bytes (the pieces' bytes, back to back: u32 length | retained entry, repeated).
  refresh_request = 27,
  refresh_state = 28,
  // The latest changes per instance of a member's RELIABLE KEEP_LAST writers, sent to a member
  // whose reliable readers missed some of the topic's messages while it was left behind
  // (docs/dcps.md, "Repair"). writer = make_guid(sender, 0).
  //  repair_request: payload u64 topic ids (little-endian): the sender's readers of these
  //    topics missed messages; every member with such writers of them sends a repair.
  //  repair: one piece, in refresh_state's layout (its epoch: the view it was cut in); the
  //    pieces' bytes: u32 n | (u64 reader | u64 writer | u64 floor) x n, then u32 length |
  //    u64 epoch | u32 subgroup | i64 order | message (header and payload), repeated: each
  //    message with its place in the total order as delivered at the sender. A reader takes a
  //    writer's message only when its number is above the floor the writer gave that reader (the
  //    writer's last number when it matched it).
  repair_request = 29,
  repair = 30,
  // A Topic's type information (discovery/records.hpp, TypeRecord), sent after its topic
  // record in pieces that each fit a slot: payload u32 piece | u32 pieces | bytes, the
  // pieces' bytes back to back being the encoded TypeRecord. writer = the topic's guid.
  announce_type = 31,
  // A secured member holds this permissions document (docs/security.md, "Changing the
  // permissions"): payload its SHA-256, 64 hex characters. writer = make_guid(sender, 0).
  permissions = 32,
};
[[nodiscard]] std::string_view to_string(SampleKind k) noexcept;

// Header flags.
// The payload is the sample's own bytes (a loaned sample of a trivially copyable type,
// built in the slot), not CDR. Members of a domain share their byte order and layout.
inline constexpr std::uint32_t kFlagNative = 1u << 1;

struct SampleHeader {
  std::uint16_t magic = kWireMagic;
  std::uint8_t version = kWireVersion;
  SampleKind kind = SampleKind::data;
  std::uint32_t flags = 0;
  std::uint64_t topic = 0;
  std::uint64_t writer = 0;
  std::int64_t source_time_ns = 0;
  std::uint64_t seq = 0;
  cdr::KeyHash key{};
};
static_assert(sizeof(SampleHeader) == 56);

struct ParsedSample {
  SampleHeader header;
  std::span<const std::byte> payload;
  // Messages of its sender this member skipped right before it (a listener lapped:
  // group::Message::lost_before): SAMPLE_LOST for the readers that take it.
  std::uint64_t lost_before = 0;
  bool listened = false;  // group::Message::listened
  // Its place in the subgroup's total order (atomic): the view it was delivered in, the
  // subgroup, and its global sequence number there (group::Message::seq); order -1: none
  // (unordered). Places in one view compare only within one subgroup.
  std::uint64_t epoch = 0;
  std::uint32_t subgroup = 0;
  std::int64_t order = -1;
  // The message it lies in, where that may be held in place past the delivery upcall
  // (group::Pins: zero-copy receive); null otherwise. Valid during the upcall.
  const group::Message* source = nullptr;
};

// Checks and splits a slot's bytes; on failure returns nullopt and says why in `error`.
[[nodiscard]] std::optional<ParsedSample> parse(std::span<const std::byte> slot,
                                                std::string& error);
// The messages of a coherent set's payload, each checked as parse() does and of kind data,
// dispose or unregister; false (and `error`, naming the message's index and offset) if any
// is not — the whole set is then refused. `out` is cleared first.
[[nodiscard]] bool parse_set(std::span<const std::byte> payload, std::vector<ParsedSample>& out,
                             std::string& error);
// Appends one message of a coherent set to `set` (the payload of a coherent_set message).
void append_to_set(std::vector<std::byte>& set, const SampleHeader& header,
                   std::span<const std::byte> payload);

// A topic's id on the wire: FNV-1a 64 of its name (0 is reserved for builtin messages).
[[nodiscard]] std::uint64_t topic_id(std::string_view name) noexcept;

// Writer/reader guids: the node id in the high half, a per-participant serial below.
[[nodiscard]] constexpr std::uint64_t make_guid(std::uint32_t node, std::uint32_t serial) noexcept {
  return (std::uint64_t{node} << 32) | serial;
}
[[nodiscard]] constexpr std::uint32_t guid_node(std::uint64_t guid) noexcept {
  return static_cast<std::uint32_t>(guid >> 32);
}

}  // namespace spindle::dcps

// Slot header parsing (see wire.hpp).
#include "dcps/wire.hpp"

namespace spindle::dcps {

std::string_view to_string(SampleKind k) noexcept {
  switch (k) {
    case SampleKind::nothing:
      return "nothing";
    case SampleKind::data:
      return "data";
    case SampleKind::dispose:
      return "dispose";
    case SampleKind::unregister:
      return "unregister";
    case SampleKind::coherent_set:
      return "coherent_set";
    case SampleKind::announce_writer:
      return "announce_writer";
    case SampleKind::announce_reader:
      return "announce_reader";
    case SampleKind::retire_writer:
      return "retire_writer";
    case SampleKind::retire_reader:
      return "retire_reader";
    case SampleKind::liveliness:
      return "liveliness";
    case SampleKind::participant_left:
      return "participant_left";
    case SampleKind::announce_participant:
      return "announce_participant";
    case SampleKind::announce_topic:
      return "announce_topic";
    case SampleKind::retire_topic:
      return "retire_topic";
    case SampleKind::client_attached:
      return "client_attached";
    case SampleKind::client_detached:
      return "client_detached";
    case SampleKind::refresh_request:
      return "refresh_request";
    case SampleKind::refresh_state:
      return "refresh_state";
    case SampleKind::repair_request:
      return "repair_request";
    case SampleKind::repair:
      return "repair";
    case SampleKind::announce_type:
      return "announce_type";
    case SampleKind::permissions:
      return "permissions";
  }
  return "unknown";
}

namespace {
bool known(std::uint8_t k) noexcept {
  switch (static_cast<SampleKind>(k)) {
    case SampleKind::nothing:
    case SampleKind::data:
    case SampleKind::dispose:
    case SampleKind::unregister:
    case SampleKind::coherent_set:
    case SampleKind::announce_writer:
    case SampleKind::announce_reader:
    case SampleKind::retire_writer:
    case SampleKind::retire_reader:
    case SampleKind::liveliness:
    case SampleKind::participant_left:
    case SampleKind::announce_participant:
    case SampleKind::announce_topic:
    case SampleKind::retire_topic:
    case SampleKind::client_attached:
    case SampleKind::client_detached:
    case SampleKind::refresh_request:
    case SampleKind::refresh_state:
    case SampleKind::repair_request:
    case SampleKind::repair:
    case SampleKind::announce_type:
    case SampleKind::permissions:
      return true;
  }
  return false;
}
}  // namespace

std::optional<ParsedSample> parse(std::span<const std::byte> slot, std::string& error) {
  if (slot.size() < sizeof(SampleHeader)) {
    error = "message of " + std::to_string(slot.size()) + " bytes is shorter than the " +
            std::to_string(sizeof(SampleHeader)) + "-byte sample header";
    return std::nullopt;
  }
  ParsedSample p;
  std::memcpy(&p.header, slot.data(), sizeof p.header);
  if (p.header.magic != kWireMagic) {
    error = "bad magic " + std::to_string(p.header.magic) + " (not a Spindle DDS sample)";
    return std::nullopt;
  }
  if (p.header.version != kWireVersion) {
    error = "sample format version " + std::to_string(p.header.version) + ", this node reads " +
            std::to_string(kWireVersion);
    return std::nullopt;
  }
  const auto kind = static_cast<std::uint8_t>(p.header.kind);
  if (!known(kind)) {
    error = "unknown sample kind " + std::to_string(kind);
    return std::nullopt;
  }
  const bool builtin = kind >= static_cast<std::uint8_t>(SampleKind::announce_writer);
  if (builtin != (p.header.topic == 0) && p.header.kind != SampleKind::nothing) {
    error = builtin ? "builtin message with a topic id" : "sample without a topic id";
    return std::nullopt;
  }
  p.payload = slot.subspan(sizeof(SampleHeader));
  return p;
}

bool parse_set(std::span<const std::byte> payload, std::vector<ParsedSample>& out,
               std::string& error) {
  out.clear();
  std::size_t off = 0;
  while (off < payload.size()) {
    const auto where = "coherent set message " + std::to_string(out.size()) + " at offset " +
                       std::to_string(off) + ": ";
    if (payload.size() - off < sizeof(std::uint32_t)) {
      error = where + "truncated length";
      return false;
    }
    std::uint32_t length = 0;
    std::memcpy(&length, payload.data() + off, sizeof length);
    off += sizeof length;
    if (length > payload.size() - off) {
      error = where + "length " + std::to_string(length) + " runs past the set's end";
      return false;
    }
    auto inner = parse(payload.subspan(off, length), error);
    if (!inner) {
      error = where + error;
      return false;
    }
    const auto k = inner->header.kind;
    if (k != SampleKind::data && k != SampleKind::dispose && k != SampleKind::unregister) {
      error = where + "a " + std::string(to_string(k)) + " message inside a coherent set";
      return false;
    }
    out.push_back(*inner);
    off += length;
  }
  return true;
}

void append_to_set(std::vector<std::byte>& set, const SampleHeader& header,
                   std::span<const std::byte> payload) {
  const auto length = static_cast<std::uint32_t>(sizeof header + payload.size());
  const std::size_t at = set.size();
  set.resize(at + sizeof length + length);
  std::memcpy(set.data() + at, &length, sizeof length);
  std::memcpy(set.data() + at + sizeof length, &header, sizeof header);
  if (!payload.empty())
    std::memcpy(set.data() + at + sizeof length + sizeof header, payload.data(), payload.size());
}

std::uint64_t topic_id(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h == 0 ? 1 : h;
}

}  // namespace spindle::dcps

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
    case SampleKind::announce_writer:
    case SampleKind::announce_reader:
    case SampleKind::retire_writer:
    case SampleKind::retire_reader:
    case SampleKind::liveliness:
    case SampleKind::participant_left:
    case SampleKind::announce_participant:
    case SampleKind::announce_topic:
    case SampleKind::retire_topic:
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

std::uint64_t topic_id(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h == 0 ? 1 : h;
}

}  // namespace spindle::dcps

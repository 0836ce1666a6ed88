// The link between an external client and the member that relays for it (docs/membership.md,
// "External clients", has the byte format): frames over one TCP connection.
//
//   frame:  u32 length (of what follows, little-endian) | u8 type | body
//
//   client -> relay                        relay -> client
//   HELLO    magic, domain, its node id,   WELCOME  relay node, largest message,
//            settings                               view (YAML), state transfer
//   PUBLISH  channel, message bytes
//   WANT     topic, what of it (none,      REFUSED  why
//            all, its own messages)
//   BYE                                    DELIVER  messages, in the relay's delivery order
//                                          VIEW     a view the relay installed (YAML)
//                                          LOST     a member the relay suspected
//                                          HALT     the relay stopped (majority rule)
//                                          ACKED    writer guid, messages delivered at the relay
//
// Both sides decode what the other sent without trusting it: a decoder never reads past the
// frame, and says what is wrong (the type, the field, the offset); a member that gets a bad
// frame from a client drops that client, a client that gets one from its relay halts.
//
// Threading: plain data and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "group/layout.hpp"
#include "group/message.hpp"

namespace spindle::client {

inline constexpr std::string_view kClientMagic = "SPINDLE-CLIENT 1";
// Bytes of a frame's length and type.
inline constexpr std::size_t kFrameHead = 5;
// A frame's length is refused past this (a frame from a client: its largest message; to a
// client: the relay's largest message, or its view and state).
inline constexpr std::size_t kMaxFrame = std::size_t{1} << 31;

enum class FrameType : std::uint8_t {
  hello = 1,
  welcome = 2,
  refused = 3,
  deliver = 4,
  view = 5,
  lost = 6,
  halt = 7,
  acked = 8,
  publish = 16,
  want = 17,
  bye = 18,
};
[[nodiscard]] std::string_view to_string(FrameType t) noexcept;

struct Hello {
  std::uint32_t domain_id = 0;
  std::uint32_t node = 0;  // the client's node id: the node of its entities' guids
  std::vector<std::pair<std::string, std::string>> settings;  // what must agree
};

struct Welcome {
  std::uint32_t relay = 0;  // the relay's node id
  std::uint64_t max_large_message = 0;
  std::string view_yaml;
  std::vector<std::byte> state;  // the relay participant's state transfer
};

struct Lost {
  std::uint32_t node = 0;
  bool left = false;
  std::string why;
};

struct Acked {
  std::uint64_t writer = 0;
  std::uint64_t count = 0;
};

struct Publish {
  group::Channel channel;
  std::span<const std::byte> message;  // into the frame
};

// One frame's bytes, head included (the length is filled in by finish()).
class FrameWriter {
 public:
  explicit FrameWriter(FrameType t);
  void u8(std::uint8_t v) { out_.push_back(std::byte{v}); }
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void str(std::string_view s);
  void bytes(std::span<const std::byte> b);  // u64 length | bytes
  // The frame, its length set.
  [[nodiscard]] std::vector<std::byte>& finish();

 private:
  std::vector<std::byte> out_;
};

// Reads a frame's body; every read checks the bytes left and records the first failure.
class FrameReader {
 public:
  FrameReader(FrameType t, std::span<const std::byte> body) : type_(t), body_(body) {}
  std::uint8_t u8(const char* field);
  std::uint32_t u32(const char* field);
  std::uint64_t u64(const char* field);
  std::string str(const char* field, std::size_t max);
  std::span<const std::byte> bytes(const char* field);
  // True when every read succeeded and nothing is left; else `error` says what failed.
  [[nodiscard]] bool done(std::string& error);
  [[nodiscard]] bool ok() const noexcept { return error_.empty(); }

 private:
  bool take(std::size_t n, const char* field);
  FrameType type_;
  std::span<const std::byte> body_;
  std::size_t at_ = 0;
  std::string error_;
};

[[nodiscard]] std::vector<std::byte> encode(const Hello& h);
[[nodiscard]] std::vector<std::byte> encode(const Welcome& w);
[[nodiscard]] std::vector<std::byte> encode_refused(std::string_view why);
[[nodiscard]] std::vector<std::byte> encode_view(std::string_view yaml);
[[nodiscard]] std::vector<std::byte> encode(const Lost& l);
[[nodiscard]] std::vector<std::byte> encode_halt(std::string_view why);
[[nodiscard]] std::vector<std::byte> encode(const Acked& a);
[[nodiscard]] std::vector<std::byte> encode_want(std::uint64_t topic, group::Want want);
[[nodiscard]] std::vector<std::byte> encode_bye();
// A PUBLISH frame's head and channel; the message's bytes follow it on the wire
// (`message_size` of them), so that a large sample is not copied.
[[nodiscard]] std::vector<std::byte> encode_publish_head(const group::Channel& channel,
                                                         std::size_t message_size);
// Appends one message to a DELIVER frame under construction (begin_deliver, then
// finish()).
void begin_deliver(FrameWriter& w, std::uint32_t count);
void add_delivered(FrameWriter& w, const group::Message& m);

[[nodiscard]] std::optional<Hello> decode_hello(std::span<const std::byte> body,
                                                std::string& error);
[[nodiscard]] std::optional<Welcome> decode_welcome(std::span<const std::byte> body,
                                                    std::string& error);
[[nodiscard]] std::optional<std::string> decode_text(FrameType t, std::span<const std::byte> body,
                                                     std::string& error);
[[nodiscard]] std::optional<Lost> decode_lost(std::span<const std::byte> body, std::string& error);
[[nodiscard]] std::optional<Acked> decode_acked(std::span<const std::byte> body,
                                                std::string& error);
[[nodiscard]] std::optional<std::pair<std::uint64_t, group::Want>> decode_want(
    std::span<const std::byte> body, std::string& error);
[[nodiscard]] std::optional<Publish> decode_publish(std::span<const std::byte> body,
                                                    std::string& error);
// The messages of a DELIVER frame; their payloads point into `body`.
[[nodiscard]] bool decode_deliver(std::span<const std::byte> body, std::vector<group::Message>& out,
                                  std::string& error);

}  // namespace spindle::client

// TCP frame format and its incremental decoder. The decoder is the only code that turns
// bytes from the network into writes to registered memory, so it validates every field
// before touching memory (STYLE 7); the fuzz target tests/fuzz/tcp_frames.cpp drives it.
// Spec with the rationale: docs/transport-tcp.md.
//
// Threading: a FrameDecoder belongs to one connection and is used by the transport's I/O
// thread only. encode_* functions are pure and may be called from any thread.
//
// Every frame is a 24-byte header, little-endian, then `length` payload bytes:
//
//    0       1       2               4                               8
//   +-------+-------+---------------+-------------------------------+
//   | type  | flags | reserved (0)  | arg: region (WRITE),          |
//   | (u8)  | (0)   | (u16)         |      immediate (BLOCK),       |
//   |       |       |               |      node id (HELLO), else 0  |
//   +-------+-------+---------------+-------------------------------+
//   8                                                              16
//   | offset (u64): WRITE byte offset in the region; HELLO view      |
//   |               epoch; otherwise 0                               |
//   +---------------------------------------------------------------+
//   16                              20                             24
//   | length (u32): payload bytes   | check (u32): FNV-1a of 0..19  |
//   +-------------------------------+-------------------------------+
//
//   type 1 HELLO     payload: "SPNDLTCP" | version u32 = 3 | count u32 | domain u32 |
//                             settings_bytes u32 | nonce u64 (its join nonce, or 0) |
//                             count x { region u32 | 0 u32 | size u64 }   (count <= 4096)
//                             settings: { name_len u8 | value_len u8 | name | value }...
//                             (settings_bytes <= 4096; names 1..255 printable bytes, unique)
//   type 2 WRITE     payload: bytes for [offset, offset+length) of region arg, inside
//                    what the sender may write there (restrict_writes) or refused
//   type 3 BLOCK     payload: block bytes; lands in the oldest receive posted for the peer
//   type 4 HEARTBEAT no payload; keeps the peer from suspecting us while idle
//   type 5 GOODBYE   no payload; clean disconnect (the peer reports peer_left)
//
// The first frame each way is HELLO; HELLO never comes again on that stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::transport::tcp_frames {

// Little-endian integers on the stream: every field of a frame (and of a secured stream's
// unit header, secure_stream.hpp).
template <class T>
void put(std::byte* p, T v) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
  }
}

template <class T>
[[nodiscard]] T get(const std::byte* p) noexcept {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    v = static_cast<T>(v | (static_cast<T>(static_cast<std::uint8_t>(p[i])) << (8 * i)));
  }
  return v;
}

inline constexpr std::size_t kHeaderSize = 24;
inline constexpr std::size_t kHelloFixed = 32;
inline constexpr std::size_t kHelloEntry = 16;
inline constexpr std::uint32_t kMaxHelloRegions = 4096;
inline constexpr std::uint32_t kMaxHelloSettingsBytes = 4096;
inline constexpr std::uint32_t kVersion = 3;
inline constexpr char kMagic[8] = {'S', 'P', 'N', 'D', 'L', 'T', 'C', 'P'};

enum class FrameType : std::uint8_t { hello = 1, write = 2, block = 3, heartbeat = 4, goodbye = 5 };

struct FrameHeader {
  FrameType type = FrameType::heartbeat;
  std::uint32_t arg = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

// Appends a header (with its check word) to `out`.
void encode_header(std::vector<std::byte>& out, const FrameHeader& h);
// What a HELLO says: who, which view, which domain, the sender's regions and the
// settings every member must share.
struct Hello {
  NodeId node = 0;
  std::uint64_t epoch = 0;
  std::uint32_t domain = 0;
  // The sender's join nonce (NodeAddress::nonce): a stream that claims a member without
  // the member's nonce is not bound to it. 0: none.
  std::uint64_t nonce = 0;
  std::vector<RegionDescriptor> regions;
  std::vector<AgreedSetting> settings;
};

// Appends a whole HELLO frame. Throws std::invalid_argument if the settings do not fit
// the format (a configuration error of the sender, caught before anything is sent).
void encode_hello(std::vector<std::byte>& out, const Hello& hello);
// Shorthand for a HELLO of domain 0 without settings.
void encode_hello(std::vector<std::byte>& out, NodeId node, std::uint64_t epoch,
                  std::span<const RegionDescriptor> regions);
// Checks that `settings` can travel in a HELLO; an empty string if so, else why not.
[[nodiscard]] std::string check_settings(std::span<const AgreedSetting> settings);

// What the decoder asks of its connection.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Local region memory by id, or an empty span if unknown.
  [[nodiscard]] virtual std::span<std::byte> region(RegionId id) = 0;
  // A WRITE inside the region's bounds: empty if the stream's peer may write those bytes,
  // else why not (the frame is refused as foreign_write: rows belong to their owners).
  [[nodiscard]] virtual std::string refuse_write(RegionId /*id*/, std::uint64_t /*offset*/,
                                                 std::uint32_t /*length*/) {
    return {};
  }
  virtual void on_hello(const Hello& hello) = 0;
  // A BLOCK of `length` bytes arrived: the destination (at least `length` bytes), or
  // std::nullopt to pause (no receive posted; call feed() again later), or an empty span
  // with overflow=true if the posted receive is too small.
  struct BlockTarget {
    bool ready = false;
    bool overflow = false;
    std::span<std::byte> dest;
    std::uint32_t capacity = 0;
  };
  [[nodiscard]] virtual BlockTarget on_block_begin(std::uint32_t length,
                                                   std::uint32_t immediate) = 0;
  virtual void on_block_end() = 0;
  virtual void on_goodbye() = 0;
};

enum class DecodeState : std::uint8_t { ok, paused, error };

struct DecodeResult {
  std::size_t consumed = 0;
  DecodeState state = DecodeState::ok;
  SuspicionReason reason = SuspicionReason::malformed_frame;
  std::string detail;
};

class FrameDecoder {
 public:
  explicit FrameDecoder(std::uint32_t max_block) noexcept : max_block_(max_block) {}

  // Consumes bytes until they run out, a block must wait for a receive (paused), or a
  // frame is invalid (error: the connection must be closed; nothing was written out of
  // bounds). After an error the decoder stays in error.
  DecodeResult feed(std::span<const std::byte> in, FrameSink& sink);
  // True if the stream stopped inside a frame (EOF now means a truncated frame).
  [[nodiscard]] bool mid_frame() const noexcept { return stage_ != Stage::header || have_ > 0; }
  [[nodiscard]] bool handshaken() const noexcept { return hello_seen_; }
  // After an error in the stream's first frame, a HELLO with a valid header: the node id it
  // claimed (so a listener can name whose HELLO it refused, e.g. of another version).
  [[nodiscard]] std::optional<NodeId> refused_hello_node() const noexcept {
    if (stage_ != Stage::failed || hello_seen_ || h_.type != FrameType::hello) return std::nullopt;
    return h_.arg;
  }

 private:
  enum class Stage : std::uint8_t { header, hello, write, block, failed };
  DecodeResult fail(std::size_t consumed, SuspicionReason reason, std::string detail);
  bool start_frame(DecodeResult& r, std::size_t consumed, FrameSink& sink);

  std::uint32_t max_block_;
  Stage stage_ = Stage::header;
  std::byte header_[kHeaderSize] = {};
  std::size_t have_ = 0;  // header bytes collected
  FrameHeader h_;
  std::uint64_t remaining_ = 0;
  std::byte* dest_ = nullptr;
  // A WRITE of at most kWholeWrite bytes split across reads is collected here and applied
  // whole: an 8-byte counter (an SST guard) must never be seen torn, half old, half new.
  static constexpr std::size_t kWholeWrite = 64;
  std::byte small_[kWholeWrite] = {};
  bool staged_ = false;
  std::vector<std::byte> hello_;
  bool hello_seen_ = false;
  bool block_pending_ = false;  // header of a BLOCK parsed, waiting for a receive
};

}  // namespace spindle::transport::tcp_frames

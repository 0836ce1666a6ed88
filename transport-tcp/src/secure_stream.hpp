// Secured TCP streams (docs/transport-tcp.md, "Secured streams"): a TLS 1.3 handshake over
// memory BIOs authenticates both ends with the domain's certificates, then every frame
// travels inside AES-256-GCM records keyed from that handshake (SSL_export_keying_material).
// The transport owns the socket: it reads and writes the bytes, this code only turns them
// into handshake steps and records. After the handshake the SSL object is freed; only two
// EVP contexts per stream remain.
//
// On the stream, after TCP connect, every unit starts with a little-endian u32:
//
//   bit 31     bits 30..0
//  +---------+-----------------+
//  | H       | length          |
//  +---------+-----------------+
//   H = 1: a handshake unit:  [u32 H|length][length bytes of TLS handshake records]
//          1 <= length, and at most kMaxHandshakeBytes in all per direction
//   H = 0: a sealed record:   [u32 length][length bytes of ciphertext][16-byte GCM tag]
//          1 <= length <= kMaxRecord; AAD = the 4 header bytes;
//          nonce = IV xor (0^32 || record counter, u64 big-endian), the counter counting
//          this direction's records from 0
//
// Handshake units come first (the dialer is the TLS client); a record before the handshake
// finished, or a handshake unit after it, is malformed. The plaintext of the records, in
// order, is the frame stream of frame.hpp (HELLO first).
//
// Threading: a Handshake and an Opener belong to the stream's I/O thread; a Sealer is used
// under the lock of the peer whose queue it seals (the caller's thread or the I/O thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

using SSL = struct ssl_st;
using EVP_CIPHER_CTX = struct evp_cipher_ctx_st;

namespace spindle::security {
class Credentials;
struct PeerIdentity;
}  // namespace spindle::security

namespace spindle::transport::tcp_secure {

inline constexpr std::size_t kUnitHeader = 4;
inline constexpr std::size_t kTag = 16;
inline constexpr std::size_t kIv = 12;
inline constexpr std::size_t kKey = 32;
inline constexpr std::uint32_t kHandshakeBit = 0x8000'0000U;
// What one direction's handshake may carry in all (a certificate chain fits many times).
inline constexpr std::size_t kMaxHandshakeBytes = std::size_t{64} << 10;
// The longest record a receiver accepts (plaintext bytes).
inline constexpr std::size_t kMaxRecord = std::size_t{1} << 20;
// The longest record a sender makes: a receiver needs this much buffer per record only.
inline constexpr std::size_t kSealChunk = std::size_t{16} << 10;
inline constexpr const char* kExporterLabel = "EXPORTER-spindle-tcp-frames";

struct Unit {
  bool handshake = false;
  std::uint32_t length = 0;
  // Bytes of the whole unit on the stream, header (and tag) included.
  [[nodiscard]] std::size_t wire() const noexcept {
    return kUnitHeader + length + (handshake ? 0 : kTag);
  }
};
[[nodiscard]] Unit parse_unit(const std::byte* header) noexcept;

// One direction's AEAD: AES-256-GCM with a per-record nonce from a counter.
class Sealer {
 public:
  Sealer(std::span<const std::byte, kKey> key, std::span<const std::byte, kIv> iv);
  ~Sealer();
  Sealer(const Sealer&) = delete;
  Sealer& operator=(const Sealer&) = delete;
  // Appends `plain` to `out` as records of at most kSealChunk plaintext bytes each.
  void seal(std::span<const std::byte> plain, std::vector<std::byte>& out);
  [[nodiscard]] std::uint64_t records() const noexcept { return counter_; }

 private:
  EVP_CIPHER_CTX* ctx_;
  std::byte iv_[kIv];
  std::uint64_t counter_ = 0;
};

class Opener {
 public:
  Opener(std::span<const std::byte, kKey> key, std::span<const std::byte, kIv> iv);
  ~Opener();
  Opener(const Opener&) = delete;
  Opener& operator=(const Opener&) = delete;
  // `record` is one whole record (header, ciphertext, tag); writes the plaintext
  // (parse_unit(record).length bytes) to `out`. False if it does not authenticate (nothing
  // of it may be used then).
  [[nodiscard]] bool open(std::span<const std::byte> record, std::byte* out);
  [[nodiscard]] std::uint64_t records() const noexcept { return counter_; }

 private:
  EVP_CIPHER_CTX* ctx_;
  std::byte iv_[kIv];
  std::uint64_t counter_ = 0;
};

// The two directions of a stream, derived from a finished handshake.
struct Keys {
  std::unique_ptr<Sealer> seal;
  std::unique_ptr<Opener> open;
};

// A TLS 1.3 handshake over memory BIOs. The client starts (step with no input).
class Handshake {
 public:
  Handshake(const security::Credentials& credentials, bool client);
  ~Handshake();
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;

  enum class Step : std::uint8_t { more, done, failed };
  // Feeds the TLS bytes of one handshake unit from the peer (empty: just run), and appends
  // what we must send, as handshake units, to `out`.
  Step step(std::span<const std::byte> in, std::vector<std::byte>& out);
  // Why step() failed.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  // After done: the verdict on the peer's certificate.
  [[nodiscard]] security::PeerIdentity identify() const;
  // After done: this end's keys (exported from the TLS session; empty on failure).
  [[nodiscard]] Keys keys();

 private:
  const security::Credentials& credentials_;
  bool client_;
  SSL* ssl_ = nullptr;
  std::string error_;
};

}  // namespace spindle::transport::tcp_secure

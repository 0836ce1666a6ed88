// TLS 1.3 over one connected TCP socket, for the short connections of a secured domain:
// the join port and the joiner's side of the contact protocol (group/join.hpp,
// docs/membership.md "Joining", docs/security.md). Each side presents its certificate; the
// caller judges the peer's with Credentials::identify() once handshake() finished, before it
// sends anything that matters.
//
// The socket is non-blocking throughout: handshake_step() and recv_some() never block (for
// the join port's poll loop), and the blocking helpers wait with poll() up to a deadline.
//
// Threading: one thread at a time (the join port hands a connection from its listener thread
// to the thread that answers it).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "security/credentials.hpp"

namespace spindle::security {

class TlsSocket {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Step : unsigned char { done, want_read, want_write, failed };

  // Takes over `fd` (closed by the destructor) and sets it non-blocking. `server`: the
  // accepting end (the join port).
  TlsSocket(const Credentials& credentials, int fd, bool server);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }

  // One non-blocking step of the handshake; after `failed`, error() says why.
  [[nodiscard]] Step handshake_step();
  // The whole handshake, waiting up to `deadline`.
  [[nodiscard]] bool handshake(Clock::time_point deadline);
  // The peer's certificate, judged now (after the handshake).
  [[nodiscard]] PeerIdentity peer() const;

  // Up to n bytes without blocking: > 0 read, 0 the peer closed, -1 nothing yet (poll for
  // `wants_write()` ? POLLOUT : POLLIN), -2 failed (error()).
  [[nodiscard]] long recv_some(void* data, std::size_t n);
  [[nodiscard]] bool wants_write() const noexcept { return want_write_; }
  // Blocking with a deadline.
  [[nodiscard]] bool read_exact(void* data, std::size_t n, Clock::time_point deadline,
                                bool* closed = nullptr);
  [[nodiscard]] bool write_all(const void* data, std::size_t n, Clock::time_point deadline);
  // One line without its '\n', at most `max` bytes.
  [[nodiscard]] std::optional<std::string> read_line(std::size_t max, Clock::time_point deadline,
                                                     bool* closed = nullptr);
  // Sends close_notify (best effort, never blocks).
  void shutdown() noexcept;

  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  bool wait(bool for_write, Clock::time_point deadline);
  const Credentials& credentials_;
  int fd_;
  SSL* ssl_ = nullptr;
  bool want_write_ = false;
  std::string error_;
};

}  // namespace spindle::security

// Blocking socket I/O with a deadline, for the small TCP protocols beside the transports:
// joining a domain (group/join.hpp) and the link between an external client and the member
// that relays for it (client/relay.hpp). Plain POSIX sockets; every call bounded by its
// deadline.
//
// Threading: free functions; a descriptor is used by one thread at a time per direction.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include <spindle/transport/transport.hpp>

namespace spindle::core {

using SocketClock = std::chrono::steady_clock;

// Milliseconds left until `deadline` (0 once past), for poll().
[[nodiscard]] int remaining_ms(SocketClock::time_point deadline);
// Reads until `n` bytes or the deadline; false on EOF, error or timeout (`closed`, when
// given, tells the peer closed the connection from the rest).
[[nodiscard]] bool read_exact(int fd, std::byte* out, std::size_t n,
                              SocketClock::time_point deadline, bool* closed = nullptr);
// Writes all `n` bytes (blocking socket); false once the connection failed.
[[nodiscard]] bool write_all(int fd, const void* data, std::size_t n);
// A connected TCP socket to `a` (IPv4; non-blocking), or -1 when it could not connect
// before `deadline`. `source`, when an IPv4 address other than 0.0.0.0, is the local address
// it connects from (so that a joiner on a host of several addresses asks from the one it
// gives; a source that cannot reach `a`, such as 127.0.0.1 for another host, fails).
[[nodiscard]] int connect_to(const transport::NodeAddress& a, SocketClock::time_point deadline,
                             const std::string& source = {});

}  // namespace spindle::core

// The auto transport (the domain file's `transport: auto`, the default): shared memory
// between members on this host, tcp between hosts, chosen per pair at every connect().
//
// It is the shm and the tcp transport side by side, as one Transport:
// - A region is created once, in a shared-memory segment (the shm half); the tcp half
//   applies its peers' frames into the same memory (TcpTransport::adopt_region), so the
//   layers above see one region whichever way a peer's writes came.
// - One wake-up source: the shm half's doorbell, which same-host peers ring across
//   processes and the tcp half's I/O thread rings for its frames (TcpConfig::doorbell).
// - A peer is near when its address names the same host as ours (NodeAddress::host, the
//   text members give: by default the address of the host's network interface, the same
//   for every participant of one host). Both sides
//   of a pair compare the same two strings, so both choose alike whenever they start: the
//   members of a domain file start together, and a peer's segments may not exist yet when
//   we connect (shm's connect() waits for them). A node whose shm half cannot start (no
//   memfds, or less memory left than AutoConfig::min_shm_free) uses tcp to everyone; a peer of
//   the same host that expects shm from it then fails to connect, naming the shm prefix.
// - Each view's split is fixed in connect(); the data-plane calls route by peer, as each
//   half keeps its own peer table (both change only in connect/disconnect).
//
// Threading: the contract's (transport.hpp), and each half's own (tcp.hpp, shm.hpp).
// connect() runs the two halves' connects side by side when both have peers, so a peer
// missing on one side costs the other no time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spindle/transport/forwarding.hpp>
#include <spindle/transport/shm.hpp>
#include <spindle/transport/tcp.hpp>
#include <spindle/transport/transport.hpp>

namespace spindle::transport {

struct AutoConfig {
  TcpConfig tcp;  // self (id, host, port), timeouts, must_agree; `doorbell` is set here
  ShmConfig shm;  // name_prefix, ring size, timeouts; self and must_agree are tcp's
  // Memory this process must still be able to use for the shm half to start
  // (ShmTransport::memory_room: the host's MemAvailable and the memory cgroup's room); below
  // it this node uses tcp to every peer (shm_unavailable() says why). Segments are memfds,
  // so /dev/shm's size plays no part: a container's 64 MiB /dev/shm runs shm. A member's
  // segments take a few hundred KiB with the defaults (docs/transport-shm.md); a segment
  // the memory cannot hold later is refused when it is made, naming the bytes.
  std::uint64_t min_shm_free = std::uint64_t{32} << 20;
};

namespace auto_detail {
class Impl;
}
extern template class Forwarding<auto_detail::Impl>;

class AutoTransport final : public Forwarding<auto_detail::Impl> {
 public:
  // Starts the tcp half (binds and listens: throws as TcpTransport does) and, where
  // /dev/shm allows, the shm half.
  explicit AutoTransport(AutoConfig config);
  ~AutoTransport() override;

  // The tcp half's port: what peers on other hosts dial.
  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] std::string_view kind() const noexcept override { return "auto"; }
  // Why this node reaches every peer over tcp; empty when its shm half runs.
  [[nodiscard]] const std::string& shm_unavailable() const noexcept;
  // Whether `peer` is reached over shared memory in the view connected now.
  [[nodiscard]] bool over_shm(NodeId peer) const;
};

}  // namespace spindle::transport

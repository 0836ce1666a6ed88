// RDMA transport (libibverbs + librdmacm): RC queue pairs, registered regions, one-sided
// IBV_WR_RDMA_WRITE_WITH_IMM for writes (the immediate only wakes a sleeping peer; the
// bytes land without its CPU), send/recv with immediate for blocks, completion polling,
// error completions and CM disconnects mapped to suspicions.
//
// Per peer two RC queue pairs: DATA carries writes (a pool of zero-byte receives absorbs
// their immediates) and region descriptors; BLOCK carries sends into the receives posted
// with post_receive(). RC keeps each queue pair in order, so writes stay ordered among
// themselves and blocks among themselves (the contract promises nothing across the two).
//
// A member joining with a view (NodeAddress::connect_within) holds nobody, as on tcp and
// shm: connect() returns without waiting for it, its queue pairs are set up in the
// background by poll() and wait() (connection events, its region table), writes and blocks
// for it are refused with retry until then, and PeerConnected says when it is connected;
// past connect_within poll() suspects it (connect_timeout).
//
// Threading: the contract's rules (transport.hpp). No transport thread: completions are
// reaped by poll() and wait() on the caller's thread under cq_mu; posting to a peer takes
// that peer's mutex. Lock order: Peer::mu, cm_mu, cq_mu, Peer::q_mu, events_mu.
//
// This machine class may have no RDMA device: construct only after
// rdma_device_available() returned true (the constructor throws otherwise).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <spindle/transport/forwarding.hpp>
#include <spindle/transport/transport.hpp>

namespace spindle::transport {

struct RdmaConfig {
  NodeAddress self;  // IP of the RDMA interface (IPoIB/RoCE); port 0 picks a free port
  std::string
      bind{};  // the local address to listen on (0.0.0.0: every interface); empty: self.host
  std::chrono::milliseconds suspicion_timeout{1000};
  std::uint32_t queue_depth = 256;  // send and receive work requests per queue pair
  std::uint32_t max_inline = 64;    // writes up to this size are sent inline
};

// True if at least one RDMA device is present; otherwise false and `why` says what failed
// (e.g. "ibv_get_device_list: Function not implemented (errno 38)").
bool rdma_device_available(std::string& why);

namespace rdma_detail {
class Impl;
}
extern template class Forwarding<rdma_detail::Impl>;

class RdmaTransport final : public Forwarding<rdma_detail::Impl> {
 public:
  explicit RdmaTransport(RdmaConfig config);
  ~RdmaTransport() override;

  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] std::string_view kind() const noexcept override { return "rdma"; }
};

}  // namespace spindle::transport

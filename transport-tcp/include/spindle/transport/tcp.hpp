// TCP transport (Boost.Asio): one stream per peer pair; one-sided writes travel as framed
// {region, offset, length, bytes} and are applied by the receiver's I/O thread in stream
// order; blocks travel as BLOCK frames into posted receives. Frame format:
// docs/transport-tcp.md.
//
// Threading: the transport owns one I/O thread that connects, runs handshakes, sends queued
// frames, heartbeats and raises suspicions, and one receive thread. An established plain
// stream is read by the thread that polls the transport (poll()) while it spins, so a
// spinning protocol thread applies its peers' frames itself with no thread wake-up on the
// way; when nobody polled within a millisecond (the poller sleeps, or runs an upcall), the
// receive thread reads instead. Secured streams, and streams until their HELLOs crossed, are
// read by the I/O thread. On a quiet link the first few frames (one SST flush: data, guard,
// counters) are sent by the calling thread itself (a non-blocking send under the peer's
// mutex, only while the I/O thread is not writing that stream), which saves a thread
// wake-up per hop.
// The contract's rules apply (transport.hpp): one control thread; data-plane calls from
// any thread. Lock order: Impl::mu_ (view, peers) before Peer::mu (queues) before
// Impl::events_mu_.
//
// Bounded memory: per peer at most max_queued_bytes wait to be sent (write()/send_block()
// return retry beyond it; one oversized write is accepted when the queue is empty), plus
// one read buffer. A block with no posted receive stops reading from that stream, so the
// sender's kernel buffers and then its queue fill up: back-pressure reaches the sender.
// Accepted streams that have not said HELLO hold a 4 KiB buffer and live at most
// hello_timeout; the acceptor keeps going when the process runs out of descriptors.
//
// Rows belong to their owners: the I/O thread checks every WRITE frame against the ranges
// restrict_writes() granted its sender before a byte is applied; a frame outside them is a
// foreign_write suspicion of the sender, its stream is read no more and closed 500 ms later.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <spindle/transport/doorbell.hpp>
#include <spindle/transport/forwarding.hpp>
#include <spindle/transport/transport.hpp>

namespace spindle::security {
class Credentials;
}

namespace spindle::transport {

struct TcpConfig {
  NodeAddress self;  // host (name or address) peers reach; port 0 picks a port
  // The local address to listen on (an IPv4 address or a name; 0.0.0.0: every interface);
  // empty: self.host.
  std::string bind{};
  // HEARTBEAT frames on quiet streams, and silence for suspicion_timeout suspected as
  // heartbeat_timeout. 0: neither (the layer above detects silence, as the domain's SST
  // does); a stream that fails or closes is reported either way.
  std::chrono::milliseconds heartbeat_interval{100};
  std::chrono::milliseconds suspicion_timeout{1000};  // silence before heartbeat_timeout
  std::size_t max_queued_bytes = std::size_t{8} << 20;
  std::uint32_t max_block = std::uint32_t{64} << 20;
  std::size_t read_buffer = std::size_t{256} << 10;  // per stream, once bound to a member
  // Sent in HELLO and compared with every peer's: a peer of another domain, or whose list
  // of must-agree settings differs from ours, is suspected (SuspicionReason::mismatch) with
  // both values in the detail. The transport compares the text, never interprets it.
  std::uint32_t domain_id = 0;
  std::vector<AgreedSetting> must_agree{};
  // An accepted stream that has not delivered a valid HELLO within this time is closed.
  // Until it is bound to a member it holds a small buffer, not read_buffer.
  std::chrono::milliseconds hello_timeout{3000};
  // The wake-up source (activity(), wait()) to ring instead of a doorbell of our own, in a
  // process-shared mapping: the auto transport hands its shm half's, so one futex wakes its
  // protocol thread for peers of either kind. Outlives the transport. nullptr: our own.
  DoorbellData* doorbell = nullptr;
  // A secured domain (docs/transport-tcp.md, "Secured streams"): each stream first runs a
  // TLS 1.3 handshake with these credentials (the dialer is the client), is bound to a
  // member only if the peer's certificate checks out and its subject is the member's
  // NodeAddress::subject, and then carries every frame, HELLO included, in AES-256-GCM
  // records. nullptr: streams in clear, as in an unsecured domain.
  std::shared_ptr<const security::Credentials> security{};
};

namespace tcp_detail {
class Impl;
}
extern template class Forwarding<tcp_detail::Impl>;

class TcpTransport final : public Forwarding<tcp_detail::Impl> {
 public:
  // Resolves self.host, binds and listens at once (throws std::system_error if the address
  // is unusable, std::invalid_argument if must_agree cannot travel in a HELLO), so peers
  // may connect as soon as port() is known. Members' hosts may be names too; connect()
  // resolves them and suspects a member whose name does not resolve.
  explicit TcpTransport(TcpConfig config);
  ~TcpTransport() override;

  // The port actually bound (useful with port 0).
  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] std::string_view kind() const noexcept override { return "tcp"; }
  // Registers `memory`, owned by the caller, as local region `id` (create_region()'s rules
  // otherwise): peers' writes land in it, and release_region() only forgets it. For a
  // composite whose other transport created the region (the auto transport's shm half).
  LocalRegion adopt_region(RegionId id, std::span<std::byte> memory);
};

}  // namespace spindle::transport

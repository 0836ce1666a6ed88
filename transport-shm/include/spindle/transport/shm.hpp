// Shared-memory transport for members on one host. Every region lives in a shared-memory
// segment that peers map; a one-sided write is a release fence plus a memcpy into the peer's
// mapping, so a reader's acquire load of a guard sees the data written before it. Blocks go
// through one single-producer ring per ordered pair that exchanges them in a view, made by
// the receiver at its first post_receive() for the sender. Each node's control segment holds a
// futex doorbell (the wake-up source), a heartbeat and its region table. Segment layout:
// transport-shm/src/segment.hpp, docs/transport-shm.md.
//
// Threading: the contract's rules (transport.hpp). The transport runs a monitor thread that
// bumps our heartbeat and suspects peers whose heartbeat stalls, whose process is gone, or
// who left the view, and a server thread that hands our segments to peers. Sends to one peer
// are serialized by a per-peer mutex; writes take no lock. Lock order: Peer::mu before
// Impl::events_mu; the segment registry's mutex is taken alone.
//
// Lifetime: no segment has a name. Each is a sealed memfd; peers get its fd from the owner's
// server over an abstract unix socket (@<prefix>.n<id>; same user or root, SO_PEERCRED) and
// map it. The kernel frees a segment when the last process that holds or maps it lets go, and
// drops the socket with its process, however it ends (SIGKILL included): nothing outlives the
// members. Named segments of earlier versions whose owner is gone are unlinked at start.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spindle/transport/doorbell.hpp>
#include <spindle/transport/forwarding.hpp>
#include <spindle/transport/transport.hpp>

namespace spindle::transport {

struct ShmConfig {
  NodeId self = 0;
  std::string name_prefix = "spindle";  // socket @<prefix>.n<id>; segments <prefix>.n<id>[.r|.b]
  // The monitor thread's period: it bumps our heartbeat and checks each peer's epoch,
  // process and heartbeat. A peer process that exits is suspected at once (pidfd).
  std::chrono::milliseconds heartbeat_interval{50};
  // A peer whose heartbeat stood still this long is suspected (heartbeat_timeout). 0: never
  // (the layer above detects silence, as the domain's SST does).
  std::chrono::milliseconds suspicion_timeout{500};
  std::size_t ring_bytes = std::size_t{4} << 20;  // per ring (receiver's); max block = half
  // Published in our control segment and compared with every peer's before it joins a
  // view: a peer of another domain, or whose must-agree settings differ from ours, is
  // suspected (SuspicionReason::mismatch) with both values in the detail.
  std::uint32_t domain_id = 0;
  std::vector<AgreedSetting> must_agree{};
};

namespace shm_detail {
class Impl;
}
extern template class Forwarding<shm_detail::Impl>;

class ShmTransport final : public Forwarding<shm_detail::Impl> {
 public:
  // Binds our socket and creates our control segment (unlinking an earlier version's stale
  // names first). Throws std::runtime_error if a live process of this network namespace
  // already is this node id under the prefix ("... in use by live process <pid> (is this
  // node id taken?)"), or on resource errors; std::invalid_argument if must_agree does not
  // fit the control segment or the prefix does not fit a socket name.
  explicit ShmTransport(ShmConfig config);
  ~ShmTransport() override;

  [[nodiscard]] std::string_view kind() const noexcept override { return "shm"; }

  // Unlinks the named segments (/dev/shm/<prefix>.n*) of earlier versions whose owner
  // process is gone; returns how many. This version creates none.
  static std::size_t reclaim_stale(const std::string& prefix);
  // The same under every prefix: each named Spindle segment in /dev/shm (known by its
  // header) whose owner process is gone. For a machine's housekeeping after an upgrade.
  // Owners are judged by pid, so run it only where every Spindle process of this /dev/shm
  // shares our pid namespace.
  static std::size_t reclaim_all_stale();
  // The node ids under `prefix` whose transport is alive in this network namespace (their
  // sockets, as /proc/net/unix lists them).
  static std::vector<NodeId> live_nodes(const std::string& prefix);

  // The memory this process may still give to shared memory: the lesser of the host's
  // (MemAvailable) and its memory cgroup's room (limit less usage, at each level up). Segments
  // are memfds, charged to the memory cgroup of the process that touches them and not
  // counted in /dev/shm, so /dev/shm's size does not bound them. `bound` says what limits it.
  struct MemoryRoom {
    std::uint64_t bytes = 0;
    std::string bound;  // "the host (MemAvailable)", "the memory cgroup /x (limit 64 MiB)"
  };
  static MemoryRoom memory_room();

  // Our wake-up source, in our control segment (peers ring it): a composite's other
  // transport rings it too (TcpConfig::doorbell). Valid until the transport is destroyed.
  [[nodiscard]] DoorbellData* doorbell() const noexcept;
};

}  // namespace spindle::transport

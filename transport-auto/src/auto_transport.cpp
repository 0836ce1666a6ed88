// The auto transport (model: <spindle/transport/auto.hpp>): the shm and the tcp transport
// side by side, each call routed to the half that reaches the peer.
#include <spindle/transport/auto.hpp>

#include <algorithm>
#include <exception>
#include <future>
#include <stdexcept>
#include <utility>

#include <spindle/transport/forwarding_impl.hpp>

namespace spindle::transport {

namespace {

// Why this process cannot give its segments the memory they need; empty when it can.
// Segments are memfds: memory of this process's cgroup, not files of /dev/shm, whose size
// does not matter (a container's 64 MiB /dev/shm carries a domain as well as a larger one).
std::string shm_room(std::uint64_t min_free) {
  const auto room = ShmTransport::memory_room();
  if (room.bytes >= min_free) return {};
  return "shared memory: this process may use " + std::to_string(room.bytes >> 20) + " MiB more (" +
         room.bound + "), under the " + std::to_string(min_free >> 20) +
         " MiB the shm half needs (AutoConfig::min_shm_free)";
}

}  // namespace

namespace auto_detail {

class Impl {
 public:
  explicit Impl(AutoConfig config) {
    config.shm.self = config.tcp.self.id;
    config.shm.domain_id = config.tcp.domain_id;
    config.shm.must_agree = config.tcp.must_agree;
    shm_why_ = shm_room(config.min_shm_free);
    if (shm_why_.empty()) {
      try {
        shm_ = std::make_unique<ShmTransport>(config.shm);
      } catch (const std::invalid_argument&) {
        throw;  // a configuration error, not a host without shared memory
      } catch (const std::exception& e) {
        shm_why_ = e.what();
      }
    }
    if (shm_) config.tcp.doorbell = shm_->doorbell();
    host_ = config.tcp.self.host;
    tcp_ = std::make_unique<TcpTransport>(config.tcp);
  }

  ~Impl() {
    tcp_.reset();  // its I/O thread rings the shm half's doorbell
    shm_.reset();
  }

  [[nodiscard]] std::uint16_t port() const noexcept { return tcp_->port(); }
  [[nodiscard]] const std::string& shm_unavailable() const noexcept { return shm_why_; }
  [[nodiscard]] bool over_shm(NodeId peer) const {
    return std::binary_search(shm_peers_.begin(), shm_peers_.end(), peer);
  }

  [[nodiscard]] NodeId self() const noexcept { return tcp_->self(); }

  LocalRegion create_region(RegionId id, std::size_t size) {
    if (!shm_) return tcp_->create_region(id, size);
    return lend_to_tcp(shm_->create_region(id, size));
  }

  LocalRegion create_rows_region(RegionId id, std::size_t size, std::span<const WriteGrant> rows) {
    auto region = shm_ ? lend_to_tcp(shm_->create_rows_region(id, size, rows))
                       : tcp_->create_region(id, size);
    tcp_->restrict_writes(id, rows);
    return region;
  }

  // The tcp half applies its peers' writes into the memory of the shm half's new region; the
  // region goes again if it cannot.
  LocalRegion lend_to_tcp(LocalRegion region) {
    try {
      (void)tcp_->adopt_region(region.id, region.bytes);
    } catch (...) {
      shm_->release_region(region.id);
      throw;
    }
    return region;
  }

  void release_region(RegionId id) {
    tcp_->release_region(id);  // forgets the memory first: the shm half owns it
    if (shm_) shm_->release_region(id);
  }

  // The tcp half borrows the shm half's memory: its range stays valid after retiring (zero
  // pages), so a late frame for it lands nowhere that matters.
  void retire_region(RegionId id) {
    if (shm_) shm_->retire_region(id);
  }

  void restrict_writes(RegionId id, std::span<const WriteGrant> grants) {
    tcp_->restrict_writes(id, grants);
    if (shm_) shm_->restrict_writes(id, grants);
  }

  // The shm half keeps the rows of its peers in place; tcp peers' rows stay copies in the
  // same memory, which the tcp half writes.
  void share_rows(RegionId id, std::span<const WriteGrant> rows) {
    tcp_->restrict_writes(id, rows);
    if (shm_) shm_->share_rows(id, rows);
  }

  [[nodiscard]] bool keeps_rows_in_place() const noexcept { return shm_ != nullptr; }
  [[nodiscard]] bool row_in_place(NodeId peer, RegionId id) const {
    return shm_ && over_shm(peer) && shm_->row_in_place(peer, id);
  }
  void keep_rows_mapped(RegionId id) {
    if (shm_) shm_->keep_rows_mapped(id);
  }

  Status connect(std::span<const NodeAddress> members, std::uint64_t view_epoch,
                 std::chrono::milliseconds timeout) {
    // Each half is given itself and its peers: it connects (or dials) only those, and its
    // monitor watches only those.
    std::vector<NodeAddress> near;
    std::vector<NodeAddress> far;
    std::vector<NodeId> shm_peers;
    const NodeId me = self();
    for (const auto& m : members) {
      if (m.id == me) {
        near.push_back(m);
        far.push_back(m);
      } else if (shm_ && m.host == host_) {
        near.push_back(m);
        shm_peers.push_back(m.id);
      } else {
        far.push_back(m);
      }
    }
    std::sort(shm_peers.begin(), shm_peers.end());
    shm_peers_ = std::move(shm_peers);
    if (!shm_) return tcp_->connect(far, view_epoch, timeout);
    if (near.size() <= 1 || far.size() <= 1) {
      const Status s = shm_->connect(near, view_epoch, timeout);
      const Status t = tcp_->connect(far, view_epoch, timeout);
      return s != Status::ok ? s : t;
    }
    auto far_done =
        std::async(std::launch::async, [&] { return tcp_->connect(far, view_epoch, timeout); });
    const Status s = shm_->connect(near, view_epoch, timeout);
    const Status t = far_done.get();
    return s != Status::ok ? s : t;
  }

  [[nodiscard]] bool connecting(NodeId peer) const { return to(peer).connecting(peer); }

  void disconnect() {
    tcp_->disconnect();
    if (shm_) shm_->disconnect();
    shm_peers_.clear();
  }

  [[nodiscard]] std::optional<RegionDescriptor> remote_region(NodeId peer, RegionId id) const {
    return to(peer).remote_region(peer, id);
  }
  [[nodiscard]] std::optional<LocalRegion> local_region(RegionId id) const {
    return bell().local_region(id);
  }

  Status write(NodeId peer, RegionId local, std::uint64_t local_offset, RegionId remote,
               std::uint64_t remote_offset, std::size_t length) {
    return to(peer).write(peer, local, local_offset, remote, remote_offset, length);
  }
  WriteBatchResult write_batch(NodeId peer, std::span<const WriteOp> ops) {
    return to(peer).write_batch(peer, ops);
  }
  Status send_block(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t length,
                    std::uint32_t immediate) {
    return to(peer).send_block(peer, local, offset, length, immediate);
  }
  Status post_receive(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t capacity) {
    return to(peer).post_receive(peer, local, offset, capacity);
  }
  // Blocks of peers on this host land in place (their ring records say where); tcp's are
  // matched as they arrive.
  void place_blocks(const void* owner, BlockPlacer placer) {
    if (shm_) shm_->place_blocks(owner, std::move(placer));
  }

  void receive() { tcp_->receive(); }
  void stop_polling() noexcept { tcp_->stop_polling(); }
  std::size_t poll(std::vector<Event>& out) {
    std::size_t n = tcp_->poll(out);
    if (shm_) n += shm_->poll(out);
    return n;
  }

  // One wake-up source: the shm half's, which the tcp half rings too (TcpConfig::doorbell).
  [[nodiscard]] std::uint64_t activity() const noexcept { return bell().activity(); }
  void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    if (shm_) tcp_->stop_polling();  // the tcp half's receive thread reads meanwhile
    bell().wait(ticket, timeout);
  }
  void notify() noexcept { bell().notify(); }
  void wait_quiet(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    if (shm_) tcp_->stop_polling();
    bell().wait_quiet(ticket, timeout);
  }
  void arm_waiter(bool armed) noexcept { bell().arm_waiter(armed); }

 private:
  [[nodiscard]] Transport& to(NodeId peer) const {
    if (over_shm(peer)) return *shm_;
    return *tcp_;
  }
  [[nodiscard]] Transport& bell() const noexcept {
    if (shm_) return *shm_;
    return *tcp_;
  }

  std::string shm_why_;
  // Destroyed after the tcp half, whose I/O thread rings its doorbell.
  std::unique_ptr<ShmTransport> shm_;
  std::unique_ptr<TcpTransport> tcp_;
  std::string host_;               // tcp.self.host: peers that give the same are near
  std::vector<NodeId> shm_peers_;  // sorted; changed only in connect/disconnect
};

}  // namespace auto_detail

template class Forwarding<auto_detail::Impl>;

AutoTransport::AutoTransport(AutoConfig config)
    : Forwarding(std::make_unique<auto_detail::Impl>(std::move(config))) {}
AutoTransport::~AutoTransport() = default;
std::uint16_t AutoTransport::port() const noexcept {
  return impl().port();
}
const std::string& AutoTransport::shm_unavailable() const noexcept {
  return impl().shm_unavailable();
}
bool AutoTransport::over_shm(NodeId peer) const {
  return impl().over_shm(peer);
}

}  // namespace spindle::transport

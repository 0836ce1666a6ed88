// The one base of the transports that keep their state behind a pointer (tcp, shm, rdma):
// the Transport interface, each call forwarded to `Impl`, a class the transport defines in
// its own source file. The override list and its forwarding are written here once; a
// transport's header declares only what is its own (its configuration, kind(), port()...).
//
// Impl has every member forwarded below, under the same name and signature, activity(),
// wait() and notify() included; connecting(), write_batch(), share_rows(), keeps_rows_in_place(),
// row_in_place(), keep_rows_mapped(), retire_region(), place_blocks(), wait_quiet() and
// arm_waiter() are optional (without them, the Transport defaults). The definitions are in
// forwarding_impl.hpp: a transport's source includes it once Impl is complete and instantiates the
// base there (`template class Forwarding<tcp_detail::Impl>;`); its header declares that
// instantiation `extern`, so no other file instantiates it.
#pragma once

#include <memory>

#include <spindle/transport/transport.hpp>

namespace spindle::transport {

template <class Impl>
class Forwarding : public Transport {
 public:
  ~Forwarding() override;

  [[nodiscard]] NodeId self() const noexcept override;
  LocalRegion create_region(RegionId id, std::size_t size) override;
  void release_region(RegionId id) override;
  void retire_region(RegionId id) override;
  void restrict_writes(RegionId id, std::span<const WriteGrant> grants) override;
  void share_rows(RegionId id, std::span<const WriteGrant> rows) override;
  [[nodiscard]] bool keeps_rows_in_place() const noexcept override;
  [[nodiscard]] bool row_in_place(NodeId peer, RegionId id) const override;
  void keep_rows_mapped(RegionId id) override;
  LocalRegion create_rows_region(RegionId id, std::size_t size,
                                 std::span<const WriteGrant> rows) override;
  [[nodiscard]] Status connect(std::span<const NodeAddress> members, std::uint64_t view_epoch,
                               std::chrono::milliseconds timeout) override;
  void disconnect() override;
  [[nodiscard]] bool connecting(NodeId peer) const override;
  [[nodiscard]] std::optional<RegionDescriptor> remote_region(NodeId peer,
                                                              RegionId id) const override;
  [[nodiscard]] std::optional<LocalRegion> local_region(RegionId id) const override;
  [[nodiscard]] Status write(NodeId peer, RegionId local, std::uint64_t local_offset,
                             RegionId remote, std::uint64_t remote_offset,
                             std::size_t length) override;
  [[nodiscard]] WriteBatchResult write_batch(NodeId peer, std::span<const WriteOp> ops) override;
  [[nodiscard]] Status send_block(NodeId peer, RegionId local, std::uint64_t offset,
                                  std::uint32_t length, std::uint32_t immediate) override;
  [[nodiscard]] Status post_receive(NodeId peer, RegionId local, std::uint64_t offset,
                                    std::uint32_t capacity) override;
  void place_blocks(const void* owner, BlockPlacer placer) override;
  std::size_t poll(std::vector<Event>& out) override;
  void receive() override;
  void stop_polling() noexcept override;
  [[nodiscard]] std::uint64_t activity() const noexcept override;
  void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) override;
  void notify() noexcept override;
  void wait_quiet(std::uint64_t ticket, std::chrono::nanoseconds timeout) override;
  void arm_waiter(bool armed) noexcept override;

 protected:
  explicit Forwarding(std::unique_ptr<Impl> impl);
  [[nodiscard]] Impl& impl() const noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace spindle::transport

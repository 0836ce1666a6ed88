// The definitions of Forwarding<Impl> (forwarding.hpp): included by a transport's source
// file once its Impl is complete, before it instantiates the base.
#pragma once

#include <spindle/transport/forwarding.hpp>

namespace spindle::transport {

template <class Impl>
Forwarding<Impl>::Forwarding(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
template <class Impl>
Forwarding<Impl>::~Forwarding() = default;

template <class Impl>
NodeId Forwarding<Impl>::self() const noexcept {
  return impl_->self();
}
template <class Impl>
LocalRegion Forwarding<Impl>::create_region(RegionId id, std::size_t size) {
  return impl_->create_region(id, size);
}
template <class Impl>
void Forwarding<Impl>::release_region(RegionId id) {
  impl_->release_region(id);
}
template <class Impl>
LocalRegion Forwarding<Impl>::create_rows_region(RegionId id, std::size_t size,
                                                 std::span<const WriteGrant> rows) {
  if constexpr (requires(Impl & i) { i.create_rows_region(id, size, rows); }) {
    return impl_->create_rows_region(id, size, rows);
  } else {
    return Transport::create_rows_region(id, size, rows);
  }
}
template <class Impl>
void Forwarding<Impl>::retire_region(RegionId id) {
  if constexpr (requires(Impl & i) { i.retire_region(id); }) impl_->retire_region(id);
}
template <class Impl>
void Forwarding<Impl>::restrict_writes(RegionId id, std::span<const WriteGrant> grants) {
  impl_->restrict_writes(id, grants);
}
template <class Impl>
void Forwarding<Impl>::share_rows(RegionId id, std::span<const WriteGrant> rows) {
  if constexpr (requires(Impl & i) { i.share_rows(id, rows); }) {
    impl_->share_rows(id, rows);
  } else {
    Transport::share_rows(id, rows);
  }
}
template <class Impl>
bool Forwarding<Impl>::keeps_rows_in_place() const noexcept {
  if constexpr (requires(const Impl& i) { i.keeps_rows_in_place(); }) {
    return impl_->keeps_rows_in_place();
  } else {
    return Transport::keeps_rows_in_place();
  }
}
template <class Impl>
bool Forwarding<Impl>::row_in_place(NodeId peer, RegionId id) const {
  if constexpr (requires(const Impl& i) { i.row_in_place(peer, id); }) {
    return impl_->row_in_place(peer, id);
  } else {
    return Transport::row_in_place(peer, id);
  }
}
template <class Impl>
void Forwarding<Impl>::keep_rows_mapped(RegionId id) {
  if constexpr (requires(Impl & i) { i.keep_rows_mapped(id); }) impl_->keep_rows_mapped(id);
}
template <class Impl>
Status Forwarding<Impl>::connect(std::span<const NodeAddress> members, std::uint64_t view_epoch,
                                 std::chrono::milliseconds timeout) {
  return impl_->connect(members, view_epoch, timeout);
}
template <class Impl>
void Forwarding<Impl>::disconnect() {
  impl_->disconnect();
}
template <class Impl>
bool Forwarding<Impl>::connecting(NodeId peer) const {
  if constexpr (requires(const Impl& i) { i.connecting(peer); }) {
    return impl_->connecting(peer);
  } else {
    return Transport::connecting(peer);
  }
}
template <class Impl>
std::optional<RegionDescriptor> Forwarding<Impl>::remote_region(NodeId peer, RegionId id) const {
  return impl_->remote_region(peer, id);
}
template <class Impl>
std::optional<LocalRegion> Forwarding<Impl>::local_region(RegionId id) const {
  return impl_->local_region(id);
}
template <class Impl>
Status Forwarding<Impl>::write(NodeId peer, RegionId local, std::uint64_t local_offset,
                               RegionId remote, std::uint64_t remote_offset, std::size_t length) {
  return impl_->write(peer, local, local_offset, remote, remote_offset, length);
}
template <class Impl>
WriteBatchResult Forwarding<Impl>::write_batch(NodeId peer, std::span<const WriteOp> ops) {
  if constexpr (requires(Impl & i) { i.write_batch(peer, ops); }) {
    return impl_->write_batch(peer, ops);
  } else {
    return Transport::write_batch(peer, ops);
  }
}
template <class Impl>
Status Forwarding<Impl>::send_block(NodeId peer, RegionId local, std::uint64_t offset,
                                    std::uint32_t length, std::uint32_t immediate) {
  return impl_->send_block(peer, local, offset, length, immediate);
}
template <class Impl>
Status Forwarding<Impl>::post_receive(NodeId peer, RegionId local, std::uint64_t offset,
                                      std::uint32_t capacity) {
  return impl_->post_receive(peer, local, offset, capacity);
}
template <class Impl>
void Forwarding<Impl>::place_blocks(const void* owner, BlockPlacer placer) {
  if constexpr (requires(Impl & i) { i.place_blocks(owner, std::move(placer)); }) {
    impl_->place_blocks(owner, std::move(placer));
  }
}
template <class Impl>
std::size_t Forwarding<Impl>::poll(std::vector<Event>& out) {
  return impl_->poll(out);
}

template <class Impl>
void Forwarding<Impl>::receive() {
  if constexpr (requires(Impl & i) { i.receive(); }) impl_->receive();
}

template <class Impl>
void Forwarding<Impl>::stop_polling() noexcept {
  if constexpr (requires(Impl & i) { i.stop_polling(); }) impl_->stop_polling();
}
template <class Impl>
std::uint64_t Forwarding<Impl>::activity() const noexcept {
  return impl_->activity();
}
template <class Impl>
void Forwarding<Impl>::wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
  impl_->wait(ticket, timeout);
}
template <class Impl>
void Forwarding<Impl>::notify() noexcept {
  impl_->notify();
}
template <class Impl>
void Forwarding<Impl>::wait_quiet(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
  if constexpr (requires(Impl & i) { i.wait_quiet(ticket, timeout); }) {
    impl_->wait_quiet(ticket, timeout);
  } else {
    Transport::wait_quiet(ticket, timeout);
  }
}
template <class Impl>
void Forwarding<Impl>::arm_waiter(bool armed) noexcept {
  if constexpr (requires(Impl & i) { i.arm_waiter(armed); }) {
    impl_->arm_waiter(armed);
  } else {
    Transport::arm_waiter(armed);
  }
}

}  // namespace spindle::transport

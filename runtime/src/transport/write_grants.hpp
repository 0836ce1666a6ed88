// WriteGrants: the ranges each member's one-sided writes may touch in the restricted
// regions of one transport ("Rows belong to their owners", transport.hpp). tcp and the
// simulator check every write a peer makes against it when it lands, shm every write of
// its own before it leaves, rdma registers one memory region per peer from it.
//
//   region R (restricted)       grant of node 1: [0, 448)    grant of node 2: [448, 960)
//   +-------------------------+------------------------+----------------------------+
//   | row 0 (node 1)          | row 1 (node 2)         | ...                        |
//   +-------------------------+------------------------+----------------------------+
//   allows(2, R, 400, 8): false (inside row 0, not node 2's)   allows(2, R, 448, 64): true
//
// Threading: changed only on the control thread while the transport is disconnected
// (restrict_writes, release_region); read by any data-plane thread afterwards without a
// lock, as the transports' region tables are (no view's stream runs while it changes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::transport {

// Each member's row where `rows` (a share_rows() declaration of a region of `size` bytes) can
// be kept in place: one range each, starting and ending on kRowAlign boundaries, inside the
// region, one row per member. Nothing where they cannot (the transport keeps copies).
inline std::optional<std::map<NodeId, ByteRange>> rows_in_place(std::span<const WriteGrant> rows,
                                                                std::uint64_t size) {
  std::map<NodeId, ByteRange> by_owner;
  for (const auto& r : rows) {
    if (r.ranges.size() != 1) return std::nullopt;
    const auto& b = r.ranges.front();
    if (b.offset % kRowAlign != 0 || b.length % kRowAlign != 0 || b.length == 0 ||
        b.offset + b.length > size || !by_owner.emplace(r.writer, b).second)
      return std::nullopt;
  }
  return by_owner;
}

class WriteGrants {
 public:
  // Records the grants of region `id` (`size` bytes), ranges sorted and merged; replaces an
  // earlier restriction of `id`. Throws std::invalid_argument for a range outside the
  // region (the caller's layout is wrong).
  void restrict(RegionId id, std::uint64_t size, std::span<const WriteGrant> grants);
  // Forgets region `id` (release_region).
  void release(RegionId id) { regions_.erase(id); }

  [[nodiscard]] bool restricted(RegionId id) const { return regions_.contains(id); }
  // May `writer` write [offset, offset + length) of region `id`? True for an unrestricted
  // region (the caller checks the region's bounds); otherwise the range must lie inside
  // one range of the writer's grant. Overflow-safe.
  [[nodiscard]] bool allows(NodeId writer, RegionId id, std::uint64_t offset,
                            std::uint64_t length) const noexcept;
  // The writer's ranges in region `id` (empty when it has none or the region is open).
  [[nodiscard]] std::span<const ByteRange> ranges(NodeId writer, RegionId id) const noexcept;
  // Why allows() refused: "write of [400, +8) into region 7 outside what node 3 may write
  // there: [448, +512)" (or "..., where node 3 may write nothing").
  [[nodiscard]] std::string refusal(NodeId writer, RegionId id, std::uint64_t offset,
                                    std::uint64_t length) const;

 private:
  std::map<RegionId, std::map<NodeId, std::vector<ByteRange>>> regions_;
};

}  // namespace spindle::transport

// Layout of the shared-memory transport's segments. These structs live in memory that
// several processes map (STYLE 3: plain data; the logic is in shm_transport.cpp). Field
// rules: a segment is usable once `ready` reads 1 with acquire; atomics are the only
// fields written after that, except region bytes and ring payload (published by the
// atomics that follow them).
//
// Every segment is a sealed memfd of its owner, known to peers by a name <prefix>.n<id>[...]
// that they ask the owner's socket (@<prefix>.n<id>) for; no name is in /dev/shm. It starts
// with
//
//   0            8        12       16              24              32   36      64
//   +------------+--------+--------+---------------+---------------+----+-------+
//   | "SPNDLSHM" | ver 4  | kind   | owner pid     | payload bytes | rdy| 0 ... |
//   +------------+--------+--------+---------------+---------------+----+-------+
//   payload at offset 64 (cache-line aligned)
//
// kind 1 CONTROL  <prefix>.n<id>            one per node
//   +0    DoorbellData {seq u32, waiters u32}   futex: wakes this node
//   +64   heartbeat u64 (monitor thread bumps it every heartbeat_interval)
//   +72   epoch u64 (view this node is connected in; 0 = none)
//   +80   region_count u32, pad
//   +128  RegionEntry[256] {id u32, flags u32, size u64}  (written only while epoch == 0,
//         but for flags bit 1; flags bit 0: its rows are in place, share_rows; bit 1: retired)
//   +4224 domain u32, settings_bytes u32              | written before `ready`, never
//   +4232 settings[4096]: {name_len u8 | value_len u8 |  changed: what a peer compares
//                          name | value}...            |  before it joins (must agree)
//   +8328 refused_by u32 (atomic): peers that compared with this node and refused it
//
// kind 2 REGION   <prefix>.n<id>.r<region>  payload = the region's bytes, from offset 4096
//   (kRegionPayloadOffset) of the file, not 64: a row in place is a page range of it
//
// kind 3 RING     <prefix>.n<from>.b<to>    blocks from <from> to <to>, made by <to> when it
//                                           first posts a receive for <from> in a view
//   +0    head u64   bytes ever produced (sender)        | each on its own cache line
//   +64   tail u64   bytes ever consumed (receiver)      |
//   +128  capacity u64, epoch u64
//   +192  data[capacity]:
//
//          tail % cap                     head % cap
//          v                              v
//   +------+----------+-----+---------+---+---------------------+
//   | free | len | imm| payload, pad8 | ...   free             |
//   +------+----------+-----+---------+---+---------------------+
//   record = {length u32, immediate u32, payload padded to 8}; a record never wraps: if it
//   does not fit before the end, a marker with length 0xFFFFFFFF fills the rest and the
//   record starts at 0. free = capacity - (head - tail). The sender publishes a record by
//   storing head with release; the receiver frees it by storing tail with release.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <spindle/transport/doorbell.hpp>

namespace spindle::transport::shm {

inline constexpr char kMagic[8] = {'S', 'P', 'N', 'D', 'L', 'S', 'H', 'M'};
// 2: domain and must-agree settings; 3: segments are memfds handed out over the owner's
// socket (no names; the bytes are version 2's); 4: a ring is made by its receiver, at its
// first receive posted for the sender in a view, a region's payload starts at 4096, and rows
// may be in place (RegionEntry::flags)
inline constexpr std::uint32_t kVersion = 4;
inline constexpr std::size_t kHeaderBytes = 64;
// A REGION's payload starts on the next page, so that a row at a page-aligned offset of the
// region is a page-aligned range of the file (mapped in place by peers: share_rows).
inline constexpr std::size_t kRegionPayloadOffset = 4096;
inline constexpr std::uint32_t kMaxRegions = 256;
inline constexpr std::uint32_t kWrapMarker = 0xFFFFFFFFu;
inline constexpr std::uint32_t kMaxSettingsBytes = 4096;

enum class SegmentKind : std::uint32_t { control = 1, region = 2, ring = 3 };

struct SegmentHeader {
  char magic[8];
  std::uint32_t version;
  SegmentKind kind;
  std::uint64_t owner_pid;
  std::uint64_t payload_bytes;
  std::atomic<std::uint32_t> ready;
};
static_assert(sizeof(SegmentHeader) <= kHeaderBytes);

// RegionEntry::flags: the owner declared the region's rows (Transport::share_rows), so a peer
// that did too maps the owner's row in place instead of the whole region.
inline constexpr std::uint32_t kRowsInPlace = 1;
// RegionEntry::flags: no view uses the region any more, and a peer does not map it. Set,
// atomically, when the owner leaves the view of a region whose rows are in place (a region
// declared with share_rows belongs to one view: disconnect()) and when the owner retires a
// region (Transport::retire_region: its memory is gone). Only this bit of an entry changes
// while the owner is connected; the entry itself goes at release_region().
inline constexpr std::uint32_t kRetired = 2;

struct RegionEntry {
  std::uint32_t id;
  std::uint32_t flags;
  std::uint64_t size;
};

struct ControlData {
  alignas(64) DoorbellData doorbell;
  alignas(64) std::atomic<std::uint64_t> heartbeat;
  std::atomic<std::uint64_t> epoch;
  std::uint32_t region_count;
  alignas(64) RegionEntry regions[kMaxRegions];
  alignas(64) std::uint32_t domain;
  std::uint32_t settings_bytes;
  std::byte settings[kMaxSettingsBytes];
  std::atomic<std::uint32_t> refused_by;
};
static_assert(offsetof(ControlData, domain) == 4224);
static_assert(offsetof(ControlData, refused_by) == 8328);

struct RingData {
  alignas(64) std::atomic<std::uint64_t> head;
  alignas(64) std::atomic<std::uint64_t> tail;
  alignas(64) std::uint64_t capacity;
  std::uint64_t epoch;
};
// The ring's data bytes start here, `capacity` of them.
inline constexpr std::size_t kRingDataOffset = 192;
static_assert(sizeof(RingData) <= kRingDataOffset);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

}  // namespace spindle::transport::shm

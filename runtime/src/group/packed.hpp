// Several small messages in one slot (docs/dev/smc.md, "Several messages per slot"). A writer
// whose last slot has not gone out yet adds its next message to it (smc::Smc::append) instead
// of taking a slot of its own: the slot's header, round, guard and predicate steps are paid
// once for them all. Such a slot carries the flag kPacked and holds records, each 8-byte
// aligned:
//
//   +------------+----------+--------------------+-- pad to 8 --+------------+-----
//   | length u32 | zero u32 | message (length B) |              | length u32 | ...
//   +------------+----------+--------------------+--------------+------------+-----
//
// The engine frames and splits them: every layer above sees one Message per record, with the
// slot's place in the order (index, seq) — records of one slot are delivered together, in
// the order they were added.
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace spindle::group {

// The slot flag of a packed slot (smc::Smc::commit's flags; beside kLargeMessage, kResent).
inline constexpr std::uint32_t kPacked = 8;
// A record's header: its length, and 4 bytes that keep the message 8-byte aligned.
inline constexpr std::size_t kRecordHeader = 8;

// Where the record after one ending at `end` starts.
[[nodiscard]] constexpr std::size_t next_record(std::size_t end) noexcept {
  return (end + 7) & ~std::size_t{7};
}

// Writes the header of a record of `length` bytes at `at` (kRecordHeader bytes; the message
// follows it).
inline void put_record_header(std::byte* at, std::uint32_t length) noexcept {
  std::memset(at, 0, kRecordHeader);
  std::memcpy(at, &length, sizeof length);
}

// Calls fn(bytes) for each record of a packed slot's `slot` bytes, in order. Returns "" or
// what is wrong with the slot (the records before the fault were given to fn): a peer's
// slot is untrusted.
template <class F>
[[nodiscard]] std::string for_records(std::span<const std::byte> slot, F&& fn) {
  if (slot.empty()) return "first record is missing (the slot is empty)";
  std::size_t at = 0;
  std::size_t k = 0;
  while (at < slot.size()) {
    if (slot.size() - at < kRecordHeader)
      return "record " + std::to_string(k) + " at byte " + std::to_string(at) +
             " has no whole header (" + std::to_string(slot.size()) + " bytes in the slot)";
    std::uint32_t length = 0;
    std::memcpy(&length, slot.data() + at, sizeof length);
    const std::size_t body = at + kRecordHeader;
    if (length > slot.size() - body)
      return "record " + std::to_string(k) + " at byte " + std::to_string(at) + " says " +
             std::to_string(length) + " bytes, past the slot's " + std::to_string(slot.size());
    fn(slot.subspan(body, length));
    at = next_record(body + length);
    ++k;
  }
  return {};
}

}  // namespace spindle::group

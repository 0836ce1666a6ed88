// Little-endian integers in the builtin subgroup's own records (refresh, repair, the joining
// state's records): fixed widths, whatever the host's byte order.
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace spindle::dcps {

// Appends the low `bytes` bytes of `v` to `out`, lowest first.
inline void put_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

// Reads `bytes` bytes of `in` from `at` (the caller checked the size).
[[nodiscard]] inline std::uint64_t get_le(std::span<const std::byte> in, std::size_t at,
                                          int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<std::uint64_t>(in[at + static_cast<std::size_t>(i)]) << (8 * i);
  return v;
}

}  // namespace spindle::dcps

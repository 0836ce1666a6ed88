// keep_private_copy: a range of a shared mapping (a peer's row mapped in place, over shm or
// in the simulator) becomes private memory of this process holding what it holds now, so
// that a view it left keeps reading as it ended while the peer's memory is no longer mapped
// here.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace spindle::transport {

// [at, at + length): page-aligned and mapped. Only the pages resident now are copied (a
// memfd's others are holes and read as zeros, as the private memory does). Where the private
// memory cannot be had, the shared mapping stays: correct, only larger.
inline void keep_private_copy(std::byte* at, std::size_t length) {
  void* copy = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (copy == MAP_FAILED) return;
  auto* to = static_cast<std::byte*>(copy);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((length + page - 1) / page, 1);
  if (::mincore(at, length, resident.data()) != 0) std::fill(resident.begin(), resident.end(), 1);
  for (std::size_t i = 0; i < resident.size(); ++i)
    if ((resident[i] & 1) != 0)
      std::memcpy(to + i * page, at + i * page, std::min(page, length - i * page));
  if (::mremap(copy, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED)
    ::munmap(copy, length);
}

}  // namespace spindle::transport

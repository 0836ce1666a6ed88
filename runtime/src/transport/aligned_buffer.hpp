// AlignedBuffer: zero-filled, 64-byte aligned heap memory backing a region (tcp, rdma,
// simulator). Owned by the transport that created the region; movable, not copyable. A
// borrowed one (borrow()) only names memory another transport owns: the auto transport's
// tcp half applies its frames into the regions its shm half created.
// Buffers of kMapped bytes or more are mapped anonymously: the kernel hands out zero pages
// as they are first touched, so a large region (RDMC's buffer space, sized for the largest
// sample) costs memory only where it is used.
#pragma once

#include <sys/mman.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <utility>

namespace spindle::transport {

class AlignedBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;

  AlignedBuffer() = default;
  static constexpr std::size_t kMapped = std::size_t{1} << 20;

  explicit AlignedBuffer(std::size_t size) : size_(size), mapped_(size >= kMapped) {
    if (mapped_) {
      void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      data_ = static_cast<std::byte*>(p);
      return;
    }
    data_ = static_cast<std::byte*>(
        ::operator new (size == 0 ? 1 : size, std::align_val_t{kAlignment}));
    std::memset(data_, 0, size_);
  }
  // Names `memory` without owning it; the owner keeps it alive longer than this buffer.
  static AlignedBuffer borrow(std::span<std::byte> memory) noexcept {
    AlignedBuffer b;
    b.data_ = memory.data();
    b.size_ = memory.size();
    b.borrowed_ = true;
    return b;
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, false)),
        borrowed_(std::exchange(o.borrowed_, false)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      mapped_ = std::exchange(o.mapped_, false);
      borrowed_ = std::exchange(o.borrowed_, false);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  [[nodiscard]] std::span<std::byte> span() const noexcept { return {data_, size_}; }
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  void release() noexcept {
    if (data_ != nullptr && !borrowed_) {
      if (mapped_)
        (void)::munmap(data_, size_);
      else
        ::operator delete (data_, std::align_val_t{kAlignment});
    }
    data_ = nullptr;
  }
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  bool borrowed_ = false;
};

// True when [offset, offset+length) lies inside a region of `size` bytes (no overflow).
[[nodiscard]] constexpr bool in_bounds(std::uint64_t offset, std::uint64_t length,
                                       std::uint64_t size) noexcept {
  return offset <= size && length <= size - offset;
}

}  // namespace spindle::transport

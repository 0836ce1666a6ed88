// AlignedBuffer: zero-filled, 64-byte aligned heap memory backing a region (tcp, rdma,
// simulator). Owned by the transport that created the region; movable, not copyable.
#pragma once

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
  explicit AlignedBuffer(std::size_t size)
      : data_(static_cast<std::byte*>(
            ::operator new (size == 0 ? 1 : size, std::align_val_t{kAlignment}))),
        size_(size) {
    std::memset(data_, 0, size_);
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
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
    if (data_ != nullptr) ::operator delete (data_, std::align_val_t{kAlignment});
    data_ = nullptr;
  }
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// True when [offset, offset+length) lies inside a region of `size` bytes (no overflow).
[[nodiscard]] constexpr bool in_bounds(std::uint64_t offset, std::uint64_t length,
                                       std::uint64_t size) noexcept {
  return offset <= size && length <= size - offset;
}

}  // namespace spindle::transport

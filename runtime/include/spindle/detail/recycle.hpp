// Recycled memory for what a reader makes per sample, so that a steady stream of takes
// allocates nothing (issue 33: no per-sample allocation on the take path):
// - SlotPool<Key>: a fixed array of atomic slots, each holding one free block (or
//   object) or null. get() takes the first full slot with an exchange, put() fills the
//   first empty one with a compare-exchange; neither waits, and an exchange hands a block
//   to exactly one thread (no ABA: a block is never compared, only swapped). A full pool
//   gives back nothing; the caller frees.
// - PoolAllocator<T>: an allocator whose single-object allocations come from the pool of
//   blocks of T's size and alignment (std::allocate_shared: a decoded sample and its
//   count live in one block), falling back to operator new.
//
// The pools are program-wide, one per block size (types of one size share blocks), and
// live as long as the program: they are trivially destructible, so a sample released
// during static destruction still finds its pool, and what they hold at exit stays
// reachable. At most kSlots blocks are held per size.
//
// Threading: any thread, lock-free.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <new>

namespace spindle::detail {

template <class Key, std::size_t kSlots = 64>
class SlotPool {
 public:
  static SlotPool& instance() noexcept {
    static constinit SlotPool pool;
    return pool;
  }

  // A block put() before, or null.
  [[nodiscard]] void* get() noexcept {
    for (auto& s : slots_) {
      if (s.load(std::memory_order_relaxed) == nullptr) continue;
      if (void* p = s.exchange(nullptr, std::memory_order_acquire)) return p;
    }
    return nullptr;
  }
  // Keeps `p` for a later get(); false when every slot is full (then the caller frees it).
  [[nodiscard]] bool put(void* p) noexcept {
    for (auto& s : slots_) {
      void* empty = nullptr;
      if (s.load(std::memory_order_relaxed) == nullptr &&
          s.compare_exchange_strong(empty, p, std::memory_order_release, std::memory_order_relaxed))
        return true;
    }
    return false;
  }

 private:
  constexpr SlotPool() noexcept = default;
  std::array<std::atomic<void*>, kSlots> slots_{};
};

template <std::size_t kSize, std::size_t kAlign>
struct BlockSize {};

template <class T>
struct PoolAllocator {
  using value_type = T;

  PoolAllocator() noexcept = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] T* allocate(std::size_t n) {
    if (n == 1) {
      if (void* p = pool().get()) return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1 && pool().put(p)) return;
    ::operator delete (p, std::align_val_t{alignof(T)});
  }

  template <class U>
  friend bool operator==(const PoolAllocator&, const PoolAllocator<U>&) noexcept {
    return true;
  }

 private:
  static auto& pool() noexcept { return SlotPool<BlockSize<sizeof(T), alignof(T)>>::instance(); }
};

}  // namespace spindle::detail

// Doorbell: the futex-based wake-up source behind Transport::activity()/wait().
//
// The data lives in a plain struct so it can sit in process memory (tcp, rdma) or inside a
// shared-memory segment that other processes map (shm). Any thread or process may ring();
// any number may wait(). No lock; seq_cst on both counters is what prevents a lost
// wake-up: a waiter publishes `waiters` then re-reads `seq`, a ringer bumps `seq` then
// reads `waiters`, so at least one of them sees the other.
//
//   DoorbellData (8 bytes, 4-aligned)
//   +----------------+----------------+
//   | seq   (u32)    | waiters (u32)  |   seq: futex word, bumped by every ring()
//   +----------------+----------------+   waiters: threads inside wait()
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace spindle::transport {

struct DoorbellData {
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> waiters{0};
};
static_assert(sizeof(DoorbellData) == 8);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

class Doorbell {
 public:
  // `shared` selects a process-shared futex (the data is in a MAP_SHARED mapping).
  Doorbell(DoorbellData* data, bool shared) noexcept : data_(data), shared_(shared) {}

  [[nodiscard]] std::uint32_t ticket() const noexcept { return data_->seq.load(); }
  // Bumps the sequence; wakes sleepers only if there are any (one load on the hot path).
  void ring() noexcept;
  // Bumps the sequence and wakes every sleeper, quiet ones (wait_quiet) included: a local
  // event the protocol thread must see even while it stands by (Transport::notify).
  void ring_all() noexcept;
  // Sleeps until seq != ticket or the timeout passes (spurious returns are allowed).
  void wait(std::uint32_t ticket, std::chrono::nanoseconds timeout) noexcept;
  // Sleeps like wait() without counting itself a waiter: a ring wakes it only while
  // another count stands for it (arm()), or any other thread waits (Transport::wait_quiet).
  void wait_quiet(std::uint32_t ticket, std::chrono::nanoseconds timeout) noexcept;
  // Counts (true) or uncounts (false) one waiter on a quiet sleeper's behalf.
  void arm(bool armed) noexcept;

 private:
  DoorbellData* data_;
  bool shared_;
};

}  // namespace spindle::transport

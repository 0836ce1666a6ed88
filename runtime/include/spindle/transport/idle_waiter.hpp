// IdleWaiter: the "spin briefly, then sleep" loop of a polling thread (DESIGN §9).
//
// Owned by the one thread that polls (the predicate thread); not thread-safe. Call step()
// in a loop: it takes the transport's activity ticket, runs `work` (returns true when it
// did something), and once `work` has found nothing for `spin` it blocks on the transport's
// wake-up source for at most `max_sleep`. Because the ticket is taken before `work` looks
// at memory, a write landing in between makes wait() return at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

#include <spindle/transport/transport.hpp>

namespace spindle::transport {

struct IdlePolicy {
  std::chrono::nanoseconds spin{std::chrono::microseconds(200)};  // busy-poll before sleeping
  std::chrono::nanoseconds max_sleep{std::chrono::milliseconds(100)};
};

class IdleWaiter {
 public:
  IdleWaiter(Transport& transport, IdlePolicy policy) noexcept
      : transport_(&transport), policy_(policy) {}

  // Returns what `work` returned.
  template <class Work>
  bool step(Work&& work) {
    const std::uint64_t ticket = transport_->activity();
    transport_->receive();
    if (work()) {
      idle_since_.reset();
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!idle_since_) idle_since_ = now;
    if (now - *idle_since_ < policy_.spin) {
      std::this_thread::yield();
      return false;
    }
    ++sleeps_;
    transport_->wait(ticket, policy_.max_sleep);
    return false;
  }

  [[nodiscard]] std::uint64_t sleeps() const noexcept { return sleeps_; }

 private:
  Transport* transport_;
  IdlePolicy policy_;
  std::optional<std::chrono::steady_clock::time_point> idle_since_;
  std::uint64_t sleeps_ = 0;
};

}  // namespace spindle::transport

// EventQueue: the pending events of a transport (suspicions, block completions), filled by
// its I/O or monitor threads and drained by Transport::poll() (tcp, shm, rdma).
//
// poll() runs on every step of the predicate loop, almost always with nothing queued: the
// empty check is one atomic load, so an idle poll takes no lock (the mutex showed up as
// 5 % of the CPU time of a busy shm member). Any thread may push(); drain() and clear()
// may run concurrently with pushes.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::transport {

class EventQueue {
 public:
  void push(Event e) {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(e));
    size_.store(events_.size(), std::memory_order_release);
  }

  // Moves every queued event to the end of `out`; returns how many.
  std::size_t drain(std::vector<Event>& out) {
    if (size_.load(std::memory_order_acquire) == 0) return 0;
    std::lock_guard lock(mu_);
    const std::size_t n = events_.size();
    for (auto& e : events_)
      out.push_back(std::move(e));
    events_.clear();
    size_.store(0, std::memory_order_release);
    return n;
  }

  void clear() {
    std::lock_guard lock(mu_);
    events_.clear();
    size_.store(0, std::memory_order_release);
  }

 private:
  std::mutex mu_;
  std::vector<Event> events_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace spindle::transport

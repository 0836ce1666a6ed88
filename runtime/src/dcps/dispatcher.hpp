// spindle::dcps::Dispatcher: the one thread of a participant that runs application code —
// listeners — and timers (deadlines, liveliness leases, lifespan and autopurge expiry).
// The predicate thread never calls a listener: it posts a job here and goes on (DESIGN
// §9: a slow listener must not stall the protocol).
//
// Threading: post()/schedule()/cancel() from any thread; jobs run on the dispatcher's
// thread, in post order, timers when due. A job may post or schedule more. stop() (or the
// destructor) runs what is queued, then joins. Lock order: mu_ is a leaf, never held while
// a job runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace spindle::dcps {

class Dispatcher {
 public:
  using Clock = std::chrono::steady_clock;
  using Job = std::function<void()>;
  using TimerId = std::uint64_t;

  Dispatcher();
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void post(Job job);
  // Runs `job` at `when` (or at once if past); returns an id for cancel().
  TimerId schedule(Clock::time_point when, Job job);
  // True if the timer had not run yet.
  bool cancel(TimerId id);
  // Runs the queued jobs (not pending timers) and joins. Idempotent.
  void stop();
  // True on the dispatcher's own thread (a listener calling back into the runtime).
  [[nodiscard]] bool on_dispatcher_thread() const noexcept;

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::multimap<Clock::time_point, std::pair<TimerId, Job>> timers_;
  std::map<TimerId, Clock::time_point> timer_at_;
  TimerId next_timer_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace spindle::dcps

// spindle::dcps::Dispatcher: the one thread of a participant that runs application code —
// listeners — and timers (deadlines, liveliness leases, lifespan and autopurge expiry).
// The predicate thread never calls a listener: it posts a job here and goes on (DESIGN
// §9: a slow listener must not stall the protocol).
//
// Threading: post()/schedule()/cancel() from any thread; jobs run on the dispatcher's
// thread, in post order, timers when due. A job may post or schedule more. stop() (or the
// destructor) runs what is queued, then joins — or, when called from a job (the last
// reference to a participant dropped inside a listener), lets the thread finish on its
// own: the queue lives in a state the thread shares. Lock order: the state's mutex is a
// leaf, never held while a job runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
  // Waits until every job posted before the call has run (timers aside). Returns at once
  // on the dispatcher's own thread, or once stopping.
  void drain();
  // Runs the queued jobs (not pending timers) and joins. Idempotent.
  void stop();
  // True on the dispatcher's own thread (a listener calling back into the runtime).
  [[nodiscard]] bool on_dispatcher_thread() const noexcept;

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Job> jobs;
    std::multimap<Clock::time_point, std::pair<TimerId, Job>> timers;
    std::map<TimerId, Clock::time_point> timer_at;
    TimerId next_timer = 1;
    bool stopping = false;
  };
  static void run(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace spindle::dcps

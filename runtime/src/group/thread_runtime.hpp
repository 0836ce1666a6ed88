// The Runtime of a real process (runtime.hpp): the steady and system clocks, a listener
// and timer thread (ThreadExecutor), and the predicate loop on a thread of its own.
//
// Threading: ThreadExecutor's post()/schedule()/cancel() from any thread; jobs run on its
// thread, in post order, timers when due. A job may post or schedule more. stop() (or the
// destructor) runs what is queued, then joins — or, when called from a job (the last
// reference to a participant dropped inside a listener), lets the thread finish on its
// own: the queue lives in a state the thread shares. Lock order: the state's mutex is a
// leaf, never held while a job runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "group/runtime.hpp"

namespace spindle::group {

class ThreadExecutor final : public Executor {
 public:
  ThreadExecutor();
  ~ThreadExecutor() override;
  ThreadExecutor(const ThreadExecutor&) = delete;
  ThreadExecutor& operator=(const ThreadExecutor&) = delete;

  void post(Job job) override;
  TimerId schedule(TimePoint when, Job job) override;
  bool cancel(TimerId id) override;
  void drain() override;
  void stop() override;
  [[nodiscard]] bool on_executor_thread() const noexcept override;

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Job> jobs;
    std::multimap<TimePoint, std::pair<TimerId, Job>> timers;
    std::map<TimerId, TimePoint> timer_at;
    TimerId next_timer = 1;
    bool stopping = false;
  };
  static void run(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

// Runtime::wait_until on real threads: checks done() between short sleeps that grow from
// 50 us to 1 ms, until it holds (true) or `deadline` passes (false).
bool wait_in_slices(TimePoint deadline, const std::function<bool()>& done);

class ThreadRuntime final : public Runtime {
 public:
  ThreadRuntime() = default;
  ~ThreadRuntime() override;
  ThreadRuntime(const ThreadRuntime&) = delete;
  ThreadRuntime& operator=(const ThreadRuntime&) = delete;

  [[nodiscard]] TimePoint now() const noexcept override;
  [[nodiscard]] std::int64_t wall_ns() const noexcept override;
  [[nodiscard]] Executor& executor() noexcept override { return executor_; }
  [[nodiscard]] Executor& control() noexcept override { return control_; }
  void start(sst::PredicateLoop& loop) override;
  void stop() override;
  [[nodiscard]] bool on_protocol_thread() const noexcept override;
  bool wait_until(TimePoint deadline, const std::function<bool()>& done) override;
  [[nodiscard]] bool simulated() const noexcept override { return false; }
  bool drive(TimePoint deadline, std::chrono::nanoseconds spin,
             core::FunctionRef<bool()> done) override;
  bool try_run(const sst::PredicateLoop& loop, core::FunctionRef<void()> work) override;
  [[nodiscard]] ProcessState process_state(const Member& m) override { return watch_.state(m); }
  void watch(std::span<const Member> members) override { watch_.watch(members); }

 private:
  ProcessWatch watch_;
  ThreadExecutor executor_;
  ThreadExecutor control_;
  // Application threads read loop_ while stop() swaps it out: each counts itself in
  // callers_ before it loads the pointer, and stop() waits for callers_ to drain after it
  // swapped (both seq_cst: a caller that saw the old loop is counted when stop() looks).
  std::atomic<sst::PredicateLoop*> loop_{nullptr};
  std::atomic<std::uint32_t> callers_{0};
};

}  // namespace spindle::group

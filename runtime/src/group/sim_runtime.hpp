// The Runtime of the deterministic simulator (runtime.hpp): one participant's clocks,
// executor and protocol loop run as the actor of its node on a transport::sim::Network,
// so several whole participants — DCPS entities included — share one process and one
// seeded schedule, and a seed replays exactly.
//
//   clocks     virtual: now() is the network's time; wall_ns() is a fixed epoch plus it
//   protocol   each actor step runs one predicate-loop step, then the control jobs (view
//              changes), then the executor's jobs and due timers; a pending timer wakes
//              the node at its time
//   waits      wait_until() runs the network's scheduler until done() or the deadline
//
// Threading: single-threaded, like the Network: everything — the test's "application"
// calls included — runs on the thread that drives the scheduler. Jobs run between protocol
// steps, never inside one, as on real threads they run beside it.
#pragma once

#include <deque>
#include <map>

#include "transport/sim.hpp"

#include "group/runtime.hpp"

namespace spindle::group {

class SimExecutor final : public Executor {
 public:
  // `armed(when)` is told when the executor next has work: the earliest pending timer
  // whenever it may have changed, or the epoch for a job posted to run at once.
  explicit SimExecutor(std::function<void(TimePoint)> armed) : armed_(std::move(armed)) {}

  void post(Job job) override;
  TimerId schedule(TimePoint when, Job job) override;
  bool cancel(TimerId id) override;
  void drain() override;
  void stop() override;
  [[nodiscard]] bool on_executor_thread() const noexcept override { return running_; }

  // Runs the queued jobs and the timers due at `now`; true if it ran any.
  bool run_due(TimePoint now);
  [[nodiscard]] bool idle() const noexcept { return jobs_.empty(); }

 private:
  bool run_jobs();
  void run(Job& job);

  std::function<void(TimePoint)> armed_;
  std::deque<Job> jobs_;
  std::multimap<TimePoint, std::pair<TimerId, Job>> timers_;
  TimerId next_ = 1;
  bool running_ = false;
  bool stopping_ = false;
};

class SimRuntime final : public Runtime {
 public:
  // The node must exist on `net`; this runtime becomes its actor.
  SimRuntime(transport::sim::Network& net, transport::NodeId node);
  ~SimRuntime() override;
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  [[nodiscard]] TimePoint now() const noexcept override;
  [[nodiscard]] std::int64_t wall_ns() const noexcept override;
  [[nodiscard]] Executor& executor() noexcept override { return executor_; }
  [[nodiscard]] Executor& control() noexcept override { return control_; }
  void start(sst::PredicateLoop& loop) override;
  void stop() override;
  [[nodiscard]] bool on_protocol_thread() const noexcept override { return in_loop_; }
  bool wait_until(TimePoint deadline, const std::function<bool()>& done) override;
  [[nodiscard]] bool simulated() const noexcept override { return true; }
  // Same simulated host (Network::set_host): exited once crashed, else alive.
  [[nodiscard]] ProcessState process_state(const Member& m) override;
  void watch(std::span<const Member> members) override { (void)members; }

  // Wall-clock time of virtual time 0 (2026-01-01T00:00:00Z): fixed, so a seed replays.
  static constexpr std::int64_t kEpochNs = 1'767'225'600'000'000'000;

 private:
  bool step();
  void arm(TimePoint when);

  transport::sim::Network* net_;
  transport::NodeId node_;
  SimExecutor executor_;
  SimExecutor control_;
  sst::PredicateLoop* loop_ = nullptr;
  bool in_loop_ = false;
};

}  // namespace spindle::group

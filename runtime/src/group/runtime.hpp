// How the engine and the DCPS entities above it get time and threads (DESIGN §7, §9): one
// interface with two implementations, so that the whole stack — DCPS entities, engine,
// SST, SMC — runs either on real threads (thread_runtime.hpp) or inside the deterministic
// simulator in one process (sim_runtime.hpp), where virtual time and a seeded scheduler
// decide every step.
//
//   Runtime
//   ├── now(), wall_ns()       monotonic time for deadlines and timers; wall-clock time for
//   │                          source timestamps (virtual in the simulator)
//   ├── executor()             the listener and timer thread: application callbacks and
//   │                          timers never run on the protocol thread
//   ├── control()              where view changes run: off the protocol thread (which a
//   │                          view change stops) and never behind a slow listener
//   ├── start(loop) / stop()   the protocol (predicate) thread of one view's engine
//   ├── wait_until(t, done)    an application thread waiting for protocol progress
//   ├── drive(t, spin, done)   ... running the protocol's steps itself meanwhile
//   ├── try_run(loop, work)    a writer pushing its commit from its own thread
//   └── process_state(m)       what is certain about a member's process: on this host,
//                              whether it exited (liveness.hpp; simulated hosts in tests)
//
// Threading: a Runtime is owned by one participant's engine. now(), wall_ns(), executor()
// and the Executor's calls are safe from any thread; start/stop from the control thread;
// wait_until from application threads only (never from the protocol thread or a job).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>

#include "core/function_ref.hpp"
#include "group/liveness.hpp"

namespace spindle::sst {
class PredicateLoop;
}

namespace spindle::group {

using TimePoint = std::chrono::steady_clock::time_point;

// Runs application code (listeners) and timers in post order, one at a time, off the
// protocol thread: the protocol thread posts and goes on (DESIGN §9).
class Executor {
 public:
  using Job = std::function<void()>;
  using TimerId = std::uint64_t;

  virtual ~Executor() = default;
  virtual void post(Job job) = 0;
  // Runs `job` at `when` (or at once if past); returns an id for cancel(), 0 once stopping.
  virtual TimerId schedule(TimePoint when, Job job) = 0;
  // True if the timer had not run yet.
  virtual bool cancel(TimerId id) = 0;
  // Waits until every job posted before the call has run (timers aside). Returns at once
  // on the executor's own thread, or once stopping.
  virtual void drain() = 0;
  // Runs the queued jobs (not pending timers) and stops. Idempotent.
  virtual void stop() = 0;
  // True while running a job (a listener calling back into the runtime).
  [[nodiscard]] virtual bool on_executor_thread() const noexcept = 0;

 protected:
  Executor() = default;
  Executor(const Executor&) = default;
  Executor& operator=(const Executor&) = default;
};

// Runs one job of an executor: a listener that throws must not take the participant down,
// so the exception is reported on stderr and the executor goes on.
void run_job(const Executor::Job& job) noexcept;

class Runtime {
 public:
  virtual ~Runtime() = default;

  [[nodiscard]] virtual TimePoint now() const noexcept = 0;
  // Nanoseconds since the Unix epoch (dds::core::Time::now() on real threads).
  [[nodiscard]] virtual std::int64_t wall_ns() const noexcept = 0;
  [[nodiscard]] virtual Executor& executor() noexcept = 0;
  [[nodiscard]] virtual Executor& control() noexcept = 0;

  // Runs `loop` as the protocol thread until stop(). One loop at a time.
  virtual void start(sst::PredicateLoop& loop) = 0;
  virtual void stop() = 0;
  [[nodiscard]] virtual bool on_protocol_thread() const noexcept = 0;

  // Blocks the calling application thread until done() holds (true) or `deadline` passes
  // (false). Real threads sleep in short slices between checks; the simulator runs its
  // scheduler meanwhile, so waiting is what moves virtual time on (and when nothing is
  // left to run before the deadline, nothing will make done() true: false).
  virtual bool wait_until(TimePoint deadline, const std::function<bool()>& done) = 0;
  // True when time is virtual and waits drive the scheduler: blocking primitives of real
  // threads (a futex sleep) must not be used, wait_until must.
  [[nodiscard]] virtual bool simulated() const noexcept = 0;

  // An application thread that waits for the protocol runs its steps meanwhile
  // (sst::PredicateLoop::drive): until done() holds (true), or until `deadline`, `spin`
  // without work, another thread stepping or a stop (false: the caller sleeps its own way
  // and checks again). The default, and the simulator's: false at once.
  virtual bool drive(TimePoint /*deadline*/, std::chrono::nanoseconds /*spin*/,
                     core::FunctionRef<bool()> /*done*/) {
    return false;
  }
  // Runs `work` on the calling thread as the protocol thread of `loop` if that loop runs
  // and nobody steps it now (sst::PredicateLoop::try_run); false, not run, otherwise.
  virtual bool try_run(const sst::PredicateLoop& /*loop*/, core::FunctionRef<void()> /*work*/) {
    return false;
  }

  // What is known for certain about member `m`'s process (any thread; never blocks).
  [[nodiscard]] virtual ProcessState process_state(const Member& m) = 0;
  // The members of a view being installed: the runtime watches the processes of those on
  // its host (control thread).
  virtual void watch(std::span<const Member> members) = 0;

 protected:
  Runtime() = default;
  Runtime(const Runtime&) = default;
  Runtime& operator=(const Runtime&) = default;
};

}  // namespace spindle::group

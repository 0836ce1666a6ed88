// The predicate thread of one participant (DESIGN §9): each step polls transport events,
// runs heartbeats, evaluates every predicate in order, then issues the queued SST pushes
// outside any lock. It busy-polls while there is work and, after an idle spin without
// any, sleeps on the transport's wake-up source (Transport::activity()/wait()). The spin
// is knobs.idle_spin while work keeps coming back within it, and short once it stops doing
// so (AdaptiveSpin: spinning through the gaps of slow traffic burns CPU for nothing).
//
// Threading: start()/stop() from the control thread; everything else the loop touches is
// owned by the loop's thread while it runs. run_once() is for single-threaded drivers
// (the in-memory simulator's actors) and must not be mixed with start().
//
// Local wake-ups: before sleeping the loop marks itself dozing (Sst::set_dozing) and looks
// once more; an application commit() made while it dozes rings the transport's wake-up
// source (Sst::nudge), so a commit after an idle period is sent at once. The sleep is cut
// into slices (50 us doubling up to knobs.sleep_slice) that end when the next timer is due
// (Sst::tick_due_in: a heartbeat to send, a peer's silence to check).
//
// Driving: an application thread that waits for the protocol (a WaitSet) may run the
// steps itself, drive(), and a writer may push its commit from its own thread, try_run():
// a sample then crosses no thread between the application and the wire, nor between the
// wire and the waiting reader (docs/user-guide.md, "Performance"). One thread steps at a time;
// the token says which:
//
//   kFree    nobody steps. The loop thread sleeps on the transport, woken by any ring.
//   kLoop    the loop thread steps (and spins, then dozes, as above). A driver that wants
//            the token raises want_; the loop thread hands it over at its next iteration.
//   kDriven  an application thread steps. The loop thread stands by in a quiet sleep
//            (Transport::wait_quiet): peers' writes do not wake it, so they cost their
//            writers no wake-up call; a local notify() does. Releasing the token arms the
//            transport for it (arm_waiter), so the next ring after a driver left wakes it.
//
// A driver spins for at most `spin` without work, then releases the token and returns
// `idle`: the caller then sleeps its own way and the loop thread, woken by the next ring,
// delivers as before. Timers run in drivers' steps too. stop() waits for drivers to leave.
//
// Leases. An application that comes straight back (a ping-pong: take, write, wait again,
// within microseconds) would have each ring in that gap wake the armed loop thread, which
// then competes for the cores with the application's threads: on 2 cores that alone put
// the 64 B round trip's p99 at 30-50 us. So once the application came back within
// kComeBack after its last releases, a driver that got its sample (or a writer that
// pushed) frees the token without arming: what lands meanwhile waits for the application's
// next drive or write, or for the loop thread's stand-by to run out (kStandBy, 10 ms). An
// application that stays away longer than kComeBack (a slow consumer) loses its lease at
// its next take, so its acknowledgements go out through the loop thread again at once.
// Acknowledgements left to ride on the next push (Sst::push_status_lazy) wait the same way:
// the application's next write carries them (the reply of a ping-pong), its next drive's
// timers send them once due, and otherwise the stand-by's end does.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "core/function_ref.hpp"
#include "sst/adaptive_spin.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::sst {

struct LoopStats {
  std::uint64_t steps = 0;
  std::uint64_t busy_steps = 0;
  std::uint64_t sleeps = 0;
};

enum class Drive : std::uint8_t {
  done,     // done() held
  timeout,  // the deadline passed first
  idle,     // nothing came for `spin`: sleep; the loop thread took the protocol back
  busy,     // another thread steps and did not hand over
  stopped,  // the loop is stopping
};

class PredicateLoop {
 public:
  PredicateLoop(Sst& sst, Predicates& predicates) : sst_(&sst), predicates_(&predicates) {}
  ~PredicateLoop() { stop(); }
  PredicateLoop(const PredicateLoop&) = delete;
  PredicateLoop& operator=(const PredicateLoop&) = delete;

  // One evaluation step (with the timers); true if it did any work.
  bool run_once() { return step(true); }

  void start();
  void stop();
  // Drivers return `stopped` from now on (ThreadRuntime::stop(), before it waits for them).
  void stop_drivers() noexcept { stopping_.store(true); }
  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }
  // True when called from the loop's own thread, or from a thread stepping it (drive(),
  // try_run()): an upcall.
  [[nodiscard]] bool on_loop_thread() const noexcept {
    return std::this_thread::get_id() == thread_.get_id() || stepping_ == this;
  }

  // Application threads, while the loop runs (start()): the caller guarantees the loop
  // outlives the call (ThreadRuntime counts callers before stop() proceeds).
  // Runs steps on the calling thread until done() holds, `deadline` passes, or nothing
  // came for `spin` (see the class comment). done() is checked between steps.
  Drive drive(std::chrono::steady_clock::time_point deadline, std::chrono::nanoseconds spin,
              core::FunctionRef<bool()> done);
  // Runs `work` (which steps part of the protocol, e.g. one subgroup's send and the SST
  // flush) on the calling thread if nobody steps now; false, without running it, if the
  // loop thread or a driver does. `work` runs twice: once, and once more after the loop is
  // marked dozing (what it left is then the loop thread's, woken by the commit's nudge).
  bool try_run(core::FunctionRef<void()> work);
  [[nodiscard]] Sst& sst() noexcept { return *sst_; }
  // Read after stop() (or from the loop's own thread).
  [[nodiscard]] const LoopStats& stats() const noexcept { return stats_; }

 private:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kLoop = 1;
  static constexpr std::uint32_t kDriven = 2;

  void run(std::stop_token st);
  bool step(bool timers);
  // Takes the token for a driver: at once if free, else asking the loop thread to hand it
  // over (bounded). False if it did not come.
  bool take_for_driver();
  // Gives the driver's token back: marks the loop dozing, runs `last` once more (what
  // arrives after it rings the transport), frees the token and arms the transport for the
  // standing-by loop thread.
  template <class Last>
  void release_driver(Last&& last, bool may_lease);
  // Whoever took the token notes how long the application was away since a driver's
  // release (the lease rule, class comment).
  void note_take(bool by_loop) noexcept;
  // Frees a driver's token when a step threw (the exception goes on to the caller).
  void abandon() noexcept;
  void arm() noexcept;
  void disarm() noexcept;
  // The loop thread while a driver holds the token: sleeps quietly until armed or a while.
  void stand_by();

  Sst* sst_;
  Predicates* predicates_;
  LoopStats stats_;
  std::atomic<std::uint32_t> token_{kFree};
  std::atomic<std::uint32_t> want_{0};  // drivers waiting for the loop thread's hand-over
  std::atomic<bool> armed_{false};      // a transport waiter counted for the loop thread
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> driven_{0};  // token takes by drivers (the loop thread's view)
  std::uint64_t driver_steps_ = 0;        // whoever holds the token: timers every 16th step
  AdaptiveSpin driver_spin_;              // drivers' spins (the token holder's)
  AdaptiveSpin loop_spin_;                // the loop thread's
  // Leases: an application thread that got its sample (or pushed its write) and came back
  // for the token within kComeBack kQuickToLease times in a row leaves the token without
  // arming the transport for the loop thread. Token holder's.
  static constexpr std::chrono::nanoseconds kComeBack = std::chrono::microseconds(50);
  static constexpr std::uint32_t kQuickToLease = 2;
  std::chrono::steady_clock::time_point released_at_{};
  bool timed_ = false;  // released_at_ is a driver's release not yet followed by a take
  std::uint32_t quick_returns_ = 0;
  // A writer pushed from its own thread (try_run) since the last drive; and whether the
  // application wrote between its last two drives: a ping-pong, whose next write is likely
  // the reply. Only then do acknowledgements ride (Sst::set_ride) and a driver on lease keep
  // the transport's streams (release_driver): a reader that only takes, a stream's, is
  // better served by the transport's thread reading on the other core while it takes (64 B
  // to one subscriber over tcp: 88 MB/s kept against 94 handed back, medians of 8 runs).
  // Token holder's.
  bool wrote_ = false;
  bool replies_ = false;
  static thread_local const PredicateLoop* stepping_;
  std::jthread thread_;
};

}  // namespace spindle::sst

// The predicate thread (see predicate_loop.hpp).
#include "sst/predicate_loop.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "core/cpu_relax.hpp"

namespace spindle::sst {

bool PredicateLoop::step(bool timers) {
  ++stats_.steps;
  bool worked = sst_->poll_events();
  if (timers && sst_->tick()) worked = true;
  if (predicates_->evaluate() > 0) worked = true;
  if (timers && sst_->after_step()) worked = true;
  if (sst_->flush()) worked = true;
  if (worked) ++stats_.busy_steps;
  return worked;
}

void PredicateLoop::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token st) { run(std::move(st)); });
}

void PredicateLoop::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void PredicateLoop::run(std::stop_token st) {
  // Spin while work keeps coming; after knobs.idle_spin without any, sleep on
  // the transport's wake-up source. Peers' writes ring it, and so do local commits while
  // the loop dozes (Sst::nudge). The sleep slice still starts short and doubles up to
  // knobs.sleep_slice, and never past the next timer (heartbeats, suspicion timeouts).
  // The idle spin yields the core at its first step and then every kYieldEvery: on a small
  // machine the peer's predicate thread, which this one is waiting for, or the application
  // thread that fills the freed slots, may be queued behind it. The first yield comes at
  // once, not at the next timed step (up to kClockEvery idle steps later, while the
  // application waited: shm, 2 members all sending, 8 alternating runs, atomic/raw median
  // 0.60 against 0.56). Yielding on every round instead cost a third of a core in
  // sched_yield calls (perf, shm, 2 members all sending) and delayed the next look at memory
  // by a scheduler pass. But when a yield did run another thread (it took longer than
  // kOtherRan), the core is shared with work: the loop then yields at every timed idle check
  // instead of pausing 20 us on a core another member's predicate thread needs (perf, shm,
  // 3 members one sending: a receiver sharing the sender's CPU spent 29 % of its time in
  // the pause loop; atomic/raw median 0.41 -> 0.54 over 4 alternating runs, 4 one
  // 0.44 -> 0.54, 3 all 0.49 -> 0.51, 2 members unchanged).
  const auto& k = sst_->group().knobs;
  constexpr std::chrono::nanoseconds kFirstSlice = std::chrono::microseconds(50);
  constexpr std::chrono::nanoseconds kYieldEvery = std::chrono::microseconds(20);
  constexpr std::chrono::nanoseconds kOtherRan = std::chrono::microseconds(2);
  constexpr std::uint64_t kClockEvery = 16;
  auto& t = sst_->transport();
  std::optional<std::chrono::steady_clock::time_point> idle_since;
  std::chrono::steady_clock::time_point last_yield;
  std::chrono::nanoseconds slice = kFirstSlice;
  std::uint64_t sleeps = 0;
  std::uint64_t n = 0;
  bool worked = false;     // the last step did work: yield at the next idle one
  bool contended = false;  // the last yield ran another thread: yield at every idle check
  // Yields and notes whether another thread ran meanwhile (a yield nobody took returns in
  // well under a microsecond; a switch there and back alone takes longer).
  auto yield = [&](std::chrono::steady_clock::time_point before) {
    std::this_thread::yield();
    last_yield = std::chrono::steady_clock::now();
    contended = last_yield - before > kOtherRan;
  };
  while (!st.stop_requested()) {
    // Timers and the idle clock every kClockEvery steps: a clock read costs as much as an
    // idle step (22 % of the CPU time of busy shm members went to clock_gettime).
    const bool timers = ++n % kClockEvery == 0;
    if (step(timers)) {
      idle_since.reset();
      slice = kFirstSlice;
      worked = true;
      continue;
    }
    if (std::exchange(worked, false)) {
      yield(std::chrono::steady_clock::now());
      continue;
    }
    if (!timers) {
      core::cpu_relax();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!idle_since) idle_since = now;
    if (now - *idle_since < k.idle_spin) {
      if (contended || now - last_yield >= kYieldEvery) {
        yield(now);
      } else {
        core::cpu_relax();
      }
      continue;
    }
    // Doze: from here on a local commit rings the transport; look once more first, so a
    // commit published before the flag was seen is not slept through.
    // The wake-up ticket is taken only here, not on every step: peers bump it with every
    // write, and a loop reading it each round kept its cache line shared, so each of their
    // writes had to take it back (no throughput change measured). A ring after the ticket
    // ends the sleep; one before it is seen by this check.
    sst_->set_dozing(true);
    const std::uint64_t ticket = t.activity();
    if (run_once()) {
      sst_->set_dozing(false);
      idle_since.reset();
      slice = kFirstSlice;
      worked = true;
      continue;
    }
    ++sleeps;
    // No longer than until the next heartbeat or suspicion check is due: everything else
    // that needs the loop rings the transport (peers' writes, events, local commits).
    auto doze = std::min<std::chrono::nanoseconds>(slice, k.sleep_slice);
    if (const auto due = sst_->tick_due_in()) doze = std::min(doze, *due);
    t.wait(ticket, doze);
    sst_->set_dozing(false);
    slice = std::min<std::chrono::nanoseconds>(slice * 2, k.sleep_slice);
  }
  stats_.sleeps = sleeps;
}

}  // namespace spindle::sst
